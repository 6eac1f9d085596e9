// compile-fail case: fuse_qkv(m) returning a fused model over MHA_STACK_WORKSPACE_LIMIT by value.
// Must fail with: mha::fuse_qkv: the fused model exceeds MHA_STACK_WORKSPACE_LIMIT bytes
// With -DMHA_CF_OK (one token changed) it must compile.
#ifndef MHA_CF_OK
#define MHA_STACK_WORKSPACE_LIMIT 1024
#else
#define MHA_STACK_WORKSPACE_LIMIT 1024
#endif
#include <cstddef>

#include <mha/fused_multi_head_attention.hpp>

int main() {
#ifndef MHA_CF_OK
  using model = mha::multi_head_attention<float, 8, 8, 6, 2>;  // fused: 1060 bytes
  const model m{};
  const auto f = mha::fuse_qkv(m);
  (void)f;
#else
  using model = mha::multi_head_attention<float, 8, 4, 6, 2>;  // fused: 468 bytes
  const model m{};
  const auto f = mha::fuse_qkv(m);
  (void)f;
#endif
  return 0;
}
