// compile-fail case: linear::forward(x) whose stack use (the output it returns, one packed
// weight panel and the register tiles: 96 + 768 + 4096 bytes) exceeds MHA_STACK_WORKSPACE_LIMIT.
// Must fail with: mha::linear::forward: the stack use of forward(x)
// With -DMHA_CF_OK (one token changed) it must compile.
#ifndef MHA_CF_OK
#define MHA_STACK_WORKSPACE_LIMIT 4096
#else
#define MHA_STACK_WORKSPACE_LIMIT 8192
#endif
#include <cstddef>

#include <mha/linear.hpp>

int main() {
  const mha::linear<float, 3, 2> l{};
  const mha::tensor<float, 12, 3> x{};
  auto y = l(x);  // [12][2] floats = 96 bytes
  (void)y;
  return 0;
}
