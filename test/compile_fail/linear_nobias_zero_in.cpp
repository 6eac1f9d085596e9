// compile-fail case: linear<float, 0, 2, false> and its forward.
// Must fail with: mha::linear: InFeatures must be greater than 0
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/linear.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::linear<float, 0, 2, false> l{};
  const mha::tensor<float, 6, 3> x{};
  auto y = l(x);
  (void)y;
#else
  const mha::linear<float, 3, 2, false> l{};
  const mha::tensor<float, 6, 3> x{};
  auto y = l(x);
  (void)y;
#endif
  return 0;
}
