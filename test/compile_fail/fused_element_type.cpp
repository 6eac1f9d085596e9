// compile-fail case: fused_multi_head_attention<long double, ...> and its forward.
// Must fail with: mha::fused_multi_head_attention: T must be float or double
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/fused_multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::fused_multi_head_attention<long double, 3, 4, 6, 2> m{};
  auto y = m(mha::tensor<long double, 6, 3>{});
  (void)y;
#else
  const mha::fused_multi_head_attention<double, 3, 4, 6, 2> m{};
  auto y = m(mha::tensor<double, 6, 3>{});
  (void)y;
#endif
  return 0;
}
