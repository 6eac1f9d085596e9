// compile-fail case: cross-attention on a causal mha::dynamic module.
// Must fail with: mha::dynamic: forward(query, key, value, ...): cross-attention needs Mask = attention_mask::none
// With -DMHA_CF_OK (one token changed) it must compile.
#include <mha/dynamic.hpp>

int main() {
#ifndef MHA_CF_OK
  using model = mha::dynamic::multi_head_attention<float, mha::attention_mask::causal>;
#else
  using model = mha::dynamic::multi_head_attention<float, mha::attention_mask::none>;
#endif
  const model m(4, 4, 8, 2);
  mha::dynamic::tensor<float> q({1, 3, 4}), kv({1, 6, 4});
  const auto y = m.forward(q, kv, kv);
  (void)y;
  return 0;
}
