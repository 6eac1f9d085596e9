// compile-fail case: assigning a non-causal head to a causal one (the wrapper's
// heads, or any causal_attention, keep their attention mask).
// Must fail with: mha::causal_attention: cannot assign a causal_attention of a different element type, shape, qkv bias setting or attention mask
// With -DMHA_CF_OK (one token changed) it must compile.
#include <mha/causal_attention.hpp>

int main() {
  mha::causal_attention<float, 3, 2, 6> causal{};
#ifndef MHA_CF_OK
  const mha::causal_attention<float, 3, 2, 6, false, mha::attention_mask::none> other{};
#else
  const mha::causal_attention<float, 3, 2, 6, false, mha::attention_mask::causal> other{};
#endif
  causal = other;
  return 0;
}
