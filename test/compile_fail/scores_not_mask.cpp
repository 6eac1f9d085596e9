// compile-fail case: a bool where the module takes its score options (an
// mha::attention_mask or an mha::attention_scores): `false` after QkvBias is
// a slip of a second bias flag, not a mask.
// Must fail with: mha::multi_head_attention: Scores must be an mha::attention_mask or an mha::attention_scores
// With -DMHA_CF_OK (one token changed) it must compile.
#include <mha/multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::multi_head_attention<float, 4, 4, 8, 2, false, false> m{};
#else
  const mha::multi_head_attention<float, 4, 4, 8, 2, false, mha::attention_scores{}> m{};
#endif
  (void)m;
  return 0;
}
