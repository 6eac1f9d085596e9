// compile-fail case: multi_head_attention larger than MHA_MAX_INLINE_BYTES (each of its layers fits).
// Must fail with: mha::multi_head_attention: sizeof exceeds MHA_MAX_INLINE_BYTES
// With -DMHA_CF_OK (one token changed) it must compile.
#ifndef MHA_CF_OK
#define MHA_MAX_INLINE_BYTES 4096
#else
#define MHA_MAX_INLINE_BYTES 8192
#endif
#include <cstddef>

#include <mha/multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  mha::multi_head_attention<float, 16, 16, 8, 2> m{};  // 4164 bytes
  (void)m;
#else
  mha::multi_head_attention<float, 16, 16, 8, 2> m{};  // 4164 bytes
  (void)m;
#endif
  return 0;
}
