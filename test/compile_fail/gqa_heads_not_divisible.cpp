// compile-fail case: 6 query heads cannot share 4 key/value heads evenly.
// Must fail with: mha::grouped_query_attention: NumHeads must be divisible by NumKvHeads
// With -DMHA_CF_OK (one token changed) it must compile.
#include <mha/grouped_query_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  mha::grouped_query_attention<float, 8, 12, 6, 6, 4> m{}; (void)m;
#else
  mha::grouped_query_attention<float, 8, 12, 6, 6, 3> m{}; (void)m;
#endif
  return 0;
}
