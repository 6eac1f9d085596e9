// compile-fail case: mha::dynamic::linear<long double> and its forward.
// Must fail with: mha::dynamic::linear: T must be float or double
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/dynamic/linear.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::dynamic::linear<long double> l(3, 2, false);
  const mha::dynamic::tensor<long double> x({6, 3});
  auto y = l(x);
  (void)y;
#else
  const mha::dynamic::linear<double> l(3, 2, false);
  const mha::dynamic::tensor<double> x({6, 3});
  auto y = l(x);
  (void)y;
#endif
  return 0;
}
