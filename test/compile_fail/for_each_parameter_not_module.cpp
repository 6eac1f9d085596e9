// compile-fail case: mha::for_each_parameter on a type without a parameter_description().
// Must fail with: mha::for_each_parameter: the model type has no parameter_description\(\)
// With -DMHA_CF_OK (an mha module) it must compile.
#include <string_view>

#include <mha/causal_attention.hpp>
#include <mha/parameters.hpp>

struct not_a_module {
  float w[3];
};

int main() {
  int n = 0;
#ifndef MHA_CF_OK
  not_a_module m{};
#else
  mha::causal_attention<float, 3, 2, 6> m{};
#endif
  mha::for_each_parameter(m, [&](std::string_view, auto&) { ++n; });
  return n == 3 ? 0 : 1;
}
