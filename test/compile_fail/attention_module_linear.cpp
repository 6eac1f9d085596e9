// compile-fail case: generic code constrained by mha::attention_module, given
// a linear layer (not an attention module: no attention sizes).
// Must fail with: no matching function for call to (the constraint's notes follow)
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/attention_module.hpp>
#include <mha/causal_attention.hpp>
#include <mha/linear.hpp>

template <mha::attention_module M>
std::size_t width_of(const M&) {
  return M::output_width;
}

int main() {
#ifndef MHA_CF_OK
  const mha::linear<float, 3, 2> m{};
#else
  const mha::causal_attention<float, 3, 2, 6> m{};
#endif
  return static_cast<int>(width_of(m)) - 2;
}
