// compile-fail case: forward: input rank 1.
// Must fail with: mha::causal_attention::forward: input must have rank 3
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/causal_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::causal_attention<float, 3, 2, 6> m{};
  const mha::tensor<float, 3> x{};
  auto y = m.forward(x);
  (void)y;
#else
  const mha::causal_attention<float, 3, 2, 6> m{};
  const mha::tensor<float, 1, 3> x{};
  auto y = m.forward(x);
  (void)y;
#endif
  return 0;
}
