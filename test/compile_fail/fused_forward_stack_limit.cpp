// compile-fail case: forward(x): stack workspace over MHA_STACK_WORKSPACE_LIMIT.
// Must fail with: mha::fused_multi_head_attention::forward: this call's stack use
// With -DMHA_CF_OK (one token changed) it must compile.
#ifndef MHA_CF_OK
#define MHA_STACK_WORKSPACE_LIMIT 64  // the workspace<1, 6> needs more
#else
#define MHA_STACK_WORKSPACE_LIMIT 16384  // the workspace<1, 6> needs more
#endif
#include <cstddef>

#include <mha/fused_multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  using model = mha::fused_multi_head_attention<float, 3, 4, 6, 2>;
  const model m{};
  auto y = m(mha::tensor<float, 6, 3>{});
  (void)y;
#else
  using model = mha::fused_multi_head_attention<float, 3, 4, 6, 2>;
  const model m{};
  auto y = m(mha::tensor<float, 6, 3>{});
  (void)y;
#endif
  return 0;
}
