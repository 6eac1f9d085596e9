// compile-fail case: tensor_view whose size in bytes overflows std::size_t
// (the element count would wrap to 0).
// Must fail with: mha::tensor_view: the size in bytes (the product of the extents times sizeof(T)) exceeds the largest object size, PTRDIFF_MAX
// With -DMHA_CF_OK (one extent changed) it must compile.
#include <cstddef>

#include <mha/tensor_view.hpp>

int main() {
#ifndef MHA_CF_OK
  using huge = mha::tensor_view<const float, (std::size_t{1} << 62), 4, 4>;
#else
  using huge = mha::tensor_view<const float, (std::size_t{1} << 20), 4, 4>;
#endif
  static_assert(huge::rank == 3);
  return 0;
}
