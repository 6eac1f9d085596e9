// compile-fail case: the self-attention forward of a module whose KDim differs
// from DIn (its keys are projected from another input).
// Must fail with: mha::multi_head_attention::forward: self-attention projects keys and values from x, so KDim and VDim must equal DIn
// With -DMHA_CF_OK (one token changed) it must compile.
#include <mha/multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  using model = mha::multi_head_attention<float, 4, 4, 8, 2, false, mha::attention_mask::none, 5, 4>;
#else
  using model = mha::multi_head_attention<float, 4, 4, 8, 2, false, mha::attention_mask::none, 4, 4>;
#endif
  const model m{};
  const mha::tensor<float, 1, 3, 4> x{};
  const auto y = m.forward(x);
  (void)y;
  return 0;
}
