// compile-fail case: a causal module with its own kdim (only cross-attention,
// which needs attention_mask::none, reads key rows of KDim features).
// Must fail with: mha::multi_head_attention: KDim and VDim other than DIn need Mask = attention_mask::none
// With -DMHA_CF_OK (one token changed) it must compile.
#include <mha/multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::multi_head_attention<float, 4, 4, 8, 2, false, mha::attention_mask::causal, 5, 4> m{};
#else
  const mha::multi_head_attention<float, 4, 4, 8, 2, false, mha::attention_mask::none, 5, 4> m{};
#endif
  (void)m;
  return 0;
}
