// compile-fail case: fused_multi_head_attention larger than MHA_MAX_INLINE_BYTES.
// Must fail with: mha::fused_multi_head_attention: sizeof exceeds MHA_MAX_INLINE_BYTES
// With -DMHA_CF_OK (one token changed) it must compile.
#ifndef MHA_CF_OK
#define MHA_MAX_INLINE_BYTES 4096
#else
#define MHA_MAX_INLINE_BYTES 8192
#endif
#include <cstddef>

#include <mha/fused_multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  mha::fused_multi_head_attention<float, 16, 16, 8, 2> m{};  // 4164 bytes
  (void)m;
#else
  mha::fused_multi_head_attention<float, 16, 16, 8, 2> m{};  // 4164 bytes
  (void)m;
#endif
  return 0;
}
