// compile-fail case: mha::linear::forward(x, out) with an output tensor type
// above MHA_MAX_INLINE_BYTES, passed by reference and never constructed: the
// forward instantiates the type, whose static_assert reports it (one error);
// mha::can_forward_v is false for it, without a hard error of its own.
// Must fail with: mha::tensor: sizeof exceeds MHA_MAX_INLINE_BYTES
// With -DMHA_CF_OK (one token changed) it must compile.
#define MHA_MAX_INLINE_BYTES 4096
#include <cstddef>

#include <mha/attention_module.hpp>
#include <mha/linear.hpp>

using layer_type = mha::linear<float, 3, 100>;  // 1600 bytes
using input_type = mha::tensor_view<const float, 11, 3>;
#ifndef MHA_CF_OK
using output_type = mha::tensor<float, 11, 100>;  // 4400 bytes
#else
using output_type = mha::tensor_view<float, 11, 100>;  // (a view's elements are not inline)
#endif
static_assert(mha::can_forward_v<layer_type, input_type, output_type> ==
              mha::is_tensor_view_v<output_type>);

template <class Y>
void forward_into(const layer_type& l, const input_type& x, Y& out) {
  l.forward(x, out);
}
template void forward_into<output_type>(const layer_type&, const input_type&, output_type&);

int main() { return 0; }
