// compile-fail case: linear forward(x, out) into an output of the wrong shape.
// Must fail with: mha::linear::forward: output must have the input's shape with last extent OutFeatures
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/linear.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::linear<float, 3, 2> l{};
  const mha::tensor<float, 4, 3> x{};
  mha::tensor<float, 4, 3> y{};
  l.forward(x, y);
#else
  const mha::linear<float, 3, 2> l{};
  const mha::tensor<float, 4, 3> x{};
  mha::tensor<float, 4, 2> y{};
  l.forward(x, y);
#endif
  return 0;
}
