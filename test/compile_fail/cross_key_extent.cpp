// compile-fail case: a key input whose rows are not KDim wide.
// Must fail with: mha::multi_head_attention::forward(query, key, value, ...): key last extent must equal KDim
// With -DMHA_CF_OK (one token changed) it must compile.
#include <mha/multi_head_attention.hpp>

int main() {
  using model = mha::multi_head_attention<float, 4, 4, 8, 2, true, mha::attention_mask::none, 5, 7>;
  const model m{};
  const mha::tensor<float, 2, 3, 4> query{};
#ifndef MHA_CF_OK
  const mha::tensor<float, 2, 6, 4> key{};
#else
  const mha::tensor<float, 2, 6, 5> key{};
#endif
  const mha::tensor<float, 2, 6, 7> value{};
  mha::tensor<float, 2, 3, 4> out{};
  model::cross_workspace<2, 3, 6> ws{};
  m.forward(query, key, value, out, ws);
  return 0;
}
