// compile-fail case: a tensor whose size in bytes fits std::size_t but not an
// object (2^63 bytes, past PTRDIFF_MAX). Found by a breaker trial: the
// library's check compared with SIZE_MAX, so the compilers' own errors came
// instead ("exceeds maximum object size", "array is too large") and a second
// one after them.
// Must fail with: mha::tensor: the size in bytes (the product of the extents times sizeof(T)) exceeds the largest object size, PTRDIFF_MAX
// With -DMHA_CF_OK (one extent changed) it must compile.
#include <cstddef>

#include <mha/tensor.hpp>

int main() {
#ifndef MHA_CF_OK
  using huge = mha::tensor<float, (std::size_t{1} << 61)>;  // 2^63 bytes
#else
  using huge = mha::tensor<float, (std::size_t{1} << 20)>;
#endif
  return sizeof(huge) > 0 ? 0 : 1;
}
