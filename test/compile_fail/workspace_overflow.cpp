// compile-fail case: a workspace whose size in bytes overflows std::size_t
// (the score rows of ContextLength keys; found by an adversarial trial: the
// storage wrapped to a few elements).
// Must fail with: mha::workspace: its size in bytes exceeds the largest object size, PTRDIFF_MAX
// With -DMHA_CF_OK (a sane ContextLength) it must compile.
#include <cstddef>

#include <mha/multi_head_attention.hpp>

#ifndef MHA_CF_OK
using model = mha::multi_head_attention<float, 1, 2, (std::size_t{1} << 63), 1>;
#else
using model = mha::multi_head_attention<float, 1, 2, 8, 1>;
#endif

int main() {
  using ws = model::workspace<1, 1>;
  return sizeof(ws) > 0 ? 0 : 1;
}
