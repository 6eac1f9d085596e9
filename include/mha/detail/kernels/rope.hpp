// mha/detail/kernels/rope.hpp -- rotary position embeddings (RoPE): the cos/sin
// tables and the rotation of queries and keys, evaluable in constant
// expressions and identical at run time.
//
// The definitions are those of the book's Llama code (Raschka, LLMs from
// scratch, ch05/07_gpt_to_llama: compute_rope_params and apply_rope; Su et
// al., "RoFormer", 2021), in Hugging Face's "rotate half" layout:
//
//   inv_freq[i] = 1 / theta_base^(2i / head_dim)    i < head_dim/2, float32 as the book's .float()
//   angle[p][i] = p * inv_freq[i]                    in T
//   x1 = x[..., :head_dim/2], x2 = x[..., head_dim/2:]
//   rope(x)[i]            = x1[i] cos angle[p][i] - x2[i] sin angle[p][i]
//   rope(x)[i+head_dim/2] = x2[i] cos angle[p][i] + x1[i] sin angle[p][i]
//
// (the book's x * cos + rotate_half(x) * sin with cos/sin duplicated over the
// two halves). Every multiply-add is a detail::muladd, and sin, cos, exp and
// log are this file's own double-precision functions at run time too, so the
// fixed-size module's compile-time table, the mha::dynamic module's table
// built at construction and constant evaluation hold the same bits.
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <mha/detail/arch/math.hpp>
#include <mha/detail/arch/muladd.hpp>
#include <mha/detail/arch/subnormals.hpp>

#include <mha/detail/macros.hpp>

namespace mha::detail {
MHA_DETAIL_ISA_NAMESPACE {

/// The largest |x| for which constexpr_sin_cos keeps double accuracy (the
/// Cody-Waite reduction's products are exact for |x / (pi/2)| < 2^20):
/// positions times inv_freq (<= 1) of up to 2^20 tokens.
inline constexpr double sin_cos_max_argument = 1647099.0;  // about 2^20 * pi / 2

/// sin x and cos x.
struct sin_cos_pair {
  double sin;
  double cos;
};

/// a * b + c with two roundings (a multiply, then an add) on every target, at
/// run time and in constant evaluation alike: the product passes through a
/// volatile at run time, so no compiler contracts the two into a fused
/// multiply-add (-ffp-contract), and constant evaluation rounds each operation
/// anyway. Cheap in constant evaluation (unlike muladd's exact fma emulation
/// on FMA targets), for the RoPE tables' many sines and cosines.
constexpr double mul_then_add(double a, double b, double c) noexcept {
  if (std::is_constant_evaluated()) {
    const double p = a * b;
    return p + c;
  }
  const volatile double p = a * b;
  return p + c;
}

/// sin x and cos x in double precision, evaluable in a constant expression,
/// for |x| <= sin_cos_max_argument: x = k pi/2 + r with pi/2 in three parts
/// (fdlibm's pio2_1, pio2_2, pio2_3: 33 bits each, so k * part is exact), then
/// the Taylor polynomials of sin r and cos r for |r| <= pi/4 (degree 17 and
/// 18, truncation below 1e-19) in Horner form, innermost term first, and the
/// quadrant k mod 4. Within 2 ulp of glibc's sin/cos (test/test_math.cpp).
/// Every multiply-add is a mul_then_add: the same bits on every target.
constexpr sin_cos_pair constexpr_sin_cos(double x) noexcept {
  constexpr double two_over_pi = 6.36619772367581382433e-01;
  constexpr double pio2_1 = 1.57079632673412561417e+00;  // first 33 bits of pi/2
  constexpr double pio2_2 = 6.07710050630396597660e-11;  // next 33 bits
  constexpr double pio2_3 = 2.02226624871116645580e-21;  // next 33 bits
  const double kd = x * two_over_pi;
  const auto k = static_cast<std::int64_t>(kd < 0 ? kd - 0.5 : kd + 0.5);
  const double kk = static_cast<double>(k);
  const double r = mul_then_add(-kk, pio2_3, mul_then_add(-kk, pio2_2, mul_then_add(-kk, pio2_1, x)));
  const double r2 = r * r;
  // sin r = r (1 - r^2/(2*3) (1 - r^2/(4*5) (1 - ...))), cos r = 1 - r^2/(1*2) (1 - ...)
  double s = 1.0;
  for (int n = 17; n >= 3; n -= 2) s = mul_then_add(-r2 / static_cast<double>((n - 1) * n), s, 1.0);
  s *= r;
  double c = 1.0;
  for (int n = 18; n >= 2; n -= 2) c = mul_then_add(-r2 / static_cast<double>((n - 1) * n), c, 1.0);
  switch (static_cast<unsigned>(k) & 3u) {
    case 0: return {s, c};
    case 1: return {c, -s};
    case 2: return {-s, -c};
    default: return {-c, s};
  }
}

/// The natural logarithm of a positive finite double, evaluable in a
/// constant expression: x = m 2^e with m in [sqrt(1/2), sqrt(2)), then
/// log m = 2 atanh(u), u = (m - 1) / (m + 1) (|u| <= 0.172), by its series to
/// u^41, plus e ln 2 in two parts.
constexpr double constexpr_log(double x) noexcept {
  constexpr double ln2_hi = 6.93147180369123816490e-01;
  constexpr double ln2_lo = 1.90821492927058770002e-10;
  constexpr double sqrt2 = 1.41421356237309514547;
  int e = 0;
  double m = x;
  while (m >= sqrt2) {
    m *= 0.5;
    ++e;
  }
  while (m < sqrt2 * 0.5) {
    m *= 2.0;
    --e;
  }
  const double u = (m - 1.0) / (m + 1.0);
  const double u2 = u * u;
  // atanh u = u (1 + u^2/3 + u^4/5 + ...), innermost first
  double sum = 1.0 / 41.0;
  for (int n = 39; n >= 1; n -= 2) sum = muladd(1.0 / static_cast<double>(n), u2, sum);
  const double ed = static_cast<double>(e);
  return muladd(muladd(2.0 * u * sum, ed, ln2_lo), ed, ln2_hi);
}

/// inv_freq[i] = 1 / theta_base^(2i / head_dim) as the book computes it, in
/// float32 whatever the model's T (its `.float()`): the exponent 2i /
/// head_dim rounded to float, the power rounded to float, then 1 / power in
/// float. (The power is exp(t ln theta_base) in double, rounded once.)
constexpr float rope_inverse_frequency(double theta_base, std::size_t head_dim,
                                       std::size_t i) noexcept {
  const float t = static_cast<float>(2 * i) / static_cast<float>(head_dim);
  const float power =
      static_cast<float>(constexpr_exp(static_cast<double>(t) * constexpr_log(theta_base)));
  return 1.0f / power;
}

/// Fills the rotation tables of `positions` positions and head_dim / 2
/// frequencies: cos[p * (head_dim / 2) + i] = cos(angle[p][i]), sin likewise,
/// angle[p][i] = T(p) * T(inv_freq[i]) rounded to T (the book's
/// compute_rope_params, its cos/sin of the first half). Preconditions:
/// head_dim even, theta_base > 1, positions * 1 <= sin_cos_max_argument.
template <class T>
constexpr void fill_rope_tables(T* cos, T* sin, std::size_t head_dim, std::size_t positions,
                                double theta_base) noexcept {
  const std::size_t half = head_dim / 2;
  for (std::size_t i = 0; i < half; ++i) {
    const T inv = static_cast<T>(rope_inverse_frequency(theta_base, head_dim, i));
    for (std::size_t p = 0; p < positions; ++p) {
      const T angle = static_cast<T>(p) * inv;
      const sin_cos_pair sc = constexpr_sin_cos(static_cast<double>(angle));
      cos[p * half + i] = static_cast<T>(sc.cos);
      sin[p * half + i] = static_cast<T>(sc.sin);
    }
  }
}

/// The rotation tables of a module: cos and sin [positions][head_dim / 2]
/// (see fill_rope_tables). enabled false: no RoPE (an mha::dynamic module
/// built without it; the pointers are then not read).
template <class T>
struct rope_tables {
  const T* cos;
  const T* sin;
  bool enabled;
};
/// The module has no RoPE (a compile-time choice: nothing is rotated).
struct no_rope_tables {};

/// The compile-time tables of a fixed-size module: ContextLength positions,
/// HeadDim / 2 frequencies, base ThetaBase.
template <class T, std::size_t HeadDim, std::size_t ContextLength, std::size_t ThetaBase>
struct rope_table_storage {
  static constexpr std::size_t elements = ContextLength * (HeadDim / 2) > 0 ? ContextLength * (HeadDim / 2) : 1;
  T cos[elements];
  T sin[elements];
  static constexpr rope_table_storage make() noexcept {
    rope_table_storage t{};
    fill_rope_tables<T>(t.cos, t.sin, HeadDim, ContextLength, static_cast<double>(ThetaBase));
    return t;
  }
};
/// The tables, computed once at compile time (static storage, read-only).
template <class T, std::size_t HeadDim, std::size_t ContextLength, std::size_t ThetaBase>
inline constexpr rope_table_storage<T, HeadDim, ContextLength, ThetaBase> rope_table_v =
    rope_table_storage<T, HeadDim, ContextLength, ThetaBase>::make();

/// The most cos/sin pairs (ContextLength * HeadDim / 2) a fixed-size module's
/// tables hold when they are computed at compile time (within GCC's and
/// Clang's default constant-evaluation limits); larger tables are computed
/// at run time (rope_runtime_table).
inline constexpr std::size_t rope_compile_time_pairs = 1024;
template <std::size_t HeadDim, std::size_t ContextLength>
inline constexpr bool rope_tables_at_compile_time =
    ContextLength * (HeadDim / 2) <= rope_compile_time_pairs;

/// The tables of a large fixed-size module, computed by the same function as
/// rope_table_v on the first call (a function-local static: thread-safe
/// initialisation, static storage, no heap) and read-only after it. Not
/// usable in constant evaluation.
template <class T, std::size_t HeadDim, std::size_t ContextLength, std::size_t ThetaBase>
const rope_table_storage<T, HeadDim, ContextLength, ThetaBase>& rope_runtime_table() noexcept {
  static rope_table_storage<T, HeadDim, ContextLength, ThetaBase> table;  // zero-initialised
  static const bool filled = [] {
    fill_rope_tables<T>(table.cos, table.sin, HeadDim, ContextLength,
                        static_cast<double>(ThetaBase));
    return true;
  }();
  static_cast<void>(filled);
  return table;
}

/// Rotates the pair (a, b) = (x1[i], x2[i]) by the angle whose cos and sin
/// are c and s: a c - b s, b c + a s (each product of the book's x * cos and
/// rotate_half(x) * sin, the second one through muladd).
template <class T>
MHA_DETAIL_INLINE constexpr void rope_rotate(T& a, T& b, T c, T s) noexcept {
  const T x1 = a, x2 = b;
  a = muladd(fp::mul(x1, c), -x2, s);
  b = muladd(fp::mul(x2, c), x1, s);
}

/// RoPE on `rows` token rows (row r at position first_position + r) of
/// `heads` heads of head_dim features: element f of head h of row r at
/// x[r * row_stride + (h * head_dim + f) * feature_stride] (queries: rows of
/// a [n][width] matrix, feature_stride 1; keys transposed: row_stride 1,
/// feature_stride ldk).
template <class T, class HeadDim, class Heads>
constexpr void apply_rope(const rope_tables<T>& rope, T* x, std::size_t rows,
                          std::size_t row_stride, std::size_t feature_stride, Heads heads,
                          HeadDim head_dim, std::size_t first_position) noexcept {
  if (!rope.enabled) return;
  const std::size_t half = head_dim / 2;
  for (std::size_t r = 0; r < rows; ++r) {
    const T* const c = rope.cos + (first_position + r) * half;
    const T* const s = rope.sin + (first_position + r) * half;
    T* const row = x + r * row_stride;
    for (std::size_t h = 0; h < heads; ++h) {
      T* const head = row + h * head_dim * feature_stride;
      for (std::size_t i = 0; i < half; ++i)
        rope_rotate(head[i * feature_stride], head[(i + half) * feature_stride], c[i], s[i]);
    }
  }
}
template <class T, class HeadDim, class Heads>
constexpr void apply_rope(const no_rope_tables&, T*, std::size_t, std::size_t, std::size_t, Heads,
                          HeadDim, std::size_t) noexcept {}

}  // namespace MHA_DETAIL_ISA
}  // namespace mha::detail

#include <mha/detail/macros_undef.hpp>
