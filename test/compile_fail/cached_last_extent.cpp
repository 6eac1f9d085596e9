// compile-fail case: forward(x, n, out, cache, ws) with the wrong d_in.
// Must fail with: mha::fused_multi_head_attention::forward: input last extent must equal DIn
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>
#include <cstdint>

#include <mha/fused_multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  using model = mha::fused_multi_head_attention<float, 3, 4, 8, 2>;
  const model m{};
  const mha::tensor<float, 1, 6, 5> x{};
  mha::tensor<float, 1, 6, 4> out{};
  model::kv_cache<1> cache{};
  model::workspace<1, 6> ws{};
  const auto s = m.forward(x, 2, out, cache, ws);
  (void)s;
#else
  using model = mha::fused_multi_head_attention<float, 3, 4, 8, 2>;
  const model m{};
  const mha::tensor<float, 1, 6, 3> x{};
  mha::tensor<float, 1, 6, 4> out{};
  model::kv_cache<1> cache{};
  model::workspace<1, 6> ws{};
  const auto s = m.forward(x, 2, out, cache, ws);
  (void)s;
#endif
  return 0;
}
