// compile-fail case: wrapper NumHeads == 0.
// Must fail with: mha::multi_head_attention_wrapper: NumHeads must be greater than 0
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/multi_head_attention_wrapper.hpp>

int main() {
#ifndef MHA_CF_OK
  mha::multi_head_attention_wrapper<float, 3, 2, 6, 0> m{};
  (void)m;
#else
  mha::multi_head_attention_wrapper<float, 3, 2, 6, 2> m{};
  (void)m;
#endif
  return 0;
}
