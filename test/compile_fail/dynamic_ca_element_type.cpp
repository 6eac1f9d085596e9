// compile-fail case: mha::dynamic::causal_attention<long double> and its forward (the module,
// not its linear layers, is named).
// Must fail with: mha::dynamic::causal_attention: T must be float or double
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/dynamic.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::dynamic::causal_attention<long double> m(3, 2, 6);
  const mha::dynamic::tensor<long double> x({6, 3});
#else
  const mha::dynamic::causal_attention<double> m(3, 2, 6);
  const mha::dynamic::tensor<double> x({6, 3});
#endif
  auto y = m(x);
  (void)y;
  return 0;
}
