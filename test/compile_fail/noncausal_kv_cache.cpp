// compile-fail case: a KV-cache forward on a non-causal module (a cache holds
// only earlier tokens; attention_mask::none attends to later ones too).
// Must fail with: mha::multi_head_attention::forward: a KV cache needs a causal module
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  using model = mha::multi_head_attention<float, 3, 4, 6, 2, false, mha::attention_mask::none>;
#else
  using model = mha::multi_head_attention<float, 3, 4, 6, 2, false, mha::attention_mask::causal>;
#endif
  const model m{};
  const mha::tensor<float, 1, 4, 3> x{};
  mha::tensor<float, 1, 4, 4> out{};
  model::kv_cache<1> cache{};
  model::workspace<1, 4> ws{};
  const auto s = m.forward(x, 1, out, cache, ws);
  (void)s;
  return 0;
}
