// compile-fail case: linear forward(x, out) into a const tensor.
// Must fail with: mha::linear::forward: output must be writable
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/linear.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::linear<float, 3, 2> l{};
  const mha::tensor<float, 3> x{};
  const mha::tensor<float, 2> y{};
  l.forward(x, y);
#else
  const mha::linear<float, 3, 2> l{};
  const mha::tensor<float, 3> x{};
  mha::tensor<float, 2> y{};
  l.forward(x, y);
#endif
  return 0;
}
