// compile-fail case: KV-cache forward on a tensor_view of double for a float module.
// Must fail with: mha::multi_head_attention::forward: input element type must equal the module's T
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  using M = mha::multi_head_attention<float, 3, 4, 6, 2>;
  const M m{};
  const double in[6 * 3] = {};
  float out[6 * 4] = {};
  M::kv_cache<1> cache{};
  M::workspace<1, 6> ws{};
  const auto s = m.forward(mha::tensor_view<const double, 6, 3>{in}, 1,
                           mha::tensor_view<float, 6, 4>{out}, cache, ws);
  static_cast<void>(s);
#else
  using M = mha::multi_head_attention<float, 3, 4, 6, 2>;
  const M m{};
  const float in[6 * 3] = {};
  float out[6 * 4] = {};
  M::kv_cache<1> cache{};
  M::workspace<1, 6> ws{};
  const auto s = m.forward(mha::tensor_view<const float, 6, 3>{in}, 1,
                           mha::tensor_view<float, 6, 4>{out}, cache, ws);
  static_cast<void>(s);
#endif
  return 0;
}
