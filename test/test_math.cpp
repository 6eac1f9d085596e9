// test_math.cpp -- the constexpr exp and sqrt of mha/detail/math.hpp, which
// the fixed-size modules use when a forward pass is evaluated at compile time.
//  - constexpr_sqrt is correctly rounded, so it must equal std::sqrt (IEEE 754
//    requires sqrt to be correctly rounded) exactly, for double and, after
//    rounding to float, for float (double's 53 bits make that double rounding
//    innocuous for sqrt);
//  - constexpr_exp must be within 2 ulp of std::exp for double, and within
//    1 ulp after rounding to float.
#include <catch2/catch.hpp>

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <mha/detail/math.hpp>

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
