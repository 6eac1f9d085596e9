// isa_main.cpp -- links copies of isa_tu.cpp built for different instruction
// sets into one program (issue 11, defect 6: the SIMD width and FMA come from
// -m flags, so two translation units built with and without -mavx512f used to
// export the same weak mha:: kernels with different bodies, and the linker
// kept one of them for both).
//
// Runs the baseline copy, and the AVX-512 copy when the CPU has AVX-512
// (otherwise it is only linked), and checks that
//  * each copy uses its own ISA namespace (mha::detail::isa_name differs);
//  * within each copy, the outputs that the library promises to be
//    bit-identical are (fixed-size vs mha::dynamic, fused vs unfused): a copy
//    that ran another copy's kernels breaks this first;
//  * the two copies agree to the suite's tolerance (|a - b| <= rtol *
//    max(1, |b|), rtol 1e-5 for float outputs, 1e-12 for double; vector width
//    and fused multiply-adds change the rounding, not the result), but not bit
//    for bit in float (the AVX-512 copy ran its own kernels).
// Exit status 0 on success.
#include <cmath>
#include <cstdio>
#include <cstring>

#include "isa_run.hpp"

void isa_run_baseline(isa_test::run& r);
#if defined(ISA_TEST_HAVE_AVX512)
void isa_run_avx512(isa_test::run& r);
#endif

namespace {

int failures = 0;

void check_twins(const char* name, const isa_test::run& r) {
  std::printf("%s copy: ISA namespace %s, %zu values\n", name, r.isa_namespace, r.count);
  if (r.twin_mismatches != 0) {
    std::printf("FAIL: %s copy: %zu bit-identity check(s) failed, first: %s\n", name,
                r.twin_mismatches, r.first_mismatch != nullptr ? r.first_mismatch : "a status");
    ++failures;
  }
}

/// The AVX-512 copy's outputs against the baseline's: |a - e| <= rtol * max(1, |e|).
template <class T>
void compare(const char* what, const T* wide, const T* base, std::size_t n, double rtol) {
  std::size_t bad = 0;
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double a = static_cast<double>(wide[i]), e = static_cast<double>(base[i]);
    const double allowed = rtol * (std::fabs(e) > 1.0 ? std::fabs(e) : 1.0);
    const double err = std::fabs(a - e);
    if (!(err <= allowed)) {
      if (bad == 0) std::printf("FAIL: %s value %zu: AVX-512 %.17g, baseline %.17g\n", what, i, a, e);
      ++bad;
    }
    if (err / allowed > worst) worst = err / allowed;
  }
  std::printf("AVX-512 vs baseline, %s: %zu of %zu values out of tolerance (worst error / allowed "
              "= %.3g)\n", what, bad, n, worst);
  if (bad != 0) ++failures;
}

}  // namespace

int main() {
  static isa_test::run baseline;
  isa_run_baseline(baseline);
  check_twins("baseline", baseline);
#if defined(ISA_TEST_HAVE_AVX512)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq")) {
    static isa_test::run wide;
    isa_run_avx512(wide);
    check_twins("AVX-512", wide);
    if (std::strcmp(baseline.isa_namespace, wide.isa_namespace) == 0) {
      std::printf("FAIL: both copies use the ISA namespace %s\n", wide.isa_namespace);
      ++failures;
    }
    if (wide.count != baseline.count || wide.double_count != baseline.double_count) {
      std::printf("FAIL: the copies recorded different numbers of values\n");
      ++failures;
    } else {
      compare("float", wide.values, baseline.values, baseline.count, 1e-5);
      compare("double", wide.double_values, baseline.double_values, baseline.double_count, 1e-12);
      // 16 float lanes instead of 4 associate the softmax sums differently, so
      // some bits differ; none would mean the AVX-512 copy ran baseline kernels
      if (std::memcmp(wide.values, baseline.values, baseline.count * sizeof(float)) == 0) {
        std::printf("FAIL: the AVX-512 copy's float outputs equal the baseline's bit for bit: it "
                    "ran the baseline kernels\n");
        ++failures;
      }
    }
  } else {
    std::printf("the CPU lacks AVX-512: the AVX-512 copy is linked but not run\n");
  }
#else
  std::printf("the compiler has no -march=x86-64-v4: baseline copy only\n");
#endif
  return failures == 0 ? 0 : 1;
}
