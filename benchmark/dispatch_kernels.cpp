// benchmark/dispatch_kernels.cpp -- built once per x86-64 level
// (mha_dispatch_sources: -march=<level>, MHA_DISPATCH_LEVEL) and once with
// -march=native (BENCH_DISPATCH_NATIVE: namespace native).
#include "dispatch_kernels.hpp"

#if defined(BENCH_DISPATCH_NATIVE)
#define BENCH_DISPATCH_NAMESPACE native
#else
#define BENCH_DISPATCH_NAMESPACE MHA_DISPATCH_NAMESPACE
#endif

namespace bench_dispatch::BENCH_DISPATCH_NAMESPACE {

void forward(const model& m, const input& x, output& out, workspace& ws) {
  m.forward(x, out, ws);
}

}  // namespace bench_dispatch::BENCH_DISPATCH_NAMESPACE
