// compile-fail case: forward(x): stack workspace over MHA_STACK_WORKSPACE_LIMIT.
// Must fail with: mha::causal_attention::forward: this call's stack use (workspace<B, N>::stack_bytes
// With -DMHA_CF_OK (one token changed) it must compile.
#ifndef MHA_CF_OK
#define MHA_STACK_WORKSPACE_LIMIT 64  // the workspace<1, 6> is 84 floats = 336 bytes
#else
#define MHA_STACK_WORKSPACE_LIMIT 8192  // the workspace<1, 6> is 84 floats = 336 bytes
#endif
#include <cstddef>

#include <mha/causal_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::causal_attention<float, 3, 2, 6> m{};
  const mha::tensor<float, 6, 3> x{};
  auto y = m(x);
  (void)y;
#else
  const mha::causal_attention<float, 3, 2, 6> m{};
  const mha::tensor<float, 6, 3> x{};
  auto y = m(x);
  (void)y;
#endif
  return 0;
}
