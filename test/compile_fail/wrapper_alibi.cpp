// compile-fail case: ALiBi on the wrapper (its heads are separate
// causal_attention modules: a head alone would take the slope of one head,
// the wrapper's forward that of head h of NumHeads).
// Must fail with: mha::multi_head_attention_wrapper: alibi's slopes depend on the head count
// With -DMHA_CF_OK (one token changed) it must compile.
#include <mha/multi_head_attention_wrapper.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::multi_head_attention_wrapper<float, 3, 2, 6, 2, false,
                                          mha::attention_scores{.alibi = true}> m{};
#else
  const mha::multi_head_attention_wrapper<float, 3, 2, 6, 2, false,
                                          mha::attention_scores{.softcap = 5}> m{};
#endif
  (void)m;
  return 0;
}
