// compile-fail case: NumHeads == 0.
// Must fail with: mha::fused_multi_head_attention: NumHeads must be greater than 0
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/fused_multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::fused_multi_head_attention<float, 3, 4, 6, 0> m{};
  (void)m;
#else
  const mha::fused_multi_head_attention<float, 3, 4, 6, 2> m{};
  (void)m;
#endif
  return 0;
}
