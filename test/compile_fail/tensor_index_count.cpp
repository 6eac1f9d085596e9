// compile-fail case: tensor element access with the wrong number of indices.
// Must fail with: mha::tensor::operator(): the number of indices must equal the tensor's rank
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/tensor.hpp>

int main() {
#ifndef MHA_CF_OK
  mha::tensor<float, 2, 3> t{};
  t(1, 1, 1) = 1.0f;
#else
  mha::tensor<float, 2, 3> t{};
  t(1, 1) = 1.0f;
#endif
  return 0;
}
