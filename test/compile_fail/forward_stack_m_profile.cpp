// compile-fail case: the default MHA_STACK_WORKSPACE_LIMIT of a bare-metal target (8 KiB; here
// an M-profile Arm core, as arm-none-eabi-g++ -mcpu=cortex-m4 defines __ARM_ARCH_PROFILE)
// rejects forward(x) of a d=64, 4-head, 32-token model (workspace, frame and output: 64256
// bytes); the twin passes a caller-owned workspace, as the message says.
// Must fail with: mha::multi_head_attention::forward: this call's stack use
// With -DMHA_CF_OK (one token changed) it must compile.
#define __ARM_ARCH_PROFILE 'M'
#include <cstddef>

#include <mha/multi_head_attention.hpp>

static_assert(MHA_STACK_WORKSPACE_LIMIT == 8192);

using model = mha::multi_head_attention<float, 64, 64, 32, 4>;
static model::workspace<1, 32> ws;

int main() {
  static const model m{};
  static const mha::tensor<float, 32, 64> x{};
  static mha::tensor<float, 32, 64> y{};
#ifndef MHA_CF_OK
  y = m.forward(x);
#else
  m.forward(x, y, ws);
#endif
  (void)y;
  return 0;
}
