// compile-fail case: assigning a causal_attention head of the wrong shape to a wrapper's head.
// Must fail with: mha::causal_attention: cannot assign a causal_attention of a different element type, shape, qkv bias setting or attention mask
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/multi_head_attention_wrapper.hpp>

int main() {
  mha::multi_head_attention_wrapper<float, 3, 2, 6, 2> w{};
#ifndef MHA_CF_OK
  const mha::causal_attention<float, 3, 3, 6> head{};
#else
  const mha::causal_attention<float, 3, 2, 6> head{};
#endif
  w.head<1>() = head;
  return 0;
}
