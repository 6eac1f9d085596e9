// compile-fail case: a tensor_view with a zero extent, passed to forward (one error, the view's).
// Must fail with: mha::tensor_view: every extent must be greater than 0
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::multi_head_attention<float, 3, 4, 6, 2> m{};
  const float in[6 * 3] = {};
  auto y = m.forward(mha::tensor_view<const float, 0, 3>{in});
  static_cast<void>(y);
#else
  const mha::multi_head_attention<float, 3, 4, 6, 2> m{};
  const float in[6 * 3] = {};
  auto y = m.forward(mha::tensor_view<const float, 6, 3>{in});
  static_cast<void>(y);
#endif
  return 0;
}
