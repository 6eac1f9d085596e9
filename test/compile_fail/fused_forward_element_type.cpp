// compile-fail case: forward: input element type != T.
// Must fail with: mha::fused_multi_head_attention::forward: input element type must equal the module's T
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/fused_multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  using model = mha::fused_multi_head_attention<float, 3, 4, 6, 2>;
  const model m{};
  auto y = m(mha::tensor<double, 6, 3>{});
  (void)y;
#else
  using model = mha::fused_multi_head_attention<float, 3, 4, 6, 2>;
  const model m{};
  auto y = m(mha::tensor<float, 6, 3>{});
  (void)y;
#endif
  return 0;
}
