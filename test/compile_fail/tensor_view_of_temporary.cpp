// compile-fail case: a tensor_view of a temporary tensor (it would dangle at
// the end of the full expression; found by the adversarial trial, issue 12).
// Must fail with: a deleted constructor (g++ "use of deleted function",
// clang++ "call to deleted constructor")
// With -DMHA_CF_OK (the tensor is a named object) it must compile.
#include <mha/tensor_view.hpp>

mha::tensor<float, 6, 3> make_input() { return {}; }

int main() {
#ifndef MHA_CF_OK
  mha::tensor_view<const float, 6, 3> v = make_input();
#else
  const auto x = make_input();
  mha::tensor_view<const float, 6, 3> v = x;
#endif
  (void)v;
  return 0;
}
