// compile-fail case: loading (aggregate-initialising) a module with a weight of the wrong shape.
// Must fail with: mha::tensor: cannot initialise a tensor from a tensor of a different shape or element type
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/causal_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::tensor<float, 3, 2> w{};
  const mha::causal_attention<float, 3, 2, 6> m{{w}, {}, {}};
  (void)m;
#else
  const mha::tensor<float, 2, 3> w{};
  const mha::causal_attention<float, 3, 2, 6> m{{w}, {}, {}};
  (void)m;
#endif
  return 0;
}
