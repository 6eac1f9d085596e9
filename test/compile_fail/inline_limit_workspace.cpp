// compile-fail case: forward(x) whose stack workspace is larger than MHA_MAX_INLINE_BYTES.
// Must fail with: mha::workspace: sizeof exceeds MHA_MAX_INLINE_BYTES
// With -DMHA_CF_OK (one token changed) it must compile.
#ifndef MHA_CF_OK
#define MHA_MAX_INLINE_BYTES 128
#else
#define MHA_MAX_INLINE_BYTES 512
#endif
#include <cstddef>

#include <mha/causal_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::causal_attention<float, 3, 2, 6> m{};
  auto y = m(mha::tensor<float, 6, 3>{});  // workspace<1, 6>: 336 bytes
  (void)y;
#else
  const mha::causal_attention<float, 3, 2, 6> m{};
  auto y = m(mha::tensor<float, 6, 3>{});  // workspace<1, 6>: 336 bytes
  (void)y;
#endif
  return 0;
}
