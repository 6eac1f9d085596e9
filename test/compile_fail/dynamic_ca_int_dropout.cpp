// compile-fail case: mha::dynamic::causal_attention in the book's argument
// order (d_in, d_out, context_length, dropout) with an integer dropout 1: it
// converted to qkv_bias true; anything but a bool where qkv_bias goes is now a
// deleted constructor.
// Must fail with: a deleted constructor (g++ "use of deleted function",
// clang++ "call to deleted constructor")
// With -DMHA_CF_OK (the dropout written 1.0) it must compile.
#include <mha/dynamic.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::dynamic::causal_attention<float> m(3, 2, 6, 1);
#else
  const mha::dynamic::causal_attention<float> m(3, 2, 6, 1.0);
#endif
  return m.qkv_bias() ? 1 : 0;
}
