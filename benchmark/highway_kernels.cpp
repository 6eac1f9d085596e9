// benchmark/highway_kernels.cpp -- Highway's side of mha_bench_highway
// (highway_compare.hpp): the kernels written once in Highway's portable
// vector operations, compiled for each of its x86 targets (foreach_target.h
// re-includes this file once per target) and dispatched by
// HWY_DYNAMIC_DISPATCH. Highway 1.0.3 (Debian libhwy-dev), its documented API
// (g3doc/quick_reference.md); built for the baseline, -march=x86-64.
#include <cstdio>
#include <cstring>

#include "highway_compare.hpp"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "highway_kernels.cpp"
#include <hwy/foreach_target.h>  // re-includes this file for each target
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace bench_highway {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// y [rows][out] = x [rows][in] * W^T + bias. weight_t holds W^T in panels of
/// 32 output features, [out / 32][in][32], so that a panel's rows are
/// contiguous; a register tile is 4 rows of x by two vectors of outputs (8
/// vector accumulators), its sum over `in` one multiply-add per element and
/// step. Panels outer, rows inner: a panel (in * 128 bytes) stays in cache
/// while every row block reads it.
void linear_impl(const float* HWY_RESTRICT weight_t, const float* HWY_RESTRICT bias,
                 const float* HWY_RESTRICT x, float* HWY_RESTRICT y, std::size_t rows,
                 std::size_t in, std::size_t out) {
  const hn::ScalableTag<float> d;
  const std::size_t n = hn::Lanes(d);
  constexpr std::size_t panel = 32;
  for (std::size_t p = 0; p < out; p += panel) {
    const float* wp = weight_t + p * in;
    for (std::size_t c = 0; c < panel; c += 2 * n) {
      const auto b0 = hn::LoadU(d, bias + p + c);
      const auto b1 = hn::LoadU(d, bias + p + c + n);
      for (std::size_t r = 0; r < rows; r += 4) {
        const float* x0 = x + r * in;
        const float* x1 = x0 + in;
        const float* x2 = x1 + in;
        const float* x3 = x2 + in;
        auto a00 = b0, a01 = b1, a10 = b0, a11 = b1, a20 = b0, a21 = b1, a30 = b0, a31 = b1;
        for (std::size_t i = 0; i < in; ++i) {
          const float* w = wp + i * panel + c;
          const auto w0 = hn::LoadU(d, w);
          const auto w1 = hn::LoadU(d, w + n);
          auto s = hn::Set(d, x0[i]);
          a00 = hn::MulAdd(s, w0, a00);
          a01 = hn::MulAdd(s, w1, a01);
          s = hn::Set(d, x1[i]);
          a10 = hn::MulAdd(s, w0, a10);
          a11 = hn::MulAdd(s, w1, a11);
          s = hn::Set(d, x2[i]);
          a20 = hn::MulAdd(s, w0, a20);
          a21 = hn::MulAdd(s, w1, a21);
          s = hn::Set(d, x3[i]);
          a30 = hn::MulAdd(s, w0, a30);
          a31 = hn::MulAdd(s, w1, a31);
        }
        float* y0 = y + r * out + p + c;
        hn::StoreU(a00, d, y0);
        hn::StoreU(a01, d, y0 + n);
        hn::StoreU(a10, d, y0 + out);
        hn::StoreU(a11, d, y0 + out + n);
        hn::StoreU(a20, d, y0 + 2 * out);
        hn::StoreU(a21, d, y0 + 2 * out + n);
        hn::StoreU(a30, d, y0 + 3 * out);
        hn::StoreU(a31, d, y0 + 3 * out + n);
      }
    }
  }
}

/// The 16-element dot product, plain C++ (the compiler vectorises it for
/// the target or not): only the call mechanism differs from mha's dot16.
float dot16_impl(const float* a, const float* b) {
  float s = 0.0f;
  for (std::size_t i = 0; i < 16; ++i) s += a[i] * b[i];
  return s;
}

/// The target this copy was compiled for.
const char* target_impl() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace bench_highway
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace bench_highway {

HWY_EXPORT(linear_impl);
HWY_EXPORT(dot16_impl);
HWY_EXPORT(target_impl);

void hwy_linear(const float* weight_t, const float* bias, const float* x, float* y,
                std::size_t rows, std::size_t in, std::size_t out) {
  HWY_DYNAMIC_DISPATCH(linear_impl)(weight_t, bias, x, y, rows, in, out);
}

float hwy_dot16(const float* a, const float* b) { return HWY_DYNAMIC_DISPATCH(dot16_impl)(a, b); }

bool hwy_force(const char* target_name) {
  hwy::SetSupportedTargetsForTest(0);  // the CPU's own targets
  if (target_name != nullptr) {
    bool found = false;
    for (const std::int64_t t : hwy::SupportedAndGeneratedTargets()) {
      if (std::strcmp(hwy::TargetName(t), target_name) == 0) {
        hwy::SetSupportedTargetsForTest(t);
        found = true;
      }
    }
    if (!found) return false;
  }
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
  return true;
}

void hwy_print_targets() {
  hwy::SetSupportedTargetsForTest(0);
  std::printf("Highway targets built and supported here:");
  for (const std::int64_t t : hwy::SupportedAndGeneratedTargets())
    std::printf(" %s", hwy::TargetName(t));
  std::printf("\n");
}

const char* hwy_current() { return HWY_DYNAMIC_DISPATCH(target_impl)(); }

}  // namespace bench_highway
#endif  // HWY_ONCE
