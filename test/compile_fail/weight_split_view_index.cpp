// compile-fail case: weight_split_view<H, NumHeads> with H >= NumHeads.
// Must fail with: mha::weight_split_view: head index H must be less than NumHeads
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/block_view.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::tensor<float, 4, 3> w{};
  auto v = mha::weight_split_view<2, 2>(w);
  (void)v;
#else
  const mha::tensor<float, 4, 3> w{};
  auto v = mha::weight_split_view<1, 2>(w);
  (void)v;
#endif
  return 0;
}
