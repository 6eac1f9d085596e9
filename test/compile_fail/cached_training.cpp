// compile-fail case: a training-mode KV-cache call (there is none).
// Must fail with: mha::multi_head_attention_wrapper::forward_training: the KV-cache forward is inference only
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>
#include <cstdint>

#include <mha/multi_head_attention_wrapper.hpp>

int main() {
#ifndef MHA_CF_OK
  using model = mha::multi_head_attention_wrapper<float, 3, 2, 6, 2>;
  const model m{};
  const mha::tensor<float, 1, 4, 3> x{};
  mha::tensor<float, 1, 4, 4> out{};
  model::kv_cache<1> cache{};
  model::workspace<1, 4> ws{};
  const auto s = m.forward_training(x, 1, out, cache, ws, std::uint64_t{7});
  (void)s;
#else
  using model = mha::multi_head_attention_wrapper<float, 3, 2, 6, 2>;
  const model m{};
  const mha::tensor<float, 1, 4, 3> x{};
  mha::tensor<float, 1, 4, 4> out{};
  model::kv_cache<1> cache{};
  model::workspace<1, 4> ws{};
  const auto s = m.forward(x, 1, out, cache, ws);
  (void)s;
#endif
  return 0;
}
