// compile-fail case: forward_training: input element type != T.
// Must fail with: mha::causal_attention::forward: input element type must equal the module's T
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/causal_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::causal_attention<double, 3, 2, 6> m{};
  const mha::tensor<float, 6, 3> x{};
  auto y = m.forward_training(x, 42);
  (void)y;
#else
  const mha::causal_attention<double, 3, 2, 6> m{};
  const mha::tensor<double, 6, 3> x{};
  auto y = m.forward_training(x, 42);
  (void)y;
#endif
  return 0;
}
