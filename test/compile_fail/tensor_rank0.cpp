// compile-fail case: tensor with no extents.
// Must fail with: mha::tensor: rank must be at least 1
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/tensor.hpp>

int main() {
#ifndef MHA_CF_OK
  mha::tensor<float> t{};
  (void)t;
#else
  mha::tensor<float, 1> t{};
  (void)t;
#endif
  return 0;
}
