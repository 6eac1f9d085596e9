// compile-fail case: assigning a weight tensor of the wrong shape to a module member.
// Must fail with: mha::tensor: cannot assign a tensor of a different shape or element type
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  mha::multi_head_attention<float, 3, 4, 6, 2> m{};
  const mha::tensor<float, 3, 4> w{};
  m.w_query.weight = w;
#else
  mha::multi_head_attention<float, 3, 4, 6, 2> m{};
  const mha::tensor<float, 4, 3> w{};
  m.w_query.weight = w;
#endif
  return 0;
}
