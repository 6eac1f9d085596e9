// compile-fail case: forward(x, out): out of the wrong width.
// Must fail with: mha::fused_multi_head_attention::forward: output must be a tensor<T, B, N, output_width>
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/fused_multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  using model = mha::fused_multi_head_attention<float, 3, 4, 6, 2>;
  const model m{};
  mha::tensor<float, 2, 6, 2> out{};
  m.forward(mha::tensor<float, 2, 6, 3>{}, out);
#else
  using model = mha::fused_multi_head_attention<float, 3, 4, 6, 2>;
  const model m{};
  mha::tensor<float, 2, 6, 4> out{};
  m.forward(mha::tensor<float, 2, 6, 3>{}, out);
#endif
  return 0;
}
