// compile-fail case: forward(x, out): out of the wrong shape.
// Must fail with: mha::multi_head_attention::forward: output must be a tensor<T, B, N, output_width>
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::multi_head_attention<float, 3, 4, 6, 2> m{};
  const mha::tensor<float, 2, 6, 3> x{};
  mha::tensor<float, 2, 6, 2> out{};
  m.forward(x, out);
#else
  const mha::multi_head_attention<float, 3, 4, 6, 2> m{};
  const mha::tensor<float, 2, 6, 3> x{};
  mha::tensor<float, 2, 6, 4> out{};
  m.forward(x, out);
#endif
  return 0;
}
