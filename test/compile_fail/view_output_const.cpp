// compile-fail case: forward(x, out) into a tensor_view of const T (read-only memory).
// Must fail with: mha::fused_multi_head_attention::forward: output must be writable
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/fused_multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::fused_multi_head_attention<float, 3, 4, 6, 2> m{};
  const mha::tensor<float, 6, 3> x{};
  float out[6 * 4] = {};
  m.forward(x, mha::tensor_view<const float, 6, 4>{out});
#else
  const mha::fused_multi_head_attention<float, 3, 4, 6, 2> m{};
  const mha::tensor<float, 6, 3> x{};
  float out[6 * 4] = {};
  m.forward(x, mha::tensor_view<float, 6, 4>{out});
#endif
  return 0;
}
