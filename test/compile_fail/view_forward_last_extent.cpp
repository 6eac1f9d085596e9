// compile-fail case: forward on a tensor_view of caller memory whose last extent != DIn.
// Must fail with: mha::multi_head_attention::forward: input last extent must equal DIn
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::multi_head_attention<float, 3, 4, 6, 2> m{};
  float buf[2 * 6 * 4] = {};
  auto y = m.forward(mha::tensor_view<const float, 2, 6, 4>{buf});
  static_cast<void>(y);
#else
  const mha::multi_head_attention<float, 3, 4, 6, 2> m{};
  float buf[2 * 6 * 4] = {};
  auto y = m.forward(mha::tensor_view<const float, 2, 6, 3>{buf});
  static_cast<void>(y);
#endif
  return 0;
}
