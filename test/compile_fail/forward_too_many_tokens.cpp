// compile-fail case: forward: N > ContextLength.
// Must fail with: mha::multi_head_attention_wrapper::forward: token count N must not exceed ContextLength
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/multi_head_attention_wrapper.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::multi_head_attention_wrapper<float, 3, 2, 6, 2> m{};
  const mha::tensor<float, 1, 7, 3> x{};
  auto y = m(x);
  (void)y;
#else
  const mha::multi_head_attention_wrapper<float, 3, 2, 6, 2> m{};
  const mha::tensor<float, 1, 6, 3> x{};
  auto y = m(x);
  (void)y;
#endif
  return 0;
}
