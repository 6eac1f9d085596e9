// compile-fail case: linear<long double, 3, 2, false> (a T the kernels do not have) and its forward.
// Must fail with: mha::linear: T must be float or double
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/linear.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::linear<long double, 3, 2, false> l{};
  const mha::tensor<long double, 6, 3> x{};
  auto y = l(x);
  (void)y;
#else
  const mha::linear<double, 3, 2, false> l{};
  const mha::tensor<double, 6, 3> x{};
  auto y = l(x);
  (void)y;
#endif
  return 0;
}
