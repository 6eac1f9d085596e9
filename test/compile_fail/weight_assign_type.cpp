// compile-fail case: assigning a double weight to a float module.
// Must fail with: mha::tensor: cannot assign a tensor of a different shape or element type
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/causal_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  mha::causal_attention<float, 3, 2, 6> m{};
  const mha::tensor<double, 2, 3> w{};
  m.w_key.weight = w;
#else
  mha::causal_attention<float, 3, 2, 6> m{};
  const mha::tensor<float, 2, 3> w{};
  m.w_key.weight = w;
#endif
  return 0;
}
