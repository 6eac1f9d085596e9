// compile-fail case: mha::from_parameters with fewer tensors than the model has parameters
// (a causal_attention with qkv bias has six: each projection's weight and bias).
// Must fail with: mha::from_parameters: the number of tensors differs from the model's number of parameters
// With -DMHA_CF_OK (the six tensors) it must compile.
#include <mha/causal_attention.hpp>
#include <mha/parameters.hpp>

using model_t = mha::causal_attention<float, 3, 2, 6, true>;
constexpr mha::tensor<float, 2, 3> w{};
constexpr mha::tensor<float, 2> b{};

int main() {
#ifndef MHA_CF_OK
  constexpr model_t m = mha::from_parameters<model_t>(w, b, w, b, w);
#else
  constexpr model_t m = mha::from_parameters<model_t>(w, b, w, b, w, b);
#endif
  return m.dropout == 0.0f ? 0 : 1;
}
