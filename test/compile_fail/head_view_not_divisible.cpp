// compile-fail case: head_view: last extent not divisible by NumHeads.
// Must fail with: mha::head_view: the tensor's last extent must be divisible by NumHeads
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/block_view.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::tensor<float, 1, 6, 4> q{};
  auto v = mha::head_view<0, 3>(q);
  (void)v;
#else
  const mha::tensor<float, 1, 6, 4> q{};
  auto v = mha::head_view<0, 2>(q);
  (void)v;
#endif
  return 0;
}
