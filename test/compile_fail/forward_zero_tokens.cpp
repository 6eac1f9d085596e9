// compile-fail case: forward: N == 0 (a zero extent).
// Must fail with: mha::tensor: every extent must be greater than 0
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::multi_head_attention<float, 3, 4, 6, 2> m{};
  const mha::tensor<float, 1, 0, 3> x{};
  auto y = m(x);
  (void)y;
#else
  const mha::multi_head_attention<float, 3, 4, 6, 2> m{};
  const mha::tensor<float, 1, 1, 3> x{};
  auto y = m(x);
  (void)y;
#endif
  return 0;
}
