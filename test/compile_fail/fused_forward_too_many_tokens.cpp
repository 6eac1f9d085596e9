// compile-fail case: forward: N > ContextLength.
// Must fail with: mha::fused_multi_head_attention::forward: token count N must not exceed ContextLength
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/fused_multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  using model = mha::fused_multi_head_attention<float, 3, 4, 6, 2>;
  const model m{};
  auto y = m.forward_training(mha::tensor<float, 1, 7, 3>{}, 1);
  (void)y;
#else
  using model = mha::fused_multi_head_attention<float, 3, 4, 6, 2>;
  const model m{};
  auto y = m.forward_training(mha::tensor<float, 1, 6, 3>{}, 1);
  (void)y;
#endif
  return 0;
}
