// compile-fail case: head_weight_layout<Part, H> with H >= NumHeads (it would name a row block of the next part).
// Must fail with: mha::fused_multi_head_attention: head index H must be less than NumHeads
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/fused_multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  constexpr auto o = mha::fused_multi_head_attention<float, 3, 4, 6, 2>::head_weight_layout<0, 2>::offset;
  (void)o;
#else
  constexpr auto o = mha::fused_multi_head_attention<float, 3, 4, 6, 2>::head_weight_layout<0, 1>::offset;
  (void)o;
#endif
  return 0;
}
