// compile-fail case: mha::parameter_names of an mha::dynamic module (its parameters are run-time facts).
// Must fail with: mha::parameter_names: M must be a fixed-size module
// With -DMHA_CF_OK (the fixed-size twin) it must compile.
#include <cstddef>

#include <mha/dynamic.hpp>
#include <mha/multi_head_attention.hpp>
#include <mha/parameters.hpp>

int main() {
#ifndef MHA_CF_OK
  constexpr auto names = mha::parameter_names<mha::dynamic::multi_head_attention<float>>;
#else
  constexpr auto names = mha::parameter_names<mha::multi_head_attention<float, 3, 4, 6, 2>>;
#endif
  return static_cast<int>(names.size()) - static_cast<int>(names.size());
}
