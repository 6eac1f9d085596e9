// compile-fail case: forward(x, out, ws): ws for another token count.
// Must fail with: mha::fused_multi_head_attention::forward: workspace must be workspace<B, N>
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/fused_multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  using model = mha::fused_multi_head_attention<float, 3, 4, 6, 2>;
  const model m{};
  mha::tensor<float, 2, 6, 4> out{};
  model::workspace<2, 5> ws{};
  m.forward(mha::tensor<float, 2, 6, 3>{}, out, ws);
#else
  using model = mha::fused_multi_head_attention<float, 3, 4, 6, 2>;
  const model m{};
  mha::tensor<float, 2, 6, 4> out{};
  model::workspace<2, 6> ws{};
  m.forward(mha::tensor<float, 2, 6, 3>{}, out, ws);
#endif
  return 0;
}
