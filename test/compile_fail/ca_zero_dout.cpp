// compile-fail case: causal_attention DOut == 0.
// Must fail with: mha::causal_attention: DOut must be greater than 0
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/causal_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  mha::causal_attention<float, 3, 0, 6> m{};
  (void)m;
#else
  mha::causal_attention<float, 3, 2, 6> m{};
  (void)m;
#endif
  return 0;
}
