// compile-fail case: a KV-cache forward on a non-causal mha::dynamic module.
// Must fail with: mha::dynamic: forward(x, out, cache, ws) needs a causal module
// With -DMHA_CF_OK (one token changed) it must compile.
#include <mha/dynamic.hpp>

int main() {
#ifndef MHA_CF_OK
  using model = mha::dynamic::grouped_query_attention<float, mha::attention_mask::none>;
#else
  using model = mha::dynamic::grouped_query_attention<float, mha::attention_mask::causal>;
#endif
  const model m(4, 8, 6, 4, 2);
  mha::dynamic::kv_cache<float> cache(m, 1);
  mha::dynamic::workspace<float> ws;
  mha::dynamic::tensor<float> x({1, 2, 4});
  mha::dynamic::tensor<float> out({1, 2, 8});
  m.forward(x, out, cache, ws);
  return 0;
}
