// compile-fail case: mha::rope<0> is RoPE with base 0 (not "no RoPE": that is mha::no_rope).
// Must fail with: mha::grouped_query_attention: RoPE's ThetaBase must be greater than 1
// With -DMHA_CF_OK (one token changed) it must compile.
#include <mha/grouped_query_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  mha::grouped_query_attention<float, 8, 16, 6, 4, 2, false, mha::rope<0>> m{}; (void)m;
#else
  mha::grouped_query_attention<float, 8, 16, 6, 4, 2, false, mha::rope<2>> m{}; (void)m;
#endif
  return 0;
}
