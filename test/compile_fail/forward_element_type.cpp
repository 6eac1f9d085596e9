// compile-fail case: forward: input element type != T.
// Must fail with: mha::multi_head_attention::forward: input element type must equal the module's T
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::multi_head_attention<float, 3, 4, 6, 2> m{};
  const mha::tensor<double, 6, 3> x{};
  auto y = m(x);
  (void)y;
#else
  const mha::multi_head_attention<float, 3, 4, 6, 2> m{};
  const mha::tensor<float, 6, 3> x{};
  auto y = m(x);
  (void)y;
#endif
  return 0;
}
