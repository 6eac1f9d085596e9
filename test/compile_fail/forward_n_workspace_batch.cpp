// compile-fail case: forward(x, n, out, ws) with a workspace of another batch size.
// Must fail with: mha::causal_attention::forward: workspace must be workspace<B, N>
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>
#include <cstdint>

#include <mha/causal_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  using model = mha::causal_attention<float, 3, 2, 6>;
  const model m{};
  const mha::tensor<float, 1, 6, 3> x{};
  mha::tensor<float, 1, 6, 2> out{};
  model::workspace<2, 6> ws{};
  const auto s = m.forward(x, 3, out, ws);
  (void)s;
#else
  using model = mha::causal_attention<float, 3, 2, 6>;
  const model m{};
  const mha::tensor<float, 1, 6, 3> x{};
  mha::tensor<float, 1, 6, 2> out{};
  model::workspace<1, 6> ws{};
  const auto s = m.forward(x, 3, out, ws);
  (void)s;
#endif
  return 0;
}
