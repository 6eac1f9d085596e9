// compile-fail case: linear forward: input element type != T.
// Must fail with: mha::linear::forward: input element type must equal the layer's T
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/linear.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::linear<float, 3, 2> l{};
  const mha::tensor<double, 6, 3> x{};
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
