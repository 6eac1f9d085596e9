// compile-fail case: query_offset<H> of the single-head causal_attention with H != 0.
// Must fail with: mha::causal_attention: head index H must be 0 (a single head)
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/causal_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  constexpr std::size_t offset = mha::causal_attention<float, 3, 2, 6>::query_offset<1>;
#else
  constexpr std::size_t offset = mha::causal_attention<float, 3, 2, 6>::query_offset<0>;
#endif
  static_assert(offset == 0);
  return 0;
}
