// mha/detail/arch/math.hpp -- exp and sqrt usable in constant evaluation.
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <type_traits>

#include <mha/detail/arch/muladd.hpp>

#include <mha/detail/macros.hpp>

namespace mha::detail {
MHA_DETAIL_ISA_NAMESPACE {

/// e^x in double precision, evaluable in a constant expression.
/// Range reduction x = k*ln2 + r, |r| <= ln2/2, then the degree-20 Taylor
/// polynomial of e^r in Horner form (innermost term first: at most 1 ulp
/// from glibc's std::exp over 10^6 samples; test/test_math.cpp requires 2 ulp),
/// then scaling by 2^k with exact power-of-two products. Every multiply-add
/// is a detail::muladd (fused exactly where the target has FMA, in constant
/// evaluation too), so the result does not depend on -ffp-contract.
constexpr double constexpr_exp(double x) noexcept {
  if (x != x) return x;                                       // NaN
  if (x > 709.782712893384) return std::numeric_limits<double>::infinity();
  if (x < -745.1332191019412) return 0.0;
  constexpr double ln2_hi = 6.93147180369123816490e-01;       // high bits of ln 2
  constexpr double ln2_lo = 1.90821492927058770002e-10;       // ln 2 - ln2_hi
  constexpr double inv_ln2 = 1.44269504088896338700e+00;
  const double kd = x * inv_ln2;
  const auto k = static_cast<std::int64_t>(kd < 0 ? kd - 0.5 : kd + 0.5);
  const double kk = static_cast<double>(k);
  // x - k*ln2_hi is exact (ln2_hi's low bits are 0)
  const double r = muladd(muladd(x, -kk, ln2_hi), -kk, ln2_lo);
  // sum = 1 + r/1 (1 + r/2 (1 + ... (1 + r/20))), innermost first
  double sum = 1.0;
  for (int n = 20; n >= 1; --n) sum = muladd(1.0, r / n, sum);
  // multiply by 2^k in steps that stay normal until the last one
  std::int64_t e = k;
  while (e > 0) {
    const std::int64_t s = e > 512 ? 512 : e;
    double p = 1.0;
    for (std::int64_t i = 0; i < s; ++i) p *= 2.0;
    sum *= p;
    e -= s;
  }
  while (e < 0) {
    const std::int64_t s = e < -512 ? 512 : -e;
    double p = 1.0;
    for (std::int64_t i = 0; i < s; ++i) p *= 0.5;
    sum *= p;
    e += s;
  }
  return sum;
}

/// x*x - a for doubles, computed without the rounding of x*x, so neighbours
/// can be compared exactly: x*x = p + err exactly, err from a fused
/// multiply-add where the target has one (detail::fma, in constant evaluation
/// too), else from Veltkamp splitting and Dekker's exact product (steps that
/// a target without FMA cannot contract). Both are exact: the same result on
/// every target.
constexpr double square_minus(double x, double a) noexcept {
  const double p = x * x;
  double err = 0.0;
  if constexpr (has_fma<double>) {
    err = detail::fma(x, x, -p);
  } else {
    constexpr double splitter = 134217729.0;  // 2^27 + 1
    const double t = splitter * x;
    const double hi = t - (t - x);
    const double lo = x - hi;
    err = ((hi * hi - p) + 2.0 * hi * lo) + lo * lo;  // x*x == p + err exactly
  }
  return (p - a) + err;
}

/// Correctly rounded square root of a non-negative double, evaluable in a
/// constant expression: scaling by an even power of two into [1, 4), Newton's
/// iteration from above, then the neighbour (one ulp either side) whose square
/// is closest; equals std::sqrt exactly (tested in test/test_math.cpp).
constexpr double constexpr_sqrt(double x) noexcept {
  if (x != x || x < 0.0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0.0 || x == std::numeric_limits<double>::infinity()) return x;
  // x = m * 4^j with m in [1, 4): exact power-of-two scaling, so the exact
  // products in square_minus neither overflow (huge x) nor underflow (tiny x).
  double m = x;
  int j = 0;
  while (m >= 4.0) {
    m *= 0.25;
    ++j;
  }
  while (m < 1.0) {
    m *= 4.0;
    --j;
  }
  double y = m;  // >= sqrt(m)
  for (int i = 0; i < 100; ++i) {
    const double next = 0.5 * (y + m / y);
    if (!(next < y)) break;  // decreasing towards sqrt(m): stop at the fixed point
    y = next;
  }
  const auto bits = std::bit_cast<std::uint64_t>(y);
  double best = y;
  double best_err = square_minus(y, m);
  if (best_err < 0) best_err = -best_err;
  for (const std::uint64_t b : {bits - 1, bits + 1}) {
    const double c = std::bit_cast<double>(b);
    double err = square_minus(c, m);
    if (err < 0) err = -err;
    if (err < best_err) {
      best = c;
      best_err = err;
    }
  }
  // sqrt(x) = sqrt(m) * 2^j, exact (the result is a normal number).
  for (; j > 0; --j) best *= 2.0;
  for (; j < 0; ++j) best *= 0.5;
  return best;
}

/// e^x for T in {float, double}: std::exp at run time, constexpr_exp in
/// constant evaluation (the two agree to within 2 ulp, see constexpr_exp).
template <class T>
constexpr T exp(T x) noexcept {
  if (std::is_constant_evaluated()) return static_cast<T>(constexpr_exp(static_cast<double>(x)));
  return std::exp(x);
}

/// sqrt(x) for T in {float, double}: std::sqrt at run time, constexpr_sqrt in
/// constant evaluation (both correctly rounded, hence identical).
template <class T>
constexpr T sqrt(T x) noexcept {
  if (std::is_constant_evaluated()) return static_cast<T>(constexpr_sqrt(static_cast<double>(x)));
  return std::sqrt(x);
}

}  // namespace MHA_DETAIL_ISA
}  // namespace mha::detail

#include <mha/detail/macros_undef.hpp>
