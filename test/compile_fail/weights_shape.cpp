// compile-fail case: attention weights of the wrong shape ([B][N][N][H]
// instead of [B][H][N][N] or the head average [B][N][N]).
// Must fail with: mha::multi_head_attention::forward_with_weights: weights must be tensor<T, B, num_heads, N, N>
// With -DMHA_CF_OK (one token changed) it must compile.
#include <mha/multi_head_attention.hpp>

int main() {
  using model = mha::multi_head_attention<float, 3, 4, 6, 2>;
  const model m{};
  const mha::tensor<float, 1, 5, 3> x{};
  mha::tensor<float, 1, 5, 4> out{};
#ifndef MHA_CF_OK
  mha::tensor<float, 1, 5, 5, 2> weights{};
#else
  mha::tensor<float, 1, 2, 5, 5> weights{};
#endif
  model::workspace<1, 5> ws{};
  m.forward_with_weights(x, out, weights, ws);
  return 0;
}
