// compile-fail case: mha::from_parameters with a tensor of another type than the parameter at
// its position (W_key.weight given [in][out], [3][2], instead of [out][in], [2][3]).
// Must fail with: mha::from_parameters: a tensor's type (element type, extents) differs from the parameter's at its position
// With -DMHA_CF_OK (the [2][3] weight) it must compile.
#include <mha/multi_head_attention.hpp>
#include <mha/parameters.hpp>

using model_t = mha::multi_head_attention<float, 3, 2, 6, 2>;
constexpr mha::tensor<float, 2, 3> w{};
#ifndef MHA_CF_OK
constexpr mha::tensor<float, 3, 2> w_key{};
#else
constexpr mha::tensor<float, 2, 3> w_key{};
#endif
constexpr mha::tensor<float, 2, 2> out_w{};
constexpr mha::tensor<float, 2> out_b{};

int main() {
  constexpr model_t m = mha::from_parameters<model_t>(w, w_key, w, out_w, out_b);
  return m.dropout == 0.0f ? 0 : 1;
}
