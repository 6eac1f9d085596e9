// compile-fail case: context_offset<H> (or head_offset<H>) of a wrapper with H >= NumHeads.
// Must fail with: mha::multi_head_attention_wrapper: head index H must be less than NumHeads
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/multi_head_attention_wrapper.hpp>

int main() {
#ifndef MHA_CF_OK
  constexpr std::size_t offset = mha::multi_head_attention_wrapper<float, 3, 2, 6, 2>::context_offset<2>;
#else
  constexpr std::size_t offset = mha::multi_head_attention_wrapper<float, 3, 2, 6, 2>::context_offset<1>;
#endif
  static_assert(offset <= 2);
  return 0;
}
