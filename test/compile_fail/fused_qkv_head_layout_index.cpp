// compile-fail case: qkv_head_layout<Part, H, B, N> with H >= NumHeads.
// Must fail with: mha::fused_multi_head_attention: head index H must be less than NumHeads
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/fused_multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  constexpr auto o = mha::fused_multi_head_attention<float, 3, 4, 6, 2>::qkv_head_layout<1, 2, 1, 6>::offset;
  (void)o;
#else
  constexpr auto o = mha::fused_multi_head_attention<float, 3, 4, 6, 2>::qkv_head_layout<1, 1, 1, 6>::offset;
  (void)o;
#endif
  return 0;
}
