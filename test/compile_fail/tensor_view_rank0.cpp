// compile-fail case: tensor_view without extents (rank 0).
// Must fail with: mha::tensor_view: rank must be at least 1
// (once: g++ used to report the owning tensor's rank error as well)
// With -DMHA_CF_OK (one extent added) it must compile.
#include <mha/tensor_view.hpp>

int main() {
  float b[4]{};
#ifndef MHA_CF_OK
  mha::tensor_view<float> v{b};
#else
  mha::tensor_view<float, 4> v{b};
#endif
  (void)v;
  return 0;
}
