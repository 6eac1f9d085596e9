// compile-fail case: query_offset<H> with H >= NumHeads.
// Must fail with: mha::multi_head_attention: head index H must be less than NumHeads
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  constexpr std::size_t offset = mha::multi_head_attention<float, 3, 4, 6, 2>::query_offset<2>;
  (void)offset;
#else
  constexpr std::size_t offset = mha::multi_head_attention<float, 3, 4, 6, 2>::query_offset<1>;
  (void)offset;
#endif
  return 0;
}
