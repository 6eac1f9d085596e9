// compile-fail case: a tensor_view of int (the kernels take float or double).
// Must fail with: mha::tensor_view: T must be float or double, or const float or const double
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/tensor_view.hpp>

int main() {
#ifndef MHA_CF_OK
  int buf[6] = {};
  const mha::tensor_view<int, 2, 3> v{buf};
#else
  float buf[6] = {};
  const mha::tensor_view<float, 2, 3> v{buf};
#endif
  return static_cast<int>(v(1, 2));
}
