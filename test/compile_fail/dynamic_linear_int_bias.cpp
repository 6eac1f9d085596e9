// compile-fail case: mha::dynamic::linear with an integer where with_bias goes
// (a third size by mistake): it converted to bool and built a layer with
// bias; anything but a bool there is now a deleted constructor, as for the
// attention modules' qkv_bias.
// Must fail with: a deleted constructor (g++ "use of deleted function",
// clang++ "call to deleted constructor")
// With -DMHA_CF_OK (with_bias written true) it must compile.
#include <mha/dynamic.hpp>

int main() {
#ifndef MHA_CF_OK
  const mha::dynamic::linear<float> l(3, 2, 4);
#else
  const mha::dynamic::linear<float> l(3, 2, true);
#endif
  return static_cast<int>(l.out_features()) - 2;
}
