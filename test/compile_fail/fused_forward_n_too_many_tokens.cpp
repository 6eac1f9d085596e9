// compile-fail case: forward(x, n, out, ws): Max > ContextLength.
// Must fail with: mha::fused_multi_head_attention::forward: token count N must not exceed ContextLength
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/fused_multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  using model = mha::fused_multi_head_attention<float, 3, 4, 6, 2>;
  const model m{};
  mha::tensor<float, 1, 7, 4> out{};
  model::workspace<1, 7> ws{};
  const auto s = m.forward(mha::tensor<float, 1, 7, 3>{}, 3, out, ws);
  (void)s;
#else
  using model = mha::fused_multi_head_attention<float, 3, 4, 6, 2>;
  const model m{};
  mha::tensor<float, 1, 6, 4> out{};
  model::workspace<1, 6> ws{};
  const auto s = m.forward(mha::tensor<float, 1, 6, 3>{}, 3, out, ws);
  (void)s;
#endif
  return 0;
}
