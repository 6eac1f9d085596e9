// compile-fail case: mha::dynamic::multi_head_attention_wrapper<int>, its heads and their
// forward (the wrapper, not its heads or their linear layers, is named).
// Must fail with: mha::dynamic::multi_head_attention_wrapper: T must be float or double
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/dynamic.hpp>

#ifndef MHA_CF_OK
using element = int;
#else
using element = float;
#endif

int main() {
  mha::dynamic::multi_head_attention_wrapper<element> m(3, 2, 6, 2);
  m.for_each_head([](auto& head) { head.dropout = 0; });
  const mha::dynamic::tensor<float> x({6, 3});
  auto y = m.head(0)(x);
  (void)y;
  return static_cast<int>(m.parameter_count() + m.heads.size()) - 36;
}
