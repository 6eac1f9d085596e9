// compile-fail case: forward(x, out): out of another element type.
// Must fail with: mha::causal_attention::forward: output must be a tensor<T, B, N, output_width>
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/causal_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::causal_attention<float, 3, 2, 6> m{};
  const mha::tensor<float, 6, 3> x{};
  mha::tensor<double, 6, 2> out{};
  m.forward(x, out);
#else
  const mha::causal_attention<float, 3, 2, 6> m{};
  const mha::tensor<float, 6, 3> x{};
  mha::tensor<float, 6, 2> out{};
  m.forward(x, out);
#endif
  return 0;
}
