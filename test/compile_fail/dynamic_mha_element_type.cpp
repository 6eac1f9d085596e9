// compile-fail case: mha::dynamic::multi_head_attention<long double> and its forward (the
// module, not its linear layers, is named).
// Must fail with: mha::dynamic::multi_head_attention: T must be float or double
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/dynamic.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::dynamic::multi_head_attention<long double> m(3, 4, 6, 2);
  const mha::dynamic::tensor<long double> x({6, 3});
  auto y = m(x);
  (void)y;
#else
  const mha::dynamic::multi_head_attention<double> m(3, 4, 6, 2);
  const mha::dynamic::tensor<double> x({6, 3});
  auto y = m(x);
  (void)y;
#endif
  return 0;
}
