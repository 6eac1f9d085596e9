// compile-fail case: causal_attention larger than MHA_MAX_INLINE_BYTES.
// Must fail with: mha::causal_attention: sizeof exceeds MHA_MAX_INLINE_BYTES
// With -DMHA_CF_OK (one token changed) it must compile.
#ifndef MHA_CF_OK
#define MHA_MAX_INLINE_BYTES 3072
#else
#define MHA_MAX_INLINE_BYTES 4096
#endif
#include <cstddef>

#include <mha/causal_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  mha::causal_attention<float, 16, 16, 8> m{};  // 3076 bytes
  (void)m;
#else
  mha::causal_attention<float, 16, 16, 8> m{};  // 3076 bytes
  (void)m;
#endif
  return 0;
}
