// compile-fail case: the position-encoding parameter is neither mha::no_rope nor mha::rope<ThetaBase>.
// Must fail with: mha::grouped_query_attention: Rope must be mha::no_rope or mha::rope<ThetaBase>
// With -DMHA_CF_OK (one token changed) it must compile.
#include <mha/grouped_query_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  mha::grouped_query_attention<float, 8, 16, 6, 4, 2, false, int> m{}; (void)m;
#else
  mha::grouped_query_attention<float, 8, 16, 6, 4, 2, false, mha::no_rope> m{}; (void)m;
#endif
  return 0;
}
