// compile-fail case: forward(x, out, ws): workspace<B, N> of the wrong size.
// Must fail with: mha::multi_head_attention::forward: workspace must be workspace<B, N>
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  using model = mha::multi_head_attention<float, 3, 4, 6, 2>;
  const model m{};
  const mha::tensor<float, 2, 6, 3> x{};
  mha::tensor<float, 2, 6, 4> out{};
  model::workspace<2, 5> ws{};
  m.forward(x, out, ws);
#else
  using model = mha::multi_head_attention<float, 3, 4, 6, 2>;
  const model m{};
  const mha::tensor<float, 2, 6, 3> x{};
  mha::tensor<float, 2, 6, 4> out{};
  model::workspace<2, 6> ws{};
  m.forward(x, out, ws);
#endif
  return 0;
}
