// compile-fail case: generic code constrained by mha::can_forward_v, given an
// input whose token count exceeds ContextLength: the overload is not viable
// (one error), instead of the static_assert inside forward.
// Must fail with: no matching function for call to (the constraint's notes follow)
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/attention_module.hpp>
#include <mha/multi_head_attention.hpp>

template <class M, class X>
  requires mha::can_forward_v<M, X>
auto run(const M& m, const X& x) {
  return m.forward(x);
}

int main() {
  const mha::multi_head_attention<float, 3, 4, 6, 2> m{};
#ifndef MHA_CF_OK
  const float in[7 * 3] = {};
  auto y = run(m, mha::tensor_view<const float, 7, 3>{in});
#else
  const float in[6 * 3] = {};
  auto y = run(m, mha::tensor_view<const float, 6, 3>{in});
#endif
  static_cast<void>(y);
  return 0;
}
