// compile-fail case: linear<int, 3, 2, false>.
// Must fail with: mha::linear: T must be float or double
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/linear.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::linear<int, 3, 2, false> l{};
  (void)l;
#else
  const mha::linear<float, 3, 2, false> l{};
  (void)l;
#endif
  return 0;
}
