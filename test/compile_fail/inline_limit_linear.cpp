// compile-fail case: linear larger than MHA_MAX_INLINE_BYTES (its weight fits).
// Must fail with: mha::linear: sizeof exceeds MHA_MAX_INLINE_BYTES
// With -DMHA_CF_OK (one token changed) it must compile.
#ifndef MHA_CF_OK
#define MHA_MAX_INLINE_BYTES 4096
#else
#define MHA_MAX_INLINE_BYTES 4096
#endif
#include <cstddef>

#include <mha/linear.hpp>

int main() {
#ifndef MHA_CF_OK
  mha::linear<float, 32, 32> l{};  // 4096 + 128 bytes
  (void)l;
#else
  mha::linear<float, 32, 32, false> l{};  // 4096 bytes
  (void)l;
#endif
  return 0;
}
