// compile-fail case: linear forward(x, out) on a tensor_view whose last extent != InFeatures.
// Must fail with: mha::linear::forward: input last extent must equal InFeatures
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/linear.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::linear<double, 3, 2, false> l{};
  const double in[8] = {};
  double out[8] = {};
  l.forward(mha::tensor_view<const double, 4, 2>{in}, mha::tensor_view<double, 4, 2>{out});
#else
  const mha::linear<double, 3, 2, false> l{};
  const double in[12] = {};
  double out[8] = {};
  l.forward(mha::tensor_view<const double, 4, 3>{in}, mha::tensor_view<double, 4, 2>{out});
#endif
  return 0;
}
