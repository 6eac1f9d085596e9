// mha/detail/arch/muladd.hpp -- the one multiply-add of every sum in the kernels,
// the constexpr math and simd::exp, with its contraction made explicit.
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <mha/detail/arch/subnormals.hpp>

#include <mha/detail/macros.hpp>

#if defined(MHA_DETAIL_FMA_FLOAT) && (defined(__x86_64__) || defined(__i386__)) && \
    (defined(__FMA__) || defined(__AVX512F__))
#include <immintrin.h>
#define MHA_DETAIL_FMA_X86 1
#elif defined(MHA_DETAIL_FMA_FLOAT) && defined(__ARM_NEON) && defined(__aarch64__)
// (AArch64 only: Armv7's Advanced SIMD flushes subnormals to zero whatever
// FPSCR says, while its VFP does not, so on AArch32 the vector multiply-adds
// are the VFP's scalar fused multiply-adds, lane by lane: IEEE on every path,
// as GCC itself keeps float vector arithmetic off Armv7's NEON)
#include <arm_neon.h>
#define MHA_DETAIL_FMA_NEON 1
#elif defined(MHA_DETAIL_FMA_FLOAT) && defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
// M-profile vector extension with floating point (Cortex-M55, M85)
#include <arm_mve.h>
#define MHA_DETAIL_FMA_MVE 1
#endif

namespace mha::detail {
MHA_DETAIL_ISA_NAMESPACE {

/// True when this translation unit's target has a fused multiply-add
/// instruction for T (float or double): then every multiply-add of the library
/// is fused (one rounding), else every one is a multiply then an add (two
/// roundings). Decided by the target alone (detail/macros.hpp,
/// MHA_DETAIL_FMA_FLOAT / _DOUBLE), never by -ffp-contract.
template <class T>
inline constexpr bool has_fma =
#if defined(MHA_DETAIL_FMA_DOUBLE)
    std::is_same_v<T, double> ||
#endif
#if defined(MHA_DETAIL_FMA_FLOAT)
    std::is_same_v<T, float> ||
#endif
    false;

/// a * b + c for floats with one rounding (round to nearest even), evaluable
/// in a constant expression: the product of two floats is exact in double;
/// the sum p + c is taken in double rounded to odd (the double nearest, with
/// the last bit forced to 1 when the sum was inexact), which then rounds to
/// the correctly rounded float (Boldo and Melquiond, "Emulation of FMA and
/// correctly rounded sums: proved algorithms using rounding to odd", IEEE
/// Trans. Computers 57(4), 2008). Equals std::fma(a, b, c) on every finite
/// input (test/test_math.cpp); infinities and NaN propagate as in a * b + c.
constexpr float constexpr_fma(float a, float b, float c) noexcept {
  const double p = static_cast<double>(a) * static_cast<double>(b);  // exact
  const double dc = static_cast<double>(c);
  const double s = p + dc;
  constexpr double max = 1.79769313486231570815e+308;
  if (!(s >= -max && s <= max) || !(p >= -max && p <= max)) return static_cast<float>(s);
  // Knuth's TwoSum: s + err == p + dc exactly
  const double bp = s - dc;
  const double err = (p - bp) + (dc - (s - bp));
  auto bits = std::bit_cast<std::uint64_t>(s);
  if (err != 0.0 && (bits & 1u) == 0) {
    // the neighbour of s towards the exact sum: its last bit is 1
    if ((err > 0.0) == (s > 0.0))
      ++bits;
    else
      --bits;
  }
  return static_cast<float>(std::bit_cast<double>(bits));
}

/// constexpr_fma where the target flushes subnormals (detail/arch/subnormals.hpp):
/// subnormal inputs count as zeros of their sign, and a result whose exact
/// value a * b + c is nonzero and below 2^-126 in magnitude (tininess before
/// rounding) is a zero of its sign, as Arm's flush-to-zero mode gives it;
/// otherwise constexpr_fma's bits. The exact value is s + err of Knuth's
/// TwoSum on the exact product and c (as in constexpr_fma): it is tiny when
/// |s| < 2^-126, or |s| == 2^-126 with err of the other sign.
constexpr float constexpr_fma_ftz(float a, float b, float c) noexcept {
  a = flush_subnormal(a);
  b = flush_subnormal(b);
  c = flush_subnormal(c);
  const double p = static_cast<double>(a) * static_cast<double>(b);  // exact
  const double dc = static_cast<double>(c);
  const double s = p + dc;
  constexpr double max = 1.79769313486231570815e+308;
  if (s >= -max && s <= max && p >= -max && p <= max && s != 0.0) {
    const double bp = s - dc;
    const double err = (p - bp) + (dc - (s - bp));
    const double tiny = static_cast<double>(min_normal_float);
    const double abs_s = s < 0.0 ? -s : s;
    if (abs_s < tiny || (abs_s == tiny && err != 0.0 && (err < 0.0) != (s < 0.0)))
      return s < 0.0 ? -0.0f : 0.0f;
  }
  return constexpr_fma(a, b, c);
}

namespace fma_detail {
/// A finite double as sign, significand and exponent: |x| = m * 2^e.
struct unpacked {
  bool negative;
  std::uint64_t m;
  int e;
};
constexpr unpacked unpack(double x) noexcept {
  const auto bits = std::bit_cast<std::uint64_t>(x);
  const int biased = static_cast<int>((bits >> 52) & 0x7FF);
  const std::uint64_t frac = bits & ((std::uint64_t{1} << 52) - 1);
  if (biased == 0) return {(bits >> 63) != 0, frac, -1074};  // zero or subnormal
  return {(bits >> 63) != 0, frac | (std::uint64_t{1} << 52), biased - 1075};
}
/// A 128-bit unsigned integer as two halves (no __int128 on 32-bit targets).
struct u128 {
  std::uint64_t hi, lo;
};
constexpr u128 mul_64x64(std::uint64_t a, std::uint64_t b) noexcept {
  const std::uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32, b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
  const std::uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const std::uint64_t mid = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
  return {p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32), (mid << 32) | (p00 & 0xFFFFFFFFu)};
}
constexpr bool less(u128 a, u128 b) noexcept { return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo); }
constexpr u128 add(u128 a, u128 b) noexcept {
  const std::uint64_t lo = a.lo + b.lo;
  return {a.hi + b.hi + (lo < a.lo ? 1u : 0u), lo};
}
constexpr u128 sub(u128 a, u128 b) noexcept {  // a >= b
  return {a.hi - b.hi - (a.lo < b.lo ? 1u : 0u), a.lo - b.lo};
}
constexpr int bit_width(u128 a) noexcept {
  return a.hi != 0 ? 64 + static_cast<int>(std::bit_width(a.hi))
                   : static_cast<int>(std::bit_width(a.lo));
}
/// a >> n for n >= 0.
constexpr u128 shift_right(u128 a, int n) noexcept {
  if (n <= 0) return a;
  if (n >= 128) return {0, 0};
  if (n >= 64) return {0, a.hi >> (n - 64)};
  return {a.hi >> n, (a.lo >> n) | (a.hi << (64 - n))};
}
/// a << n for 0 <= n < 128 (the caller loses no bit).
constexpr u128 shift_left(u128 a, int n) noexcept {
  if (n <= 0) return a;
  if (n >= 64) return {a.lo << (n - 64), 0};
  return {(a.hi << n) | (a.lo >> (64 - n)), a.lo << n};
}
/// True when a mod 2^n != 0 (n >= 0).
constexpr bool low_bits(u128 a, int n) noexcept {
  if (n <= 0) return false;
  if (n >= 128) return (a.hi | a.lo) != 0;
  if (n > 64) return a.lo != 0 || (a.hi << (128 - n)) != 0;
  if (n == 64) return a.lo != 0;
  return (a.lo << (64 - n)) != 0;
}
/// a >> n with the bits shifted out ORed into the lowest bit (sticky).
constexpr u128 shift_right_sticky(u128 a, int n) noexcept {
  u128 r = shift_right(a, n);
  if (low_bits(a, n)) r.lo |= 1u;
  return r;
}
/// m * 2^e (m < 2^54, exactly representable or overflowing) as a double.
constexpr double compose(bool negative, std::uint64_t m, int e) noexcept {
  const std::uint64_t sign = negative ? std::uint64_t{1} << 63 : 0;
  if (m == 0) return std::bit_cast<double>(sign);
  if (m >> 53 != 0) {  // 2^53 after a rounding carry
    m >>= 1;
    ++e;
  }
  const int lead = static_cast<int>(std::bit_width(m)) - 1;
  const int top = e + lead;
  std::uint64_t bits = 0;
  if (top > 1023)
    bits = std::uint64_t{0x7FF} << 52;  // infinity
  else if (top < -1022)
    bits = m << (e + 1074);  // subnormal: m * 2^e = bits * 2^-1074
  else
    bits = (static_cast<std::uint64_t>(top + 1023) << 52) |
           ((m << (52 - lead)) & ((std::uint64_t{1} << 52) - 1));
  return std::bit_cast<double>(sign | bits);
}
}  // namespace fma_detail

/// a * b + c for doubles with one rounding (round to nearest even), evaluable
/// in a constant expression: the exact product (106 bits) and c, both
/// normalised to 126-bit integers, the one of smaller exponent shifted right
/// with a sticky bit, added or subtracted in 128 bits, then rounded once to 53
/// bits (fewer for a subnormal result). Equals std::fma(a, b, c) on every
/// finite input (test/test_math.cpp); infinities and NaN propagate as in
/// a * b + c.
constexpr double constexpr_fma(double a, double b, double c) noexcept {
  using namespace fma_detail;
  constexpr double max = 1.79769313486231570815e+308;
  const auto finite = [](double x) { return x >= -max && x <= max; };
  if (!finite(a) || !finite(b)) return a * b + c;
  if (!finite(c)) return c;  // the exact product is finite
  const unpacked ua = unpack(a), ub = unpack(b), uc = unpack(c);
  const bool pneg = ua.negative != ub.negative;
  if (ua.m == 0 || ub.m == 0) {
    // an exact zero product: the sum is c, or a zero whose sign follows
    // round to nearest (+0 unless both zeros are negative)
    if (uc.m == 0) return pneg && uc.negative ? -0.0 : 0.0;
    return c;
  }
  if (uc.m == 0) return a * b;  // the rounded product (never an exact zero)
  constexpr int width = 126;
  u128 p = mul_64x64(ua.m, ub.m);
  const int sp = width - bit_width(p);
  p = shift_left(p, sp);
  const int ep = ua.e + ub.e - sp;
  u128 q{0, uc.m};
  const int sq = width - bit_width(q);
  q = shift_left(q, sq);
  const int eq = uc.e - sq;
  // big: the term of larger exponent (of larger magnitude when equal)
  const bool p_big = ep > eq || (ep == eq && !less(p, q));
  const u128 big = p_big ? p : q;
  const bool big_neg = p_big ? pneg : uc.negative;
  const bool small_neg = p_big ? uc.negative : pneg;
  const int e = p_big ? ep : eq;
  const u128 small = shift_right_sticky(p_big ? q : p, p_big ? ep - eq : eq - ep);
  u128 sum{};
  if (big_neg == small_neg) {
    sum = add(big, small);
  } else {
    if (!less(small, big)) return 0.0;  // exact cancellation: +0
    sum = sub(big, small);
  }
  // sum * 2^e, rounded to the bits a double keeps at its magnitude
  const int w = bit_width(sum);
  const int top = e + w - 1;                       // exponent of the leading bit
  const int keep = top >= -1022 ? 53 : top + 1075;  // subnormal: down to 2^-1074
  const int drop = w - keep;
  if (drop <= 0) return compose(big_neg, sum.lo, e);  // exact
  std::uint64_t m = shift_right(sum, drop).lo;
  const bool half = drop - 1 < 128 && (shift_right(sum, drop - 1).lo & 1u) != 0;
  const bool rest = low_bits(sum, drop - 1);
  if (half && (rest || (m & 1u) != 0)) ++m;
  return compose(big_neg, m, e + drop);
}

/// a * b + c with one rounding, for float or double: the fused multiply-add
/// instruction at run time, constexpr_fma in constant evaluation (the same
/// bits; constexpr_fma_ftz for float where subnormals flush, as the
/// instruction does there under flush_scope).
template <class T>
MHA_DETAIL_INLINE constexpr T fma(T a, T b, T c) noexcept {
  if (std::is_constant_evaluated()) {
    if constexpr (flushes_subnormals && std::is_same_v<T, float>)
      return constexpr_fma_ftz(a, b, c);
    else
      return constexpr_fma(a, b, c);
  }
  if constexpr (std::is_same_v<T, float>)
    return __builtin_fmaf(a, b, c);
  else
    return __builtin_fma(a, b, c);
}

/// a * b + c with two roundings (a multiply, then an add), never fused:
/// only used where the target has no fused multiply-add for T (has_fma), so
/// the compiler has no instruction to contract the two into; Clang is also
/// told not to.
template <class V>
MHA_DETAIL_INLINE constexpr V mul_add_unfused(V a, V b, V c) noexcept {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
  const V p = a * b;
  return p + c;
}

namespace simd_fma {
template <class V>
using elem = std::remove_cvref_t<decltype(std::declval<V>()[0])>;
template <class V, std::size_t... I>
MHA_DETAIL_INLINE V splat(elem<V> s, std::index_sequence<I...>) noexcept {
  return V{((void)I, s)...};
}
/// a * b + c lane-wise with one rounding, for GCC/Clang vectors: the target's
/// vector FMA instruction where there is one for this width, else lane by lane.
template <class V>
MHA_DETAIL_INLINE V fma(V a, V b, V c) noexcept {
  using E = elem<V>;
#if defined(MHA_DETAIL_FMA_X86)
#if defined(__FMA__)
  if constexpr (std::is_same_v<E, float> && sizeof(V) == 16)
    return std::bit_cast<V>(_mm_fmadd_ps(std::bit_cast<__m128>(a), std::bit_cast<__m128>(b),
                                         std::bit_cast<__m128>(c)));
  else if constexpr (std::is_same_v<E, double> && sizeof(V) == 16)
    return std::bit_cast<V>(_mm_fmadd_pd(std::bit_cast<__m128d>(a), std::bit_cast<__m128d>(b),
                                         std::bit_cast<__m128d>(c)));
  else if constexpr (std::is_same_v<E, float> && sizeof(V) == 32)
    return std::bit_cast<V>(_mm256_fmadd_ps(std::bit_cast<__m256>(a), std::bit_cast<__m256>(b),
                                            std::bit_cast<__m256>(c)));
  else if constexpr (std::is_same_v<E, double> && sizeof(V) == 32)
    return std::bit_cast<V>(_mm256_fmadd_pd(std::bit_cast<__m256d>(a), std::bit_cast<__m256d>(b),
                                            std::bit_cast<__m256d>(c)));
  else
#endif
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<E, float> && sizeof(V) == 64)
    return std::bit_cast<V>(_mm512_fmadd_ps(std::bit_cast<__m512>(a), std::bit_cast<__m512>(b),
                                            std::bit_cast<__m512>(c)));
  else if constexpr (std::is_same_v<E, double> && sizeof(V) == 64)
    return std::bit_cast<V>(_mm512_fmadd_pd(std::bit_cast<__m512d>(a), std::bit_cast<__m512d>(b),
                                            std::bit_cast<__m512d>(c)));
  else
#endif
#elif defined(MHA_DETAIL_FMA_NEON)
  // vfmaq_f32(c, a, b) = c + a * b, one rounding
  if constexpr (std::is_same_v<E, float> && sizeof(V) == 16)
    return std::bit_cast<V>(vfmaq_f32(std::bit_cast<float32x4_t>(c), std::bit_cast<float32x4_t>(a),
                                      std::bit_cast<float32x4_t>(b)));
  else if constexpr (std::is_same_v<E, float> && sizeof(V) == 8)
    return std::bit_cast<V>(vfma_f32(std::bit_cast<float32x2_t>(c), std::bit_cast<float32x2_t>(a),
                                     std::bit_cast<float32x2_t>(b)));
  else
#if defined(__aarch64__)
  if constexpr (std::is_same_v<E, double> && sizeof(V) == 16)
    return std::bit_cast<V>(vfmaq_f64(std::bit_cast<float64x2_t>(c), std::bit_cast<float64x2_t>(a),
                                      std::bit_cast<float64x2_t>(b)));
  else
#endif
#elif defined(MHA_DETAIL_FMA_MVE)
  // MVE's vfmaq_f32(c, a, b) = c + a * b, one rounding (VFMA.F32 on Q registers);
  // without it GCC 12 made each vector multiply-add four scalar VFMAs through
  // the stack
  if constexpr (std::is_same_v<E, float> && sizeof(V) == 16)
    return std::bit_cast<V>(vfmaq_f32(std::bit_cast<float32x4_t>(c), std::bit_cast<float32x4_t>(a),
                                      std::bit_cast<float32x4_t>(b)));
  else
#endif
  {
    V r = c;
    for (std::size_t l = 0; l < sizeof(V) / sizeof(E); ++l) r[l] = detail::fma<E>(a[l], b[l], c[l]);
    return r;
  }
}
}  // namespace simd_fma

/// acc + a * b, for scalars and GCC/Clang vectors alike (a, b: a vector of
/// acc's type or a scalar, broadcast); every dot product and matrix product of
/// the kernels, the constexpr math and simd::exp accumulate through it.
///
/// The contraction rule (docs/design.md, "Multiply-adds"): fused (one
/// rounding: fma(a, b, acc)) when the target has a fused multiply-add
/// instruction for the element type (has_fma), else a multiply then an add
/// (two roundings), in every kernel and path, at run time and in constant
/// evaluation (constexpr_fma) alike. It is explicit code, so neither
/// -ffp-contract nor the compiler's tuning (which once left some sums unfused
/// on AMD Zen) decides it: the fixed-size, runtime-sized and constexpr
/// results are the same bits on each target.
template <class Acc, class A, class B>
MHA_DETAIL_INLINE constexpr Acc muladd(Acc acc, A a, B b) noexcept {
  if constexpr (std::is_floating_point_v<Acc>) {
    if constexpr (has_fma<Acc>)
      return detail::fma<Acc>(static_cast<Acc>(a), static_cast<Acc>(b), acc);
    else
      return mul_add_unfused<Acc>(static_cast<Acc>(a), static_cast<Acc>(b), acc);
  } else {
    using E = simd_fma::elem<Acc>;
    constexpr auto lanes = std::make_index_sequence<sizeof(Acc) / sizeof(E)>{};
    Acc va{}, vb{};
    if constexpr (std::is_floating_point_v<A>)
      va = simd_fma::splat<Acc>(a, lanes);
    else
      va = a;
    if constexpr (std::is_floating_point_v<B>)
      vb = simd_fma::splat<Acc>(b, lanes);
    else
      vb = b;
#if defined(MHA_DETAIL_FMA_MVE)
    // acc + scalar * vector: MVE's vector-by-scalar VFMA (vfmaq_n_f32(acc, v,
    // s) = acc + v * s, one rounding: the same value), no broadcast register
    if constexpr (std::is_same_v<E, float> && sizeof(Acc) == 16 && std::is_floating_point_v<A> &&
                  !std::is_floating_point_v<B>)
      return std::bit_cast<Acc>(vfmaq_n_f32(std::bit_cast<float32x4_t>(acc),
                                            std::bit_cast<float32x4_t>(vb), static_cast<float>(a)));
    else if constexpr (std::is_same_v<E, float> && sizeof(Acc) == 16 &&
                       std::is_floating_point_v<B> && !std::is_floating_point_v<A>)
      return std::bit_cast<Acc>(vfmaq_n_f32(std::bit_cast<float32x4_t>(acc),
                                            std::bit_cast<float32x4_t>(va), static_cast<float>(b)));
    else
#endif
    if constexpr (has_fma<E>)
      return simd_fma::fma(va, vb, acc);
    else
      return mul_add_unfused<Acc>(va, vb, acc);
  }
}

/// c + a * b for a scalar c and vectors (or floats) a, b: muladd(V{} + c, a,
/// b), the same value. On MVE one vector-by-scalar VFMAS (vfmasq_n_f32(a, b,
/// c) = a * b + c, one rounding) with c in a core register: no broadcast
/// vector register, which MVE's eight Q registers otherwise reload for every
/// constant of simd::exp's polynomial (Cortex-M55: about 3 instructions each).
/// constexpr for float.
template <class V>
MHA_DETAIL_INLINE constexpr V muladd_constant(float c, V a, V b) noexcept {
#if defined(MHA_DETAIL_FMA_MVE)
  if constexpr (!std::is_floating_point_v<V>) {
    if constexpr (std::is_same_v<simd_fma::elem<V>, float> && sizeof(V) == 16)
      return std::bit_cast<V>(
          vfmasq_n_f32(std::bit_cast<float32x4_t>(a), std::bit_cast<float32x4_t>(b), c));
  }
#endif
  return muladd(V{} + c, a, b);
}

}  // namespace MHA_DETAIL_ISA
}  // namespace mha::detail

#undef MHA_DETAIL_FMA_X86
#undef MHA_DETAIL_FMA_NEON
#undef MHA_DETAIL_FMA_MVE
#include <mha/detail/macros_undef.hpp>
