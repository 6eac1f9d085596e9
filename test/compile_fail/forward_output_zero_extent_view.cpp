// compile-fail case: forward(x, out) with an output view type of a zero
// extent, passed by reference and never constructed: the forward instantiates
// the view's type, whose static_assert reports it; mha::can_forward_v is false
// for it, without a hard error of its own (test_introspection).
// Must fail with: mha::tensor_view: every extent must be greater than 0
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/attention_module.hpp>
#include <mha/causal_attention.hpp>

using module_type = mha::causal_attention<float, 3, 2, 6>;
using input_type = mha::tensor<float, 6, 3>;
#ifndef MHA_CF_OK
constexpr std::size_t width = 0;
#else
constexpr std::size_t width = 2;
#endif
using output_type = mha::tensor_view<float, 6, width>;
static_assert(mha::can_forward_v<module_type, input_type, output_type> == (width > 0));

template <class Y>
void forward_into(const module_type& m, const input_type& x, Y& out) {
  m.forward(x, out);
}
template void forward_into<output_type>(const module_type&, const input_type&, output_type&);

int main() { return 0; }
