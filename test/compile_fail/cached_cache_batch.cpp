// compile-fail case: forward(x, n, out, cache, ws): a kv_cache of another batch size.
// Must fail with: mha::causal_attention::forward: the KV cache must be kv_cache<B> for the input's batch B
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>
#include <cstdint>

#include <mha/causal_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  using model = mha::causal_attention<float, 3, 2, 6>;
  const model m{};
  const mha::tensor<float, 2, 4, 3> x{};
  mha::tensor<float, 2, 4, 2> out{};
  model::kv_cache<1> cache{};
  model::workspace<2, 4> ws{};
  const auto s = m.forward(x, 1, out, cache, ws);
  (void)s;
#else
  using model = mha::causal_attention<float, 3, 2, 6>;
  const model m{};
  const mha::tensor<float, 2, 4, 3> x{};
  mha::tensor<float, 2, 4, 2> out{};
  model::kv_cache<2> cache{};
  model::workspace<2, 4> ws{};
  const auto s = m.forward(x, 1, out, cache, ws);
  (void)s;
#endif
  return 0;
}
