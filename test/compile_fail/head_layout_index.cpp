// compile-fail case: head_layout<H, NumHeads, ...> with H >= NumHeads.
// Must fail with: mha::head_layout: head index H must be less than NumHeads
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/block_layout.hpp>

int main() {
#ifndef MHA_CF_OK
  constexpr std::size_t offset = mha::head_layout<4, 4, 1, 6, 8>::offset;
  (void)offset;
#else
  constexpr std::size_t offset = mha::head_layout<3, 4, 1, 6, 8>::offset;
  (void)offset;
#endif
  return 0;
}
