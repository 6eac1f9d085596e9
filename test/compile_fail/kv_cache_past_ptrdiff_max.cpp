// compile-fail case: the KV cache of a module whose ContextLength makes the
// cache's size in bytes fit std::size_t but not an object (2^63 + 8 bytes,
// past PTRDIFF_MAX). Found by a breaker trial: the compilers' own "size of
// type is too large" came instead of the library's error.
// Must fail with: mha::kv_cache: 2 \* Batch \* num_heads \* head_dim \* Capacity elements exceed the largest object size in bytes, PTRDIFF_MAX
// With -DMHA_CF_OK (a sane ContextLength) it must compile.
#include <cstddef>

#include <mha/multi_head_attention.hpp>

#ifndef MHA_CF_OK
using model = mha::multi_head_attention<float, 4, 4, (std::size_t{1} << 58), 2>;
#else
using model = mha::multi_head_attention<float, 4, 4, 8, 2>;
#endif

int main() {
  using cache = model::kv_cache<1>;
  static_assert(cache::batch == 1);
  return sizeof(cache) > 0 ? 0 : 1;
}
