// compile-fail case: multi_head_attention_wrapper larger than MHA_MAX_INLINE_BYTES (each head fits).
// Must fail with: mha::multi_head_attention_wrapper: sizeof exceeds MHA_MAX_INLINE_BYTES
// With -DMHA_CF_OK (one token changed) it must compile.
#ifndef MHA_CF_OK
#define MHA_MAX_INLINE_BYTES 4096
#else
#define MHA_MAX_INLINE_BYTES 4096
#endif
#include <cstddef>

#include <mha/multi_head_attention_wrapper.hpp>

int main() {
#ifndef MHA_CF_OK
  mha::multi_head_attention_wrapper<float, 16, 16, 8, 2> m{};  // 2 heads of 3076 bytes
  (void)m;
#else
  mha::multi_head_attention_wrapper<float, 16, 16, 8, 1> m{};  // 1 head of 3076 bytes
  (void)m;
#endif
  return 0;
}
