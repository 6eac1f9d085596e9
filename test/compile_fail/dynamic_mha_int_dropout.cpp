// compile-fail case: mha::dynamic::multi_head_attention in the book's argument
// order (d_in, d_out, context_length, dropout, num_heads) with an integer
// dropout 0: it matched (d_in, d_out, context_length, num_heads, qkv_bias),
// 0 heads and qkv_bias true, and threw at run time; anything but a bool where
// qkv_bias goes is now a deleted constructor.
// Must fail with: a deleted constructor (g++ "use of deleted function",
// clang++ "call to deleted constructor")
// With -DMHA_CF_OK (the dropout written 0.0) it must compile.
#include <mha/dynamic.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::dynamic::multi_head_attention<float> m(3, 2, 6, 0, 2);
#else
  const mha::dynamic::multi_head_attention<float> m(3, 2, 6, 0.0, 2);
#endif
  return static_cast<int>(m.num_heads()) - 2;
}
