// compile-fail case: assigning a linear layer of the wrong shape to a module member.
// Must fail with: mha::linear: cannot assign a linear layer of a different element type, shape or bias setting
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/multi_head_attention.hpp>

int main() {
  mha::multi_head_attention<float, 3, 4, 6, 2> m{};
#ifndef MHA_CF_OK
  const mha::linear<float, 4, 3, false> w{};
  m.w_query = w;
#else
  const mha::linear<float, 3, 4, false> w{};
  m.w_query = w;
#endif
  return 0;
}
