// compile-fail case: forward(x, out) into a temporary tensor (its result would be lost).
// Must fail with: mha::multi_head_attention_wrapper::forward: output must be writable
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/multi_head_attention_wrapper.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::multi_head_attention_wrapper<float, 3, 2, 6, 2> m{};
  const mha::tensor<float, 6, 3> x{};
  m.forward(x, mha::tensor<float, 6, 4>{});
#else
  const mha::multi_head_attention_wrapper<float, 3, 2, 6, 2> m{};
  const mha::tensor<float, 6, 3> x{};
  mha::tensor<float, 6, 4> out{};
  m.forward(x, out);
#endif
  return 0;
}
