// compile-fail case: block_layout whose columns run past the end of a row.
// Must fail with: mha::block_layout: the block's columns run past the end of a row
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/block_layout.hpp>

int main() {
#ifndef MHA_CF_OK
  constexpr std::size_t span = mha::block_layout<1, 6, 2, 24, 4, 3>::required_span_size;
  (void)span;
#else
  constexpr std::size_t span = mha::block_layout<1, 6, 2, 24, 4, 2>::required_span_size;
  (void)span;
#endif
  return 0;
}
