// compile-fail case: mha::linear::forward(x) of a zero-extent input view
// passed by reference and never constructed: the view's type reports the zero
// extent (one error; the output type is not a second one), and
// mha::can_forward_v is false for it (test_introspection).
// Must fail with: mha::tensor_view: every extent must be greater than 0
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/attention_module.hpp>
#include <mha/linear.hpp>

using layer_type = mha::linear<float, 3, 2>;
#ifndef MHA_CF_OK
constexpr std::size_t tokens = 0;
#else
constexpr std::size_t tokens = 1;
#endif
using input_type = mha::tensor_view<const float, tokens, 3>;
static_assert(mha::can_forward_v<layer_type, input_type> == (tokens > 0));

template <class X>
float first_output(const layer_type& l, const X& x) {
  return l.forward(x).elements[0];
}
template float first_output<input_type>(const layer_type&, const input_type&);

int main() { return 0; }
