// compile-fail case: query head 4 of a 4-head module.
// Must fail with: mha::grouped_query_attention::head_weights: head index H must be less than NumHeads
// With -DMHA_CF_OK (one token changed) it must compile.
#include <mha/grouped_query_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::grouped_query_attention<float, 8, 16, 6, 4, 2> m{}; (void)m.head_weights<4>();
#else
  const mha::grouped_query_attention<float, 8, 16, 6, 4, 2> m{}; (void)m.head_weights<3>();
#endif
  return 0;
}
