// compile-fail case: forward: input last extent != DIn.
// Must fail with: mha::causal_attention::forward: input last extent must equal DIn
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/causal_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::causal_attention<float, 3, 2, 6> m{};
  const mha::tensor<float, 2, 6, 4> x{};
  auto y = m(x);
  (void)y;
#else
  const mha::causal_attention<float, 3, 2, 6> m{};
  const mha::tensor<float, 2, 6, 3> x{};
  auto y = m(x);
  (void)y;
#endif
  return 0;
}
