// compile-fail case: forward: input rank 4.
// Must fail with: mha::fused_multi_head_attention::forward: input must have rank 3 [batch][tokens][d_in] or rank 2
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/fused_multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  using model = mha::fused_multi_head_attention<float, 3, 4, 6, 2>;
  const model m{};
  auto y = m(mha::tensor<float, 1, 2, 6, 3>{});
  (void)y;
#else
  using model = mha::fused_multi_head_attention<float, 3, 4, 6, 2>;
  const model m{};
  auto y = m(mha::tensor<float, 2, 6, 3>{});
  (void)y;
#endif
  return 0;
}
