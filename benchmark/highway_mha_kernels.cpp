// benchmark/highway_mha_kernels.cpp -- mha's side of mha_bench_highway, built
// once per x86-64 level by mha_dispatch_sources.
#include "highway_compare.hpp"

namespace bench_highway::MHA_DISPATCH_NAMESPACE {

void linear(const layer& l, const input& x, output& y) { l.forward(x, y); }

float dot16(const float* a, const float* b) {
  float s = 0.0f;
  for (std::size_t i = 0; i < 16; ++i) s += a[i] * b[i];
  return s;
}

}  // namespace bench_highway::MHA_DISPATCH_NAMESPACE
