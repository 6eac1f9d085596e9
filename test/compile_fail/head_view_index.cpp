// compile-fail case: head_view<H, NumHeads> with H >= NumHeads.
// Must fail with: mha::head_view: head index H must be less than NumHeads
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/block_view.hpp>

int main() {
#ifndef MHA_CF_OK
  mha::tensor<float, 2, 6, 4> q{};
  auto v = mha::head_view<2, 2>(q);
  (void)v;
#else
  mha::tensor<float, 2, 6, 4> q{};
  auto v = mha::head_view<1, 2>(q);
  (void)v;
#endif
  return 0;
}
