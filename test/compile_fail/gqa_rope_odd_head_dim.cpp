// compile-fail case: RoPE rotates pairs of features: head_dim 3 is odd.
// Must fail with: mha::grouped_query_attention: RoPE needs an even head_dim
// With -DMHA_CF_OK (one token changed) it must compile.
#include <mha/grouped_query_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  mha::grouped_query_attention<float, 8, 12, 6, 4, 2, false, mha::rope<10000>> m{}; (void)m;
#else
  mha::grouped_query_attention<float, 8, 16, 6, 4, 2, false, mha::rope<10000>> m{}; (void)m;
#endif
  return 0;
}
