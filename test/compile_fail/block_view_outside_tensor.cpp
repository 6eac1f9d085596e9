// compile-fail case: block_view over a tensor too small for the block.
// Must fail with: mha::block_view: the block lies (partly) outside the tensor
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/block_view.hpp>

int main() {
#ifndef MHA_CF_OK
  mha::tensor<float, 5, 4> t{};
  auto v = mha::block_view<float, mha::block_layout<1, 6, 2, 24, 4, 2>>(t);
  (void)v;
#else
  mha::tensor<float, 6, 4> t{};
  auto v = mha::block_view<float, mha::block_layout<1, 6, 2, 24, 4, 2>>(t);
  (void)v;
#endif
  return 0;
}
