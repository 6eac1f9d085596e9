// compile-fail case: forward(x) of a zero-token input view that is passed by
// reference and never constructed (generic code instantiated for its type):
// the forward instantiates the view's type, whose static_assert reports the
// zero extent; mha::can_forward_v is false for it (test_introspection).
// Must fail with: mha::tensor_view: every extent must be greater than 0
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/attention_module.hpp>
#include <mha/multi_head_attention.hpp>

using module_type = mha::multi_head_attention<float, 3, 4, 6, 2>;
#ifndef MHA_CF_OK
constexpr std::size_t tokens = 0;
#else
constexpr std::size_t tokens = 1;
#endif
using input_type = mha::tensor_view<const float, tokens, 3>;
static_assert(mha::can_forward_v<module_type, input_type> == (tokens > 0));

template <class X>
float first_output(const module_type& m, const X& x) {
  return m.forward(x).elements[0];
}
template float first_output<input_type>(const module_type&, const input_type&);

int main() { return 0; }
