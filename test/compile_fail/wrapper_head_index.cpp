// compile-fail case: wrapper head<H>() with H >= NumHeads.
// Must fail with: mha::multi_head_attention_wrapper::head: head index H must be less than NumHeads
// With -DMHA_CF_OK (one token changed) it must compile.
#include <cstddef>

#include <mha/multi_head_attention_wrapper.hpp>

int main() {
#ifndef MHA_CF_OK
  mha::multi_head_attention_wrapper<float, 3, 2, 6, 2> m{};
  m.head<2>().dropout = 0.1f;
#else
  mha::multi_head_attention_wrapper<float, 3, 2, 6, 2> m{};
  m.head<1>().dropout = 0.1f;
#endif
  return 0;
}
