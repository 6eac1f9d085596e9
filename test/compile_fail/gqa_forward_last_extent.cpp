// compile-fail case: an input of 7 features for a module of DIn 8.
// Must fail with: mha::grouped_query_attention::forward: input last extent must equal DIn
// With -DMHA_CF_OK (one token changed) it must compile.
#include <mha/grouped_query_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::grouped_query_attention<float, 8, 16, 6, 4, 2> m{}; const mha::tensor<float, 2, 3, 7> x{}; (void)m.forward(x);
#else
  const mha::grouped_query_attention<float, 8, 16, 6, 4, 2> m{}; const mha::tensor<float, 2, 3, 8> x{}; (void)m.forward(x);
#endif
  return 0;
}
