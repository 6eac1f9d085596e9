// compile-fail case: cross-attention on a causal module.
// Must fail with: mha::multi_head_attention::forward(query, key, value, ...): cross-attention needs Mask = attention_mask::none
// With -DMHA_CF_OK (one token changed) it must compile.
#include <mha/multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  using model = mha::multi_head_attention<float, 4, 4, 8, 2, false, mha::attention_mask::causal>;
#else
  using model = mha::multi_head_attention<float, 4, 4, 8, 2, false, mha::attention_mask::none>;
#endif
  const model m{};
  const mha::tensor<float, 1, 3, 4> query{};
  const mha::tensor<float, 1, 6, 4> memory{};
  mha::tensor<float, 1, 3, 4> out{};
  model::cross_workspace<1, 3, 6> ws{};
  m.forward(query, memory, memory, out, ws);
  return 0;
}
