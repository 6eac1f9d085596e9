// mha/detail/arch/subnormals.hpp -- one treatment of subnormal floats on every path
// of a target: IEEE subnormals, or flush to zero where the target's vector
// arithmetic flushes (Cortex-M55's MVE), then on its scalar and constexpr
// paths too.
//
// Arm's M-profile vector extension evaluates its floating-point instructions
// with the "standard FPSCR value" (flush-to-zero, default NaN, round to
// nearest) whatever FPSCR says: a subnormal input counts as a zero of its
// sign, and a result whose exact value is below the smallest normal float in
// magnitude (tininess before rounding) becomes a zero of its sign. (Armv7's
// Advanced SIMD does the same; the library uses none of its floating-point
// arithmetic on AArch32, detail/arch/muladd.hpp.) The scalar FPU keeps IEEE
// subnormals unless FPSCR.FZ is set. So that every path of such a target
// gives the same bits (issue 10, item 2):
//  * at run time, flush_scope sets FPSCR.FZ for the duration of a library
//    call (the kernels' entry points), so the scalar FPU flushes exactly as
//    the vector instructions do; it restores FZ afterwards (the other FPSCR
//    bits, e.g. the cumulative exception flags, are left as the call made
//    them; an exception handler runs with its own FPSCR, FPDSCR's default);
//  * in constant evaluation the fp:: operations below (add_ftz, ...) and
//    constexpr_fma_ftz (detail/arch/muladd.hpp) flush inputs and results the same
//    way.
// Elsewhere (flushes_subnormals false) all of it is the plain operation.
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <type_traits>

#include <mha/detail/macros.hpp>

namespace mha::detail {
MHA_DETAIL_ISA_NAMESPACE {

/// True where float arithmetic flushes subnormals to zero on every path of
/// the library: targets with MVE floating point (Cortex-M55, M85).
#if defined(__arm__) && defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
inline constexpr bool flushes_subnormals = true;
#else
inline constexpr bool flushes_subnormals = false;
#endif

/// The smallest normal float, 2^-126.
inline constexpr float min_normal_float = 1.17549435082228750797e-38f;

/// x, or a zero of x's sign where x is subnormal: Arm's flush of one input
/// or exact result in flush-to-zero mode.
constexpr float flush_subnormal(float x) noexcept {
  if (x != 0.0f && x < min_normal_float && x > -min_normal_float) return x < 0.0f ? -0.0f : 0.0f;
  return x;
}

/// a + b, a - b, a * b and a / b for floats as Arm's flush-to-zero mode
/// computes them, in constant expressions: subnormal inputs count as zeros of
/// their sign; a result whose exact value is nonzero and below 2^-126 in
/// magnitude (tininess before rounding) is a zero of its sign, else the
/// correctly rounded one. A sum or difference that is tiny is exact (so
/// flushing the rounded one is the same); a product or quotient is flushed
/// when its exact value is tiny, even where it would round up to 2^-126.
constexpr float add_ftz(float a, float b) noexcept {
  return flush_subnormal(flush_subnormal(a) + flush_subnormal(b));
}
constexpr float sub_ftz(float a, float b) noexcept {
  return flush_subnormal(flush_subnormal(a) - flush_subnormal(b));
}
constexpr float mul_ftz(float a, float b) noexcept {
  a = flush_subnormal(a);
  b = flush_subnormal(b);
  const double exact = static_cast<double>(a) * static_cast<double>(b);  // 48 bits: exact
  if (exact != 0.0 && exact < min_normal_float && exact > -min_normal_float)
    return exact < 0.0 ? -0.0f : 0.0f;
  return a * b;
}
constexpr float div_ftz(float a, float b) noexcept {
  a = flush_subnormal(a);
  b = flush_subnormal(b);
  // |a / b| < 2^-126 exactly when |a| < 2^-126 |b| (exact in double)
  const double abs_a = a < 0.0f ? -static_cast<double>(a) : static_cast<double>(a);
  const double abs_b = b < 0.0f ? -static_cast<double>(b) : static_cast<double>(b);
  if (a != 0.0f && abs_a < static_cast<double>(min_normal_float) * abs_b)
    return (a < 0.0f) != (b < 0.0f) ? -0.0f : 0.0f;
  return a / b;
}

/// While it lives at run time on a target that flushes subnormals, for
/// kernels of element type T = float: FPSCR.FZ (bit 24) is set, so the scalar
/// FPU flushes them as the vector instructions do; the destructor puts FZ
/// back as it was. Nothing for other T (FZ would flush doubles too, which no
/// vector instruction computes and constant evaluation keeps IEEE: double
/// stays IEEE on every path), elsewhere or in constant evaluation. Not
/// copyable.
template <class T>
class flush_scope {
 public:
  MHA_DETAIL_INLINE constexpr flush_scope() noexcept {
#if defined(__arm__) && defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
    if constexpr (std::is_same_v<T, float>)
      if (!std::is_constant_evaluated()) {
        saved_ = __builtin_arm_get_fpscr();
        __builtin_arm_set_fpscr(saved_ | fz);
      }
#endif
  }
  MHA_DETAIL_INLINE constexpr ~flush_scope() {
#if defined(__arm__) && defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
    if constexpr (std::is_same_v<T, float>)
      if (!std::is_constant_evaluated())
        __builtin_arm_set_fpscr((__builtin_arm_get_fpscr() & ~fz) | (saved_ & fz));
#endif
  }
  flush_scope(const flush_scope&) = delete;
  flush_scope& operator=(const flush_scope&) = delete;

 private:
#if defined(__arm__) && defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
  static constexpr unsigned fz = 1u << 24;
  unsigned saved_ = 0;
#endif
};

/// The arithmetic of the kernels' scalar and constexpr paths where a float
/// result could be subnormal: the plain operation, except in constant
/// evaluation on a target that flushes subnormals, where it is add_ftz,
/// sub_ftz, mul_ftz or div_ftz (what the hardware computes at run time under
/// flush_scope). For float, double and GCC/Clang vectors alike (only float
/// is flushed).
namespace fp {
template <class T>
MHA_DETAIL_INLINE constexpr T add(T a, T b) noexcept {
  if constexpr (flushes_subnormals && std::is_same_v<T, float>)
    if (std::is_constant_evaluated()) return add_ftz(a, b);
  return a + b;
}
template <class T>
MHA_DETAIL_INLINE constexpr T sub(T a, T b) noexcept {
  if constexpr (flushes_subnormals && std::is_same_v<T, float>)
    if (std::is_constant_evaluated()) return sub_ftz(a, b);
  return a - b;
}
template <class T>
MHA_DETAIL_INLINE constexpr T mul(T a, T b) noexcept {
  if constexpr (flushes_subnormals && std::is_same_v<T, float>)
    if (std::is_constant_evaluated()) return mul_ftz(a, b);
  return a * b;
}
template <class T>
MHA_DETAIL_INLINE constexpr T div(T a, T b) noexcept {
  if constexpr (flushes_subnormals && std::is_same_v<T, float>)
    if (std::is_constant_evaluated()) return div_ftz(a, b);
  return a / b;
}
}  // namespace fp

}  // namespace MHA_DETAIL_ISA
}  // namespace mha::detail

#include <mha/detail/macros_undef.hpp>
