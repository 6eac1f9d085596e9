// compile-fail case: no key/value heads.
// Must fail with: mha::grouped_query_attention: NumKvHeads must be greater than 0
// With -DMHA_CF_OK (one token changed) it must compile.
#include <mha/grouped_query_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  mha::grouped_query_attention<float, 8, 12, 6, 6, 0> m{}; (void)m;
#else
  mha::grouped_query_attention<float, 8, 12, 6, 6, 1> m{}; (void)m;
#endif
  return 0;
}
