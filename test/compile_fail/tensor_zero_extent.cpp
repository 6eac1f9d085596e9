// compile-fail case: tensor with a zero extent.
// Must fail with: mha::tensor: every extent must be greater than 0
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/tensor.hpp>

int main() {
#ifndef MHA_CF_OK
  mha::tensor<float, 2, 0> t{};
  (void)t;
#else
  mha::tensor<float, 2, 1> t{};
  (void)t;
#endif
  return 0;
}
