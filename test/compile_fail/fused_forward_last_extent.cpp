// compile-fail case: forward: input last extent != DIn.
// Must fail with: mha::fused_multi_head_attention::forward: input last extent must equal DIn
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/fused_multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  using model = mha::fused_multi_head_attention<float, 3, 4, 6, 2>;
  const model m{};
  auto y = m(mha::tensor<float, 2, 6, 4>{});
  (void)y;
#else
  using model = mha::fused_multi_head_attention<float, 3, 4, 6, 2>;
  const model m{};
  auto y = m(mha::tensor<float, 2, 6, 3>{});
  (void)y;
#endif
  return 0;
}
