// compile-fail case: forward_training with a KV cache (no such mode).
// Must fail with: mha::fused_multi_head_attention::forward_training: the KV-cache forward is inference only
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>
#include <cstdint>

#include <mha/fused_multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  using model = mha::fused_multi_head_attention<float, 3, 4, 6, 2>;
  const model m{};
  mha::tensor<float, 1, 4, 4> out{};
  model::kv_cache<1> cache{};
  model::workspace<1, 4> ws{};
  const auto s = m.forward_training(mha::tensor<float, 1, 4, 3>{}, 1, out, cache, ws, std::uint64_t{7});
  (void)s;
#else
  using model = mha::fused_multi_head_attention<float, 3, 4, 6, 2>;
  const model m{};
  mha::tensor<float, 1, 4, 4> out{};
  model::kv_cache<1> cache{};
  model::workspace<1, 4> ws{};
  const auto s = m.forward(mha::tensor<float, 1, 4, 3>{}, 1, out, cache, ws);
  (void)s;
#endif
  return 0;
}
