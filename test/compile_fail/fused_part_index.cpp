// compile-fail case: qkv_weight_layout<Part> with Part > 2 (only query, key, value).
// Must fail with: mha::fused_multi_head_attention: Part must be 0 (query), 1 (key) or 2 (value)
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/fused_multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  constexpr auto o = mha::fused_multi_head_attention<float, 3, 4, 6, 2>::qkv_weight_layout<3>::offset;
  (void)o;
#else
  constexpr auto o = mha::fused_multi_head_attention<float, 3, 4, 6, 2>::qkv_weight_layout<2>::offset;
  (void)o;
#endif
  return 0;
}
