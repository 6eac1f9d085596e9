// compile-fail case: forward(x, n, out, cache, ws): cache of another batch.
// Must fail with: mha::fused_multi_head_attention::forward: the KV cache must be kv_cache<B> for the input's batch B
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/fused_multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  using model = mha::fused_multi_head_attention<float, 3, 4, 6, 2>;
  const model m{};
  mha::tensor<float, 2, 4, 4> out{};
  model::kv_cache<1> cache{};
  model::workspace<2, 4> ws{};
  const auto s = m.forward(mha::tensor<float, 2, 4, 3>{}, 1, out, cache, ws);
  (void)s;
#else
  using model = mha::fused_multi_head_attention<float, 3, 4, 6, 2>;
  const model m{};
  mha::tensor<float, 2, 4, 4> out{};
  model::kv_cache<2> cache{};
  model::workspace<2, 4> ws{};
  const auto s = m.forward(mha::tensor<float, 2, 4, 3>{}, 1, out, cache, ws);
  (void)s;
#endif
  return 0;
}
