// compile-fail case: forward(x) whose workspace fits MHA_STACK_WORKSPACE_LIMIT but whose stack
// use (workspace<1, 6>::stack_bytes: the workspace and the call's frame bound, plus the output)
// does not.
// Must fail with: mha::causal_attention::forward: this call's stack use
// With -DMHA_CF_OK (one token changed) it must compile.
#ifndef MHA_CF_OK
#define MHA_STACK_WORKSPACE_LIMIT 4096  // the workspace<1, 6> is 336 bytes, the call uses 6272
#else
#define MHA_STACK_WORKSPACE_LIMIT 8192  // the workspace<1, 6> is 336 bytes, the call uses 6272
#endif
#include <cstddef>

#include <mha/causal_attention.hpp>

static_assert(sizeof(mha::causal_attention<float, 3, 2, 6>::workspace<1, 6>) <= 4096);

int main() {
  const mha::causal_attention<float, 3, 2, 6> m{};
  const mha::tensor<float, 6, 3> x{};
  auto y = m(x);
  (void)y;
  return 0;
}
