// compile-fail case: attention sinks on a causal_attention (sinks are learned
// parameters, score_params, which only the multi-head and grouped-query
// modules hold).
// Must fail with: mha::causal_attention: score options with learned parameters need multi_head_attention, fused_multi_head_attention or grouped_query_attention
// With -DMHA_CF_OK (one token changed) it must compile.
#include <mha/causal_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::causal_attention<float, 3, 2, 6, false, mha::attention_scores{.sinks = true}> m{};
#else
  const mha::causal_attention<float, 3, 2, 6, false, mha::attention_scores{.softcap = 5}> m{};
#endif
  (void)m;
  return 0;
}
