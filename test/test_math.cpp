// test_math.cpp -- the constexpr exp and sqrt of mha/detail/arch/math.hpp, which
// the fixed-size modules use when a forward pass is evaluated at compile time.
//  - constexpr_sqrt is correctly rounded, so it must equal std::sqrt (IEEE 754
//    requires sqrt to be correctly rounded) exactly, for double and, after
//    rounding to float, for float (double's 53 bits make that double rounding
//    innocuous for sqrt);
//  - constexpr_exp must be within 2 ulp of std::exp for double, and within
//    1 ulp after rounding to float;
//  - constexpr_fma (the fused multiply-add of detail::muladd in constant
//    evaluation, detail/arch/muladd.hpp) must equal std::fma bit for bit, and
//    detail::muladd must give the same bits in constant evaluation as at run
//    time (the contraction rule: fused exactly where the target has FMA).
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <mha/detail/arch/math.hpp>
#include <mha/detail/arch/muladd.hpp>
#include <mha/detail/kernels/rope.hpp>
#include <mha/detail/arch/simd.hpp>
#include <mha/multi_head_attention.hpp>

#include "test_support.hpp"

namespace {

using mha::detail::constexpr_exp;
using mha::detail::constexpr_sqrt;

// Compile-time values.
static_assert(constexpr_sqrt(0.0) == 0.0);
static_assert(constexpr_sqrt(1.0) == 1.0);
static_assert(constexpr_sqrt(4.0) == 2.0);
static_assert(constexpr_sqrt(2.0) == 1.4142135623730951);
static_assert(constexpr_sqrt(64.0) == 8.0);
static_assert(constexpr_sqrt(0.25) == 0.5);
static_assert(mha::detail::sqrt(2.0f) == 1.41421354f);
static_assert(constexpr_exp(0.0) == 1.0);
static_assert(constexpr_exp(1.0) >= 2.7182818284590446 && constexpr_exp(1.0) <= 2.7182818284590455);
static_assert(mha::detail::exp(-1.0f) >= 0.36787942f && mha::detail::exp(-1.0f) <= 0.36787948f);
static_assert(constexpr_exp(-1000.0) == 0.0);
static_assert(constexpr_exp(1000.0) == std::numeric_limits<double>::infinity());

/// Distance in units in the last place between two finite values of the same sign.
template <class T>
std::uint64_t ulp_distance(T a, T b) {
  using U = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  const auto ia = std::bit_cast<U>(a), ib = std::bit_cast<U>(b);
  return ia > ib ? ia - ib : ib - ia;
}

// Values whose sqrt/exp is taken in a constant expression through the
// mha::detail::sqrt/exp dispatchers, compared at run time with std::sqrt/exp.
constexpr std::array<double, 10> ct_inputs{0.5, 2.0, 3.0, 7.0, 12.0, 64.0, 768.0, 1e-3, 123.456, 1e10};
constexpr auto ct_sqrt_double = [] {
  std::array<double, ct_inputs.size()> r{};
  for (std::size_t i = 0; i < ct_inputs.size(); ++i) r[i] = mha::detail::sqrt(ct_inputs[i]);
  return r;
}();
constexpr auto ct_sqrt_float = [] {
  std::array<float, ct_inputs.size()> r{};
  for (std::size_t i = 0; i < ct_inputs.size(); ++i)
    r[i] = mha::detail::sqrt(static_cast<float>(ct_inputs[i]));
  return r;
}();
constexpr std::array<double, 8> ct_exp_inputs{-20.0, -3.5, -1.0, -0.1, 0.0, 0.7, 5.0, 30.0};
constexpr auto ct_exp_double = [] {
  std::array<double, ct_exp_inputs.size()> r{};
  for (std::size_t i = 0; i < ct_exp_inputs.size(); ++i) r[i] = mha::detail::exp(ct_exp_inputs[i]);
  return r;
}();
constexpr auto ct_exp_float = [] {
  std::array<float, ct_exp_inputs.size()> r{};
  for (std::size_t i = 0; i < ct_exp_inputs.size(); ++i)
    r[i] = mha::detail::exp(static_cast<float>(ct_exp_inputs[i]));
  return r;
}();

}  // namespace

TEST_CASE("constexpr_sqrt equals std::sqrt exactly", "[math]") {
  std::vector<double> values{0.0,
                             -0.0,
                             1.0,
                             2.0,
                             3.0,
                             0.5,
                             1e-300,
                             1e300,
                             std::numeric_limits<double>::max(),
                             std::numeric_limits<double>::min(),
                             std::numeric_limits<double>::denorm_min(),
                             std::numeric_limits<double>::infinity(),
                             4503599627370497.0};
  for (std::size_t h = 1; h <= 4096; ++h) values.push_back(static_cast<double>(h));  // head dims
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<std::uint64_t> bits(0, 0x7FEFFFFFFFFFFFFFULL);  // finite, >= 0
  for (int i = 0; i < 200000; ++i) values.push_back(std::bit_cast<double>(bits(rng)));
  std::uniform_real_distribution<double> unit(0.0, 10.0);
  for (int i = 0; i < 50000; ++i) values.push_back(unit(rng));

  std::size_t double_mismatches = 0, float_mismatches = 0;
  double first_bad = 0;
  for (const double v : values) {
    const double s = constexpr_sqrt(v);
    if (std::bit_cast<std::uint64_t>(s) != std::bit_cast<std::uint64_t>(std::sqrt(v))) {
      if (double_mismatches++ == 0) first_bad = v;
    }
    const float f = static_cast<float>(v);
    if (std::isfinite(f) || std::isinf(v)) {
      const float sf = static_cast<float>(constexpr_sqrt(static_cast<double>(f)));
      if (std::bit_cast<std::uint32_t>(sf) != std::bit_cast<std::uint32_t>(std::sqrt(f))) {
        if (float_mismatches++ == 0) first_bad = v;
      }
    }
  }
  INFO("first mismatch at " << first_bad);
  REQUIRE(double_mismatches == 0);
  REQUIRE(float_mismatches == 0);

  REQUIRE(std::isnan(constexpr_sqrt(-1.0)));
  REQUIRE(std::isnan(constexpr_sqrt(std::numeric_limits<double>::quiet_NaN())));
  REQUIRE(std::signbit(constexpr_sqrt(-0.0)));
}

TEST_CASE("mha::detail::sqrt at compile time equals std::sqrt at run time", "[math]") {
  for (std::size_t i = 0; i < ct_inputs.size(); ++i) {
    INFO("x = " << ct_inputs[i]);
    REQUIRE(ct_sqrt_double[i] == std::sqrt(ct_inputs[i]));
    REQUIRE(ct_sqrt_float[i] == std::sqrt(static_cast<float>(ct_inputs[i])));
  }
}

TEST_CASE("constexpr_exp is within 2 ulp of std::exp", "[math]") {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> wide(-700.0, 700.0);
  std::uniform_real_distribution<double> narrow(-30.0, 30.0);  // softmax's range
  std::uniform_real_distribution<float> float_range(-87.0f, 88.0f);
  std::uint64_t worst_double = 0, worst_float = 0;
  double worst_double_at = 0, worst_float_at = 0;
  for (int i = 0; i < 200000; ++i) {
    const double x = i % 2 == 0 ? wide(rng) : narrow(rng);
    const auto d = ulp_distance(constexpr_exp(x), std::exp(x));
    if (d > worst_double) {
      worst_double = d;
      worst_double_at = x;
    }
    const float xf = float_range(rng);
    const auto df = ulp_distance(static_cast<float>(constexpr_exp(static_cast<double>(xf))),
                                 std::exp(xf));
    if (df > worst_float) {
      worst_float = df;
      worst_float_at = static_cast<double>(xf);
    }
  }
  for (const double x : {0.0, -0.0, 1e-300, -1e-300, 1e-10, -1e-10, 0.34657359027997264,
                         -0.34657359027997264, 709.0, -708.0}) {
    const auto d = ulp_distance(constexpr_exp(x), std::exp(x));
    if (d > worst_double) {
      worst_double = d;
      worst_double_at = x;
    }
  }
  CAPTURE(worst_double, worst_double_at, worst_float, worst_float_at);
  REQUIRE(worst_double <= 2);
  REQUIRE(worst_float <= 1);
  REQUIRE(std::isnan(constexpr_exp(std::numeric_limits<double>::quiet_NaN())));
}

TEST_CASE("mha::detail::exp at compile time is within 2 ulp (double), 1 ulp (float) of std::exp", "[math]") {
  for (std::size_t i = 0; i < ct_exp_inputs.size(); ++i) {
    INFO("x = " << ct_exp_inputs[i]);
    REQUIRE(ulp_distance(ct_exp_double[i], std::exp(ct_exp_inputs[i])) <= 2);
    REQUIRE(ulp_distance(ct_exp_float[i], std::exp(static_cast<float>(ct_exp_inputs[i]))) <= 1);
  }
}

namespace {

/// Bits of a float or double (NaNs compared as "both NaN").
template <class T>
bool same_bits(T a, T b) {
  using U = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::bit_cast<U>(a) == std::bit_cast<U>(b);
}

/// Random finite T of every kind: any bit pattern (subnormals included),
/// small integers times powers of two (exact and cancelling sums), or
/// significands of any exponent (overflow and underflow of the result).
template <class T>
T random_value(std::mt19937_64& g) {
  using U = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  constexpr int max_exp = std::numeric_limits<T>::max_exponent;
  constexpr U one = std::bit_cast<U>(T(1));
  constexpr U sign_frac = (U{1} << (sizeof(T) * 8 - 1)) | (one - 1);  // one - 1: the fraction bits
  for (;;) {
    T x{};
    switch (g() % 3) {
      case 0: x = std::bit_cast<T>(static_cast<U>(g())); break;
      case 1:
        x = std::ldexp(static_cast<T>(static_cast<int>(g() % 2001) - 1000),
                       static_cast<int>(g() % 40) - 20);
        break;
      default:
        x = std::ldexp(std::bit_cast<T>(static_cast<U>((static_cast<U>(g()) & sign_frac) | one)),
                       static_cast<int>(g() % (4 * max_exp + 100)) - 2 * max_exp - 50);
        break;
    }
    if (std::isfinite(x)) return x;
  }
}

template <class T>
void check_fma_random(std::size_t count) {
  std::mt19937_64 g(sizeof(T));
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const T a = random_value<T>(g), b = random_value<T>(g);
    T c = random_value<T>(g);
    // a third of the sums cancel (nearly) exactly
    if (g() % 3 == 0)
      c = -(a * b) * (T(1) + std::ldexp(static_cast<T>(static_cast<int>(g() % 16) - 8),
                                        -std::numeric_limits<T>::digits + 3));
    if (!std::isfinite(c)) continue;
    const T want = std::fma(a, b, c);
    const T got = mha::detail::constexpr_fma(a, b, c);
    if (!same_bits(want, got)) {
      if (++mismatches <= 5) UNSCOPED_INFO(std::hexfloat << a << " * " << b << " + " << c << ": " << want << " vs " << got);
    }
  }
  CHECK(mismatches == 0);
}

template <class T>
void check_fma_edges() {
  using L = std::numeric_limits<T>;
  const T values[] = {T(0), -T(0), T(1), -T(1), T(0.5), T(3), L::min(), -L::min(), L::denorm_min(),
                      -L::denorm_min(), L::max(), -L::max(), L::epsilon(), T(1) + L::epsilon(),
                      T(1) - L::epsilon() / 2, std::nextafter(L::min(), T(0)), L::infinity(),
                      -L::infinity(), T(1) / T(3), T(-7.5)};
  std::size_t mismatches = 0;
  for (const T a : values)
    for (const T b : values)
      for (const T c : values) {
        const T want = std::fma(a, b, c);
        const T got = mha::detail::constexpr_fma(a, b, c);
        if (!same_bits(want, got)) {
          if (++mismatches <= 5) UNSCOPED_INFO(std::hexfloat << a << " * " << b << " + " << c << ": " << want << " vs " << got);
        }
      }
  CHECK(mismatches == 0);
}

// detail::muladd in constant evaluation (constexpr_fma or a multiply and an
// add, as the target decides) against the same call at run time.
constexpr std::array<double, 6> ma_a{0.1, -1.0 / 3, 1e-300, 7.25, 1.0 + 0x1p-52, 3.0};
constexpr std::array<double, 6> ma_b{0.7, 3.0, 1e-20, -0.1, 1.0 - 0x1p-53, 1.0 / 3};
constexpr std::array<double, 6> ma_c{0.3, 1.0, 1e-310, 0.725, -1.0, -1.0};
constexpr auto ct_muladd_double = [] {
  std::array<double, ma_a.size()> r{};
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = mha::detail::muladd(ma_c[i], ma_a[i], ma_b[i]);
  return r;
}();
constexpr auto ct_muladd_float = [] {
  std::array<float, ma_a.size()> r{};
  for (std::size_t i = 0; i < r.size(); ++i)
    r[i] = mha::detail::muladd(static_cast<float>(ma_c[i]), static_cast<float>(ma_a[i]),
                               static_cast<float>(ma_b[i]));
  return r;
}();
static_assert(mha::detail::constexpr_fma(0.1, 10.0, -1.0) == 0x1p-54);  // 0.1 * 10 - 1, one rounding
static_assert(mha::detail::constexpr_fma(0.1f, 10.0f, -1.0f) == 0x1p-26f);

}  // namespace

TEST_CASE("constexpr_fma equals std::fma bit for bit", "[math]") {
  check_fma_edges<float>();
  check_fma_edges<double>();
  check_fma_random<float>(200000);
  check_fma_random<double>(200000);
}

TEST_CASE("detail::muladd gives the same bits in constant evaluation and at run time", "[math]") {
  volatile std::size_t n = ma_a.size();  // keeps the run-time calls at run time
  for (std::size_t i = 0; i < n; ++i) {
    INFO("i = " << i << ", target FMA for double: " << mha::detail::has_fma<double>);
    CHECK(same_bits(ct_muladd_double[i], mha::detail::muladd(ma_c[i], ma_a[i], ma_b[i])));
    CHECK(same_bits(ct_muladd_float[i],
                    mha::detail::muladd(static_cast<float>(ma_c[i]), static_cast<float>(ma_a[i]),
                                        static_cast<float>(ma_b[i]))));
    const double fused = std::fma(ma_a[i], ma_b[i], ma_c[i]);
    const double unfused = [](double a, double b, double c) {
      volatile double p = a * b;  // rounded, whatever -ffp-contract says
      return p + c;
    }(ma_a[i], ma_b[i], ma_c[i]);
    CHECK(same_bits(ct_muladd_double[i], mha::detail::has_fma<double> ? fused : unfused));
  }
}

// ------------------------------------------------------------------ RoPE's sin, cos, log

namespace {
/// |a - b| in units of b's last place (b finite, non-zero): what "within k ulp" means here.
double ulps_from(double a, double b) {
  const double ulp = std::nextafter(std::fabs(b), std::numeric_limits<double>::infinity()) - std::fabs(b);
  return std::fabs(a - b) / ulp;
}
constexpr auto ct_sin_cos = mha::detail::constexpr_sin_cos(1000.5);
}  // namespace

TEST_CASE("constexpr_sin_cos is within 2 ulp of std::sin and std::cos (RoPE's angles)",
          "[math][rope]") {
  using mha::detail::constexpr_sin_cos;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> small(-4.0, 4.0);
  std::uniform_real_distribution<double> positions(0.0, mha::detail::sin_cos_max_argument);
  double worst = 0, worst_at = 0;
  for (int i = 0; i < 200000; ++i) {
    const double x = i % 2 == 0 ? small(rng) : positions(rng);
    const auto sc = constexpr_sin_cos(x);
    for (const double d : {ulps_from(sc.sin, std::sin(x)), ulps_from(sc.cos, std::cos(x))})
      if (d > worst) {
        worst = d;
        worst_at = x;
      }
  }
  // integer positions times the book's float32 inverse frequencies, rounded to float
  for (std::size_t p = 0; p < 4096; p += 7)
    for (std::size_t i = 0; i < 32; ++i) {
      const float inv = mha::detail::rope_inverse_frequency(500000.0, 64, i);
      const float angle = static_cast<float>(p) * inv;
      const auto sc = constexpr_sin_cos(static_cast<double>(angle));
      const float s = static_cast<float>(sc.sin), c = static_cast<float>(sc.cos);
      // against float's own sin/cos: at most one float ulp apart
      REQUIRE(ulp_distance(s, std::sin(angle)) <= 1);
      REQUIRE(ulp_distance(c, std::cos(angle)) <= 1);
    }
  CAPTURE(worst, worst_at);
  REQUIRE(worst <= 2.0);
  REQUIRE(ct_sin_cos.sin == constexpr_sin_cos(1000.5).sin);  // compile time == run time
  REQUIRE(ct_sin_cos.cos == constexpr_sin_cos(1000.5).cos);
  REQUIRE(constexpr_sin_cos(0.0).sin == 0.0);
  REQUIRE(constexpr_sin_cos(0.0).cos == 1.0);
}

TEST_CASE("constexpr_log is within 2 ulp of std::log; RoPE's inverse frequencies as the book's",
          "[math][rope]") {
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<double> e(-300.0, 300.0);
  double worst = 0, worst_at = 0;
  for (int i = 0; i < 100000; ++i) {
    const double x = std::pow(10.0, e(rng) / 10.0);
    const double d = ulps_from(mha::detail::constexpr_log(x), std::log(x));
    if (d > worst) {
      worst = d;
      worst_at = x;
    }
  }
  for (const double x : {10000.0, 500000.0, 2.0, 1.0000001, 0.5})
    worst = std::max(worst, ulps_from(mha::detail::constexpr_log(x), std::log(x)));
  CAPTURE(worst, worst_at);
  REQUIRE(worst <= 2.0);
  static_assert(mha::detail::constexpr_log(1.0) == 0.0);
  // inv_freq = 1 / theta^(2i/d) in float32 (the book's .float()): torch.pow's
  // float result is within one float ulp of the exact power, so each of ours
  // is within one ulp of float arithmetic on std::pow's double power
  for (const double theta : {10000.0, 500000.0})
    for (std::size_t d : {std::size_t{4}, std::size_t{16}, std::size_t{64}, std::size_t{128}})
      for (std::size_t i = 0; i < d / 2; ++i) {
        const float t = static_cast<float>(2 * i) / static_cast<float>(d);
        const float power = static_cast<float>(std::pow(theta, static_cast<double>(t)));
        CAPTURE(theta, d, i);
        REQUIRE(ulp_distance(mha::detail::rope_inverse_frequency(theta, d, i), 1.0f / power) <= 1);
      }
  REQUIRE(mha::detail::rope_inverse_frequency(10000.0, 64, 0) == 1.0f);
}

// simd::exp below the normal range (a breaker's report, 2026-12-03): it used to
// clamp at -87.33 and give the smallest normal float, 1.2e-38, where PyTorch's
// float exp gives a subnormal or 0. Reference values: torch.exp on float32
// (torch 1.13: exp(-88) = 6.0546e-39, exp(-100) = 3.7835e-44, exp(-103.9) =
// 1.4013e-45, exp(-104) = exp(-1000) = exp(-inf) = 0), here std::exp(float),
// which gives the same; the grid there is the subnormal step, 2^-149.
TEST_CASE("simd::exp gives PyTorch's subnormals and 0 below the normal range", "[math]") {
  namespace simd = mha::detail::simd;
  constexpr float step = std::numeric_limits<float>::denorm_min();
  for (float x = -110.0f; x <= -80.0f; x += 0.0078125f) {
    CAPTURE(x);
    const float got = simd::exp(x), want = std::exp(x);
    if (want < std::numeric_limits<float>::min())
      REQUIRE(std::abs(got - want) <= step);  // one subnormal step
    else
      REQUIRE(ulp_distance(got, want) <= 3);
  }
  REQUIRE(simd::exp(-104.0f) == 0.0f);
  REQUIRE(simd::exp(-1000.0f) == 0.0f);
  REQUIRE(simd::exp(-std::numeric_limits<float>::infinity()) == 0.0f);
  REQUIRE(std::isnan(simd::exp(std::numeric_limits<float>::quiet_NaN())));
  // a whole vector, its lanes as the scalar
  simd::vec<float> v{};
  for (std::size_t l = 0; l < simd::lanes<float>; ++l) v[l] = -80.0f - 4.0f * static_cast<float>(l);
  const simd::vec<float> ev = simd::exp(v);
  for (std::size_t l = 0; l < simd::lanes<float>; ++l)
    REQUIRE(std::bit_cast<std::uint32_t>(ev[l]) == std::bit_cast<std::uint32_t>(simd::exp(v[l])));
}

// simd::exp_of_nonpositive (the token-major head's exponential, 2026-12-04)
// leaves out exp's clamp to 88: for every argument up to 88 and for NaN it
// must give exp's bits. A sample of every float class (every 16381st bit
// pattern, with -0, 88 and its neighbours, -104, the infinities), lanes
// mixed, with lanes above 88 beside them (their results are unspecified and
// not compared: lanes do not interact).
TEST_CASE("simd::exp_of_nonpositive gives exp's bits for every argument <= 88", "[math]") {
  namespace simd = mha::detail::simd;
  using V = simd::vec<float>;
  constexpr std::size_t L = simd::lanes<float>;
  std::vector<float> xs;
  for (std::uint64_t b = 0; b <= 0xFFFFFFFFu; b += 16381)
    xs.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(b)));
  for (const float c : {88.0f, -104.0f, 0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                        -std::numeric_limits<float>::infinity()})
    for (int d = -2; d <= 2; ++d)
      xs.push_back(std::bit_cast<float>(std::bit_cast<std::uint32_t>(c) + static_cast<std::uint32_t>(d)));
  // (one assertion at the end: a Catch2 assertion per lane cost most of the
  // test's time under QEMU; the first argument that differs is reported)
  std::size_t checked = 0, differ = 0;
  float first_differing = 0.0f;
  for (std::size_t i = 0; i < xs.size(); i += L) {
    V x{};
    for (std::size_t l = 0; l < L; ++l) x[l] = xs[(i + l) % xs.size()];
    const V want = simd::exp(x), got = simd::exp_of_nonpositive(x);
    for (std::size_t l = 0; l < L; ++l) {
      if (!(x[l] <= 88.0f) && !std::isnan(x[l])) continue;  // unspecified above 88
      if (std::bit_cast<std::uint32_t>(got[l]) != std::bit_cast<std::uint32_t>(want[l]) &&
          differ++ == 0)
        first_differing = x[l];
      ++checked;
    }
  }
  CAPTURE(first_differing);
  REQUIRE(differ == 0);
  REQUIRE(checked > 190000);  // 199,910 of the 262,194 sampled bit patterns, and the extras
}

// The report's model: row 1's scores are -1000 and 0, so its weights are
// exactly [0, 1] in PyTorch (torch.softmax(tensor([-1000., 0.])) is [0., 1.])
// and its context 0 * 1e38 + 1 * 0 = 0; it was 1.2e-38 * 1e38 = 1.18.
TEST_CASE("a key far below the row maximum gets weight 0, as in PyTorch", "[math]") {
  using M = mha::multi_head_attention<float, 2, 1, 4, 1>;
  M m{};
  m.w_query.weight(0, 1) = 1.0f;
  m.w_key.weight(0, 0) = -1000.0f;
  m.w_value.weight(0, 0) = 1e38f;
  m.out_proj.weight(0, 0) = 1.0f;
  mha::tensor<float, 1, 2, 2> x{};
  x(0, 0, 0) = 1.0f;
  x(0, 1, 1) = 1.0f;
  const auto y = m.forward(x);
  REQUIRE(y(0, 0, 0) == 1e38f);
  REQUIRE(y(0, 1, 0) == 0.0f);
  const auto dy = mha_test::to_dynamic(m).forward(mha_test::to_dynamic(x));
  REQUIRE(mha_test::same_bits(y, dy));  // the run-time-sized twin: the same bits
}

// The float comparisons that simd makes on the bits where the compiler would
// lower float vector comparisons lane by lane (simd::compare_float_bits: GCC
// with MVE, Cortex-M55): both forms, on this target, over a sample of every
// float class (every 16381st bit pattern, the neighbours of the constants,
// zeros, infinities, NaN). clamp_beyond must give the same bits;
// softmax_max the same value except where its doc comment allows otherwise
// (zeros of opposite sign, NaN).
TEST_CASE("simd's bit comparisons agree with the float comparisons", "[math]") {
  namespace simd = mha::detail::simd;
  using V = simd::vec<float>;
  constexpr std::size_t L = simd::lanes<float>;
  std::vector<std::uint32_t> bits;
  for (std::uint64_t b = 0; b <= 0xFFFFFFFFu; b += 16381) bits.push_back(static_cast<std::uint32_t>(b));
  for (const float c : {-104.0f, 88.0f, 0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                        -std::numeric_limits<float>::infinity(),
                        std::numeric_limits<float>::max(), -std::numeric_limits<float>::max()}) {
    const auto cb = std::bit_cast<std::uint32_t>(c);
    for (std::uint32_t d = 0; d < 3; ++d) {
      bits.push_back(cb + d);
      bits.push_back(cb - d);
    }
  }
  bits.push_back(0x7FC00000u);  // quiet NaN
  bits.push_back(0xFFC00000u);  // negative quiet NaN
  bits.push_back(0x7F800001u);  // signalling NaN
  const auto vector_at = [&](std::size_t i) {
    V v{};
    for (std::size_t l = 0; l < L; ++l) v[l] = std::bit_cast<float>(bits[(i + l) % bits.size()]);
    return v;
  };
  const auto same = [](V a, V b) {
    for (std::size_t l = 0; l < L; ++l)
      if (std::bit_cast<std::uint32_t>(a[l]) != std::bit_cast<std::uint32_t>(b[l])) return false;
    return true;
  };
  // (one assertion per property at the end, as in the test above; the first
  // sample index where it fails is reported)
  std::size_t max_checked = 0, clamp_differ = 0, max_differ = 0;
  std::size_t first_clamp_differing = 0, first_max_differing = 0;
  for (std::size_t i = 0; i < bits.size(); i += L) {
    const V x = vector_at(i);
    for (const float c : {-104.0f, 88.0f, -std::numeric_limits<float>::max(), 1e-40f})
      if (!same(simd::clamp_beyond<V, true>(x, c), simd::clamp_beyond<V, false>(x, c)) &&
          clamp_differ++ == 0)
        first_clamp_differing = i;
    const V y = vector_at(i * 7919 + 13);  // another float of the sample in each lane
    const V by_bits = simd::softmax_max<V, true>(x, y), by_floats = simd::softmax_max<V, false>(x, y);
    for (std::size_t l = 0; l < L; ++l) {
      if (std::isnan(x[l]) || std::isnan(y[l])) continue;  // allowed to differ
      // (== : a zero of either sign is allowed)
      if (!(by_bits[l] == by_floats[l]) && max_differ++ == 0) first_max_differing = i;
      ++max_checked;
    }
  }
  CAPTURE(first_clamp_differing, first_max_differing);
  REQUIRE(clamp_differ == 0);
  REQUIRE(max_differ == 0);
  REQUIRE(max_checked > 200000);
}
