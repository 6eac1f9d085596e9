// compile-fail case: linear forward: input last extent != InFeatures.
// Must fail with: mha::linear::forward: input last extent must equal InFeatures
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/linear.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::linear<float, 3, 2> l{};
  const mha::tensor<float, 6, 4> x{};
  auto y = l(x);
  (void)y;
#else
  const mha::linear<float, 3, 2> l{};
  const mha::tensor<float, 6, 3> x{};
  auto y = l(x);
  (void)y;
#endif
  return 0;
}
