// compile-fail case: loading (aggregate-initialising) a module with a linear layer of the wrong shape.
// Must fail with: mha::linear: cannot initialise a linear layer from one of a different element type, shape or bias setting
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/causal_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::linear<float, 3, 2, true> w{};  // the model has no qkv bias
#else
  const mha::linear<float, 3, 2, false> w{};
#endif
  const mha::causal_attention<float, 3, 2, 6> m{w, w, w};
  (void)m;
  return 0;
}
