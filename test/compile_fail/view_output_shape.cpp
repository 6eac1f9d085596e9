// compile-fail case: forward(x, out, ws) into a tensor_view of the wrong shape.
// Must fail with: mha::causal_attention::forward: output must be a tensor<T, B, N, output_width>
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/causal_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::causal_attention<float, 3, 2, 6> m{};
  const float in[6 * 3] = {};
  float out[6 * 4] = {};
  mha::causal_attention<float, 3, 2, 6>::workspace<1, 6> ws{};
  m.forward(mha::tensor_view<const float, 6, 3>{in}, mha::tensor_view<float, 6, 4>{out}, ws);
#else
  const mha::causal_attention<float, 3, 2, 6> m{};
  const float in[6 * 3] = {};
  float out[6 * 4] = {};
  mha::causal_attention<float, 3, 2, 6>::workspace<1, 6> ws{};
  m.forward(mha::tensor_view<const float, 6, 3>{in}, mha::tensor_view<float, 6, 2>{out}, ws);
#endif
  return 0;
}
