// compile-fail case: MHA_DISPATCH_NAMESPACE in a file that mha_dispatch_sources
// does not build (no MHA_DISPATCH_LEVEL): a forgotten mha_dispatch_sources
// would otherwise define a namespace literally called MHA_DISPATCH_NAMESPACE
// and fail only at link time (docs/dispatch.md).
// Must fail with: MHA_DISPATCH_NAMESPACE: this file is not built by mha_dispatch_sources
// With -DMHA_CF_OK (one token changed) it must compile.
#include <mha/dispatch.hpp>

namespace consumer {
MHA_DISPATCH_DECLARE(twice, int(int));
#ifndef MHA_CF_OK
namespace MHA_DISPATCH_NAMESPACE {
#else
namespace mha_dispatch_x86_64 {
#endif
int twice(int x) { return 2 * x; }
}  // namespace
}  // namespace consumer

int main() { return consumer::twice(0); }
