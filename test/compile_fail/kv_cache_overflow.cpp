// compile-fail case: the KV cache of a module whose ContextLength makes the
// cache's size in bytes overflow std::size_t (found by an adversarial trial:
// the arrays wrapped to 0 elements and the cached forward overran the heap).
// Must fail with: mha::kv_cache: 2 \* Batch \* num_heads \* head_dim \* Capacity elements exceed the largest object size in bytes, PTRDIFF_MAX
// With -DMHA_CF_OK (a sane ContextLength) it must compile.
#include <cstddef>

#include <mha/multi_head_attention.hpp>

#ifndef MHA_CF_OK
using model = mha::multi_head_attention<float, 1, 2, (std::size_t{1} << 63), 1>;
#else
using model = mha::multi_head_attention<float, 1, 2, 8, 1>;
#endif

int main() {
  using cache = model::kv_cache<1>;
  static_assert(cache::batch == 1);
  return sizeof(cache) > 0 ? 0 : 1;
}
