// compile-fail case: forward(x, n, out, cache, ws) with an output of another token extent.
// Must fail with: mha::multi_head_attention::forward: output must be a tensor<T, B, N, output_width>
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>
#include <cstdint>

#include <mha/multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  using model = mha::multi_head_attention<double, 3, 4, 8, 2>;
  const model m{};
  const mha::tensor<double, 1, 6, 3> x{};
  mha::tensor<double, 1, 5, 4> out{};
  model::kv_cache<1> cache{};
  model::workspace<1, 6> ws{};
  const auto s = m.forward(x, 2, out, cache, ws);
  (void)s;
#else
  using model = mha::multi_head_attention<double, 3, 4, 8, 2>;
  const model m{};
  const mha::tensor<double, 1, 6, 3> x{};
  mha::tensor<double, 1, 6, 4> out{};
  model::kv_cache<1> cache{};
  model::workspace<1, 6> ws{};
  const auto s = m.forward(x, 2, out, cache, ws);
  (void)s;
#endif
  return 0;
}
