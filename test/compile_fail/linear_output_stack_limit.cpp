// compile-fail case: linear::forward(x) returning an output over MHA_STACK_WORKSPACE_LIMIT.
// Must fail with: mha::linear::forward: the output exceeds MHA_STACK_WORKSPACE_LIMIT bytes
// With -DMHA_CF_OK (one token changed) it must compile.
#ifndef MHA_CF_OK
#define MHA_STACK_WORKSPACE_LIMIT 64
#else
#define MHA_STACK_WORKSPACE_LIMIT 64
#endif
#include <cstddef>

#include <mha/linear.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::linear<float, 3, 2> l{};
  const mha::tensor<float, 12, 3> x{};
  auto y = l(x);  // [12][2] floats = 96 bytes
  (void)y;
#else
  const mha::linear<float, 3, 2> l{};
  const mha::tensor<float, 6, 3> x{};
  auto y = l(x);  // [6][2] floats = 48 bytes
  (void)y;
#endif
  return 0;
}
