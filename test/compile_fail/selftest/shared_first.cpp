// batch self-test (selftest.cmake): the same failing specialization as victim.cpp.
// Must fail with: mha::causal_attention: DOut must be greater than 0
#include <cstddef>

#include <mha/causal_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  mha::causal_attention<float, 3, 0, 6> m{};
  (void)m;
#else
  mha::causal_attention<float, 3, 2, 6> m{};
  (void)m;
#endif
  return 0;
}
