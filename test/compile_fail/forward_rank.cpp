// compile-fail case: forward: input rank 4.
// Must fail with: mha::multi_head_attention::forward: input must have rank 3 [batch][tokens][d_in] or rank 2
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::multi_head_attention<float, 3, 4, 6, 2> m{};
  const mha::tensor<float, 1, 2, 6, 3> x{};
  auto y = m(x);
  (void)y;
#else
  const mha::multi_head_attention<float, 3, 4, 6, 2> m{};
  const mha::tensor<float, 2, 6, 3> x{};
  auto y = m(x);
  (void)y;
#endif
  return 0;
}
