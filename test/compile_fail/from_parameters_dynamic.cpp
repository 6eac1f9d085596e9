// compile-fail case: mha::from_parameters of an mha::dynamic module (its parameters are run-time facts).
// Must fail with: mha::from_parameters: M must be a fixed-size module type
// With -DMHA_CF_OK (the fixed-size twin) it must compile.
#include <mha/causal_attention.hpp>
#include <mha/dynamic.hpp>
#include <mha/parameters.hpp>

constexpr mha::tensor<float, 2, 3> w{};

int main() {
#ifndef MHA_CF_OK
  const auto m = mha::from_parameters<mha::dynamic::causal_attention<float>>(w, w, w);
#else
  const auto m = mha::from_parameters<mha::causal_attention<float, 3, 2, 6>>(w, w, w);
#endif
  return m.dropout == 0.0f ? 0 : 1;
}
