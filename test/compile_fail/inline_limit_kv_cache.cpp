// compile-fail case: kv_cache larger than MHA_MAX_INLINE_BYTES.
// Must fail with: mha::kv_cache: sizeof exceeds MHA_MAX_INLINE_BYTES
// With -DMHA_CF_OK (one token changed) it must compile.
#ifndef MHA_CF_OK
#define MHA_MAX_INLINE_BYTES 1024
#else
#define MHA_MAX_INLINE_BYTES 2048
#endif
#include <cstddef>

#include <mha/causal_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  mha::causal_attention<float, 3, 2, 64>::kv_cache<1> cache{};  // 1032 bytes
  (void)cache;
#else
  mha::causal_attention<float, 3, 2, 64>::kv_cache<1> cache{};  // 1032 bytes
  (void)cache;
#endif
  return 0;
}
