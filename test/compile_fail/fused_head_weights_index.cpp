// compile-fail case: head_weights<H>() with H >= NumHeads.
// Must fail with: mha::fused_multi_head_attention::head_weights: head index H must be less than NumHeads
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/fused_multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::fused_multi_head_attention<float, 3, 4, 6, 2> m{};
  auto w = m.head_weights<2>();
  (void)w;
#else
  const mha::fused_multi_head_attention<float, 3, 4, 6, 2> m{};
  auto w = m.head_weights<1>();
  (void)w;
#endif
  return 0;
}
