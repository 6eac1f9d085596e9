// compile-fail case: tensor larger than MHA_MAX_INLINE_BYTES.
// Must fail with: mha::tensor: sizeof exceeds MHA_MAX_INLINE_BYTES
// With -DMHA_CF_OK (one token changed) it must compile.
#ifndef MHA_CF_OK
#define MHA_MAX_INLINE_BYTES 4096
#else
#define MHA_MAX_INLINE_BYTES 4096
#endif
#include <cstddef>

#include <mha/tensor.hpp>

int main() {
#ifndef MHA_CF_OK
  mha::tensor<float, 2, 1024> t{};  // 8192 bytes
  (void)t;
#else
  mha::tensor<float, 1, 1024> t{};  // 4096 bytes
  (void)t;
#endif
  return 0;
}
