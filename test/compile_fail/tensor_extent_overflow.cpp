// compile-fail case: tensor whose size in bytes overflows std::size_t.
// Must fail with: mha::tensor: the size in bytes (the product of the extents times sizeof(T)) exceeds the largest object size, PTRDIFF_MAX
// With -DMHA_CF_OK (one extent changed) it must compile.
#include <cstddef>

#include <mha/tensor.hpp>

int main() {
#ifndef MHA_CF_OK
  using huge = mha::tensor<float, (std::size_t{1} << 62), 4, 4>;  // 2^66 elements
#else
  using huge = mha::tensor<float, (std::size_t{1} << 20), 4, 4>;
#endif
  static_assert(huge::rank == 3);
  return 0;
}
