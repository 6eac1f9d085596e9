// test_invariants.cpp -- properties every causal attention must have, on
// random weights and inputs from fixed std::mt19937 seeds (issue 2, section 5):
//  - causality: changing tokens after t never changes outputs 0..t (bit-identical),
//  - large inputs (x100, x1e4) give finite outputs (stable softmax),
//  - every softmax row sums to 1,
//  - dropout: p = 0 training equals inference; p > 0 zeroes weights with
//    probability p, scales kept weights by exactly 1/(1-p) without
//    renormalising rows, is deterministic per seed, and fixed and dynamic draw
//    the same masks; p = 1 drops everything.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <type_traits>
#include <utility>

#include <mha/mha.hpp>

#include "test_support.hpp"

namespace {

// Where a test needs no particular shape, its modules are types compiled
// anyway: test_golden's (same unity group, tests_core) or one causal_attention
// per element type shared by the tests of this file. Every other shape would
// be one more copy of the kernels to compile.
template <class T, std::size_t DIn, std::size_t DOut, std::size_t Ctx, bool Bias>
using ca = mha::causal_attention<T, DIn, DOut, Ctx, Bias>;
template <class T, std::size_t DIn, std::size_t DOut, std::size_t Ctx, std::size_t H, bool Bias>
using wrap = mha::multi_head_attention_wrapper<T, DIn, DOut, Ctx, H, Bias>;
template <class T, std::size_t DIn, std::size_t DOut, std::size_t Ctx, std::size_t H, bool Bias>
using mhat = mha::multi_head_attention<T, DIn, DOut, Ctx, H, Bias>;

/// Rows 0..t of every batch element of two [B][N][W] outputs have the same bits.
template <class T, std::size_t B, std::size_t N, std::size_t W>
bool same_prefix(const T* a, const T* b, std::size_t t) {
  for (std::size_t bb = 0; bb < B; ++bb)
    if (!mha_test::same_bits(a + bb * N * W, b + bb * N * W, (t + 1) * W)) return false;
  return true;
}
/// Row r of batch element bb differs (in any bit) between two outputs.
template <class T, std::size_t N, std::size_t W>
bool row_differs(const T* a, const T* b, std::size_t bb, std::size_t r) {
  return !mha_test::same_bits(a + (bb * N + r) * W, b + (bb * N + r) * W, W);
}

// ------------------------------------------------------------------ causality

template <class M, std::size_t B, std::size_t N>
void check_causality(unsigned seed) {
  using T = typename M::value_type;
  constexpr std::size_t W = M::output_width;
  std::mt19937 rng(seed);
  M m{};
  mha_test::randomize(m, rng);
  mha_test::set_dropout(m, T(0.3));
  const auto dyn = mha_test::to_dynamic(m);

  mha::tensor<T, B, N, M::d_in> x{};
  mha_test::fill_uniform(x, rng, 2.0);
  const auto y = m.forward(x);
  const auto yt = m.forward_training(x, 99);

  for (std::size_t t = 0; t < N; ++t) {
    INFO("tokens after t = " << t << " changed");
    auto x2 = x;
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t j = t + 1; j < N; ++j)
        for (std::size_t k = 0; k < M::d_in; ++k) x2(b, j, k) = x(b, j, k) + T(0.5) + x(b, j, k) * x(b, j, k);

    const auto y2 = m.forward(x2);
    REQUIRE(same_prefix<T, B, N, W>(y.data(), y2.data(), t));
    if (t + 1 < N) REQUIRE(row_differs<T, N, W>(y.data(), y2.data(), 0, t + 1));  // not vacuous

    const auto yt2 = m.forward_training(x2, 99);  // same seed: same dropout masks
    REQUIRE(same_prefix<T, B, N, W>(yt.data(), yt2.data(), t));

    const auto dy2 = dyn.forward(mha_test::to_dynamic(x2));
    REQUIRE(same_prefix<T, B, N, W>(y.data(), dy2.data(), t));
    const auto dyt2 = dyn.forward_training(mha_test::to_dynamic(x2), 99);
    REQUIRE(same_prefix<T, B, N, W>(yt.data(), dyt2.data(), t));
  }
}

TEST_CASE("causality: tokens after t never change outputs 0..t", "[invariants][causality]") {
  SECTION("causal_attention float") { check_causality<ca<float, 6, 4, 8, true>, 2, 8>(11); }
  SECTION("causal_attention double") { check_causality<ca<double, 6, 4, 8, false>, 2, 7>(12); }
  SECTION("wrapper float") { check_causality<wrap<float, 6, 3, 8, 3, true>, 2, 8>(13); }
  SECTION("wrapper double") { check_causality<wrap<double, 8, 2, 5, 2, false>, 3, 5>(14); }
  SECTION("multi_head_attention float") { check_causality<mhat<float, 5, 6, 9, 3, true>, 2, 8>(15); }
  SECTION("multi_head_attention double") {
    check_causality<mhat<double, 12, 8, 10, 4, false>, 2, 10>(16);
  }
}

// ------------------------------------------------------------- large inputs

template <class M, std::size_t B, std::size_t N>
void check_large_inputs(unsigned seed) {
  using T = typename M::value_type;
  std::mt19937 rng(seed);
  M m{};
  mha_test::randomize(m, rng);
  const auto dyn = mha_test::to_dynamic(m);
  mha::tensor<T, B, N, M::d_in> x{};
  mha_test::fill_uniform(x, rng, 1.0);
  for (const double scale : {100.0, 1e4}) {
    INFO("inputs scaled by " << scale);
    auto xs = x;
    for (T& v : xs) v = static_cast<T>(v * scale);
    const auto y = m.forward(xs);
    REQUIRE(mha_test::all_finite(y.data(), y.size));
    const auto dy = dyn.forward(mha_test::to_dynamic(xs));
    REQUIRE(mha_test::same_bits(y, dy));
  }
}

TEST_CASE("inputs scaled by 100 and 1e4 give finite outputs", "[invariants][stability]") {
  check_large_inputs<ca<float, 6, 4, 8, true>, 2, 8>(21);
  check_large_inputs<ca<double, 6, 4, 8, false>, 2, 8>(22);
  check_large_inputs<wrap<float, 6, 3, 8, 3, true>, 2, 8>(23);
  check_large_inputs<wrap<double, 8, 2, 5, 2, false>, 2, 5>(24);
  check_large_inputs<mhat<float, 5, 6, 9, 3, true>, 2, 8>(25);
  check_large_inputs<mhat<double, 10, 15, 7, 5, true>, 2, 7>(26);
}

// --------------------------------------------------------- softmax row sums
//
// With W_value = 0 and value bias = 1 every value vector is all ones, so each
// context element is the sum of that query's attention weights. Summing up to
// N correctly rounded quotients e_j / sum in T, the result is within a few
// units of roundoff of 1; the bound used is 4 * epsilon (|1 - s| <= 4 ulp of 1).

template <class T>
constexpr T row_sum_tolerance = 4 * std::numeric_limits<T>::epsilon();

template <class T, std::size_t B, std::size_t N, std::size_t W>
T worst_row_sum_error(const mha::tensor<T, B, N, W>& y) {
  T worst = 0;
  for (const T v : y) worst = std::max(worst, std::fabs(v - T(1)));
  return worst;
}

template <class T>
void check_row_sums(unsigned seed) {
  constexpr std::size_t DIn = 6, DOut = 4, Ctx = 12, B = 2, N = 12;
  std::mt19937 rng(seed);
  mha::tensor<T, B, N, DIn> x{};
  mha_test::fill_uniform(x, rng, 2.0);

  ca<T, DIn, DOut, Ctx, true> c{};
  mha_test::randomize(c, rng);
  c.w_value.weight = {};
  for (T& b : c.w_value.bias) b = 1;

  wrap<T, DIn, DOut, Ctx, 3, true> w{};
  mha_test::randomize(w, rng);
  [&]<std::size_t... H>(std::index_sequence<H...>) {
    ((w.template head<H>().w_value.weight = {}), ...);
    ((std::fill(w.template head<H>().w_value.bias.begin(), w.template head<H>().w_value.bias.end(),
                T(1))),
     ...);
  }(std::make_index_sequence<3>{});

  mhat<T, DIn, 2 * DOut, Ctx, 2, true> a{};
  mha_test::randomize(a, rng);
  a.w_value.weight = {};
  for (T& b : a.w_value.bias) b = 1;
  a.out_proj.weight = {};
  a.out_proj.bias = {};
  for (std::size_t i = 0; i < 2 * DOut; ++i) a.out_proj.weight(i, i) = 1;

  for (const double scale : {1.0, 100.0}) {
    INFO("inputs scaled by " << scale);
    auto xs = x;
    for (T& v : xs) v = static_cast<T>(v * scale);
    const auto yc = c.forward(xs);
    const auto yw = w.forward(xs);
    const auto ya = a.forward(xs);
    CAPTURE(worst_row_sum_error(yc), worst_row_sum_error(yw), worst_row_sum_error(ya));
    REQUIRE(worst_row_sum_error(yc) <= row_sum_tolerance<T>);
    REQUIRE(worst_row_sum_error(yw) <= row_sum_tolerance<T>);
    REQUIRE(worst_row_sum_error(ya) <= row_sum_tolerance<T>);
  }
}

TEST_CASE("every softmax row sums to 1", "[invariants][softmax]") {
  check_row_sums<float>(31);
  check_row_sums<double>(32);
}

// ------------------------------------------------------------------ dropout

// Inference calls decide "no dropout" by the type (docs/embedded.md, "Inference
// builds compile only the path they run"): their modes' `training` gives the
// kernels a no_dropout_state, whose dropout branch is `if constexpr`'d away;
// only a run-time bool (the training forwards) gives a dropout_state.
namespace mha_detail_check {
namespace d = mha::detail;
static_assert(std::is_same_v<decltype(d::make_dropout(0.5f, 1, d::inference_mode{}.training)),
                             d::no_dropout_state<float>>);
static_assert(std::is_same_v<decltype(d::make_dropout(0.5, 1, d::inference_any_path_mode{}.training)),
                             d::no_dropout_state<double>>);
static_assert(std::is_same_v<decltype(d::make_dropout(0.5f, 1, d::forward_mode{true, 1}.training)),
                             d::dropout_state<float>>);
static_assert(!d::no_dropout_state<float>::may_drop && d::dropout_state<float>::may_drop);
}  // namespace mha_detail_check

template <class M, std::size_t B, std::size_t N>
void check_dropout_basics(unsigned seed) {
  using T = typename M::value_type;
  constexpr std::size_t W = M::output_width;
  std::mt19937 rng(seed);
  M m{};
  mha_test::randomize(m, rng);
  mha::tensor<T, B, N, M::d_in> x{};
  mha_test::fill_uniform(x, rng, 2.0);
  const auto inference = m.forward(x);

  SECTION("p = 0: training equals inference exactly, for any seed") {
    mha_test::set_dropout(m, T(0));
    const auto dyn = mha_test::to_dynamic(m);
    for (const std::uint64_t s : {0ULL, 1ULL, 12345ULL, ~0ULL}) {
      REQUIRE(mha_test::same_bits(m.forward_training(x, s), inference));
      REQUIRE(mha_test::same_bits(inference, dyn.forward_training(mha_test::to_dynamic(x), s)));
    }
  }
  SECTION("p > 0: inference ignores dropout") {
    mha_test::set_dropout(m, T(0.5));
    REQUIRE(mha_test::same_bits(m.forward(x), inference));
    REQUIRE(mha_test::same_bits(inference, mha_test::to_dynamic(m).forward(mha_test::to_dynamic(x))));
  }
  SECTION("p > 0: deterministic per seed, seeds differ, fixed == dynamic") {
    mha_test::set_dropout(m, T(0.4));
    const auto dyn = mha_test::to_dynamic(m);
    const auto dx = mha_test::to_dynamic(x);
    const auto a = m.forward_training(x, 2024);
    REQUIRE_FALSE(mha_test::same_bits(a, inference));
    REQUIRE(mha_test::same_bits(a, m.forward_training(x, 2024)));
    REQUIRE_FALSE(mha_test::same_bits(a, m.forward_training(x, 2025)));
    REQUIRE(mha_test::same_bits(a, dyn.forward_training(dx, 2024)));

    // Caller-owned output and workspace overloads draw the same masks.
    auto ws = std::make_unique<typename M::template workspace<B, N>>();
    mha::tensor<T, B, N, W> out{};
    m.forward_training(x, out, *ws, 2024);
    REQUIRE(mha_test::same_bits(a, out));
    mha::dynamic::tensor<T> dout({B, N, W});
    mha::dynamic::workspace<T> dws;
    dyn.forward_training(dx, dout, dws, 2024);
    REQUIRE(mha_test::same_bits(a, dout));
  }
}

TEST_CASE("dropout: p = 0, inference mode, determinism, fixed == dynamic", "[invariants][dropout]") {
  SECTION("causal_attention float") { check_dropout_basics<ca<float, 6, 4, 8, true>, 2, 8>(41); }
  SECTION("causal_attention double") { check_dropout_basics<ca<double, 6, 4, 8, false>, 2, 6>(42); }
  SECTION("wrapper float") { check_dropout_basics<wrap<float, 6, 3, 8, 3, true>, 2, 8>(43); }
  SECTION("wrapper double") { check_dropout_basics<wrap<double, 8, 2, 5, 2, false>, 1, 5>(44); }
  SECTION("multi_head_attention float") {
    check_dropout_basics<mhat<float, 5, 6, 9, 3, true>, 2, 8>(45);
  }
  SECTION("multi_head_attention double") {
    check_dropout_basics<mhat<double, 12, 8, 10, 4, false>, 3, 5>(46);
  }
}

// Observable attention weights: causal_attention with d_in = d_out = N, token
// j's embedding the one-hot vector e_j and W_value = identity, so V = identity
// and context[b][i][j] is exactly the weight of query i on key j (every other
// term of the sum is an exact 0 * 0). Inference gives the softmax weights A;
// training must give, element by element, either exactly 0 (dropped) or
// exactly A * (1/(1-p)) rounded to T (kept), and masked (j > i) stays 0.
template <class T>
struct observable_weights {
  static constexpr std::size_t B = 8, N = 32;
  using model_t = ca<T, N, N, N, false>;
  model_t m{};
  mha::tensor<T, B, N, N> x{};
  mha::tensor<T, B, N, N> a{};  // inference weights

  explicit observable_weights(unsigned seed) {
    std::mt19937 rng(seed);
    mha_test::randomize(m, rng);
    // Larger query/key weights make the softmax rows far from uniform.
    for (T& v : m.w_query.weight) v *= 8;
    m.w_value.weight = {};
    for (std::size_t i = 0; i < N; ++i) m.w_value.weight(i, i) = 1;
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t j = 0; j < N; ++j) x(b, j, j) = 1;
    a = m.forward(x);
  }
};

TEST_CASE("dropout: kept weights scaled by 1/(1-p), rows not renormalised, rate p",
          "[invariants][dropout]") {
  observable_weights<float> ow(51);
  constexpr std::size_t B = observable_weights<float>::B, N = observable_weights<float>::N;
  using T = float;

  // The observable really shows softmax weights.
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < N; ++i) {
      T sum = 0;
      for (std::size_t j = 0; j < N; ++j) {
        if (j <= i) REQUIRE(ow.a(b, i, j) > T(0));
        else REQUIRE(ow.a(b, i, j) == T(0));
        sum += ow.a(b, i, j);
      }
      REQUIRE(std::fabs(sum - T(1)) <= 1e-5f);
    }

  for (const T p : {T(0.1), T(0.5), T(0.75)}) {
    INFO("p = " << p);
    ow.m.dropout = p;
    const T scale = T(1) / (T(1) - p);
    const auto dyn = mha_test::to_dynamic(ow.m);
    const auto dx = mha_test::to_dynamic(ow.x);
    std::size_t kept = 0, total = 0, bad = 0, renormalised_rows = 0, rows_with_drops = 0;
    std::size_t batch_masks_equal = 0;
    constexpr std::uint64_t seeds = 40;
    for (std::uint64_t seed = 0; seed < seeds; ++seed) {
      const auto t = ow.m.forward_training(ow.x, seed);
      REQUIRE(mha_test::same_bits(t, dyn.forward_training(dx, seed)));
      for (std::size_t b = 0; b < B; ++b)
        for (std::size_t i = 0; i < N; ++i) {
          T row_sum = 0;
          bool dropped_any = false;
          for (std::size_t j = 0; j < N; ++j) {
            const T v = t(b, i, j);
            row_sum += v;
            if (j > i) {
              if (v != T(0)) ++bad;  // masked positions stay zero
              continue;
            }
            ++total;
            if (v == T(0)) {
              dropped_any = true;
            } else {
              ++kept;
              if (v != ow.a(b, i, j) * scale) ++bad;
            }
          }
          if (dropped_any) {
            ++rows_with_drops;
            if (std::fabs(row_sum - T(1)) <= 1e-5f) ++renormalised_rows;
          }
        }
      // All batch elements are the same sequence; their masks must differ.
      for (std::size_t b = 1; b < B; ++b)
        if (mha_test::same_bits(&t(b, 0, 0), &t(0, 0, 0), N * N)) ++batch_masks_equal;
    }
    REQUIRE(bad == 0);
    REQUIRE(batch_masks_equal == 0);
    // A dropped row sums to (1/(1-p)) * (kept weights), not to 1.
    REQUIRE(rows_with_drops > 0);
    REQUIRE(renormalised_rows < rows_with_drops / 20);
    // Kept fraction close to 1 - p: within 5 binomial standard deviations.
    const double n = static_cast<double>(total);
    const double q = 1.0 - static_cast<double>(p);
    const double fraction = static_cast<double>(kept) / n;
    const double sigma = std::sqrt(q * (1.0 - q) / n);
    CAPTURE(kept, total, fraction, sigma);
    REQUIRE(std::fabs(fraction - q) <= 5 * sigma);
  }
}

TEST_CASE("dropout: double precision observable weights", "[invariants][dropout]") {
  observable_weights<double> ow(52);
  constexpr std::size_t B = observable_weights<double>::B, N = observable_weights<double>::N;
  ow.m.dropout = 0.5;
  const auto t = ow.m.forward_training(ow.x, 7);
  std::size_t bad = 0, dropped = 0;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        if (t(b, i, j) == 0.0) ++dropped;
        else if (t(b, i, j) != ow.a(b, i, j) * 2.0) ++bad;
      }
  REQUIRE(bad == 0);
  REQUIRE(dropped > 0);
  REQUIRE(mha_test::same_bits(t, mha_test::to_dynamic(ow.m).forward_training(mha_test::to_dynamic(ow.x), 7)));
}

TEST_CASE("dropout: heads draw independent masks", "[invariants][dropout]") {
  // Two identical heads: in inference their blocks are equal, in training not.
  std::mt19937 rng(61);
  wrap<float, 4, 3, 8, 2, false> w{};
  mha_test::randomize(w.head<0>(), rng);
  w.head<1>() = w.head<0>();
  mha::tensor<float, 2, 8, 4> x{};
  mha_test::fill_uniform(x, rng, 2.0);
  auto blocks_equal = [](const auto& y) {
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t i = 0; i < 8; ++i)
        if (!mha_test::same_bits(&y(b, i, 0), &y(b, i, 3), 3)) return false;
    return true;
  };
  REQUIRE(blocks_equal(w.forward(x)));
  mha_test::set_dropout(w, 0.5f);
  REQUIRE_FALSE(blocks_equal(w.forward_training(x, 3)));

  // multi_head_attention: identical head blocks of W_query/W_key/W_value.
  mhat<float, 4, 6, 8, 2, false> a{};
  mha_test::randomize(a, rng);
  for (std::size_t r = 0; r < 3; ++r)
    for (std::size_t c = 0; c < 4; ++c) {
      a.w_query.weight(3 + r, c) = a.w_query.weight(r, c);
      a.w_key.weight(3 + r, c) = a.w_key.weight(r, c);
      a.w_value.weight(3 + r, c) = a.w_value.weight(r, c);
    }
  a.out_proj.weight = {};
  a.out_proj.bias = {};
  for (std::size_t i = 0; i < 6; ++i) a.out_proj.weight(i, i) = 1;
  REQUIRE(blocks_equal(a.forward(x)));
  a.dropout = 0.5f;
  REQUIRE_FALSE(blocks_equal(a.forward_training(x, 3)));
}

TEST_CASE("dropout: p = 1 drops every weight", "[invariants][dropout]") {
  std::mt19937 rng(71);
  mha::tensor<double, 2, 6, 5> x{};
  mha_test::fill_uniform(x, rng, 2.0);

  ca<double, 5, 4, 6, true> c{};  // (its kernels, head_dim 4 with dropout, are compiled anyway)
  mha_test::randomize(c, rng);
  c.dropout = 1.0;
  const auto yc = c.forward_training(x, 5);
  for (const double v : yc) REQUIRE(v == 0.0);
  const auto dyc = mha_test::to_dynamic(c).forward_training(mha_test::to_dynamic(x), 5);
  for (const double v : dyc) REQUIRE(v == 0.0);

  wrap<double, 5, 2, 6, 3, false> w{};
  mha_test::randomize(w, rng);
  mha_test::set_dropout(w, 1.0);
  for (const double v : w.forward_training(x, 5)) REQUIRE(v == 0.0);

  // multi_head_attention: zero context, so every row is out_proj's bias.
  mhat<double, 5, 6, 6, 3, true> a{};
  mha_test::randomize(a, rng);
  a.dropout = 1.0;
  const auto ya = a.forward_training(x, 5);
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t i = 0; i < 6; ++i)
      for (std::size_t o = 0; o < 6; ++o) REQUIRE(ya(b, i, o) == a.out_proj.bias(o));
  REQUIRE(mha_test::same_bits(ya, mha_test::to_dynamic(a).forward_training(mha_test::to_dynamic(x), 5)));
}

}  // namespace

TEST_CASE("NaN and overflowing scores propagate to NaN as in PyTorch, not to a finite average",
          "[invariants]") {
  // PyTorch: softmax of a row containing NaN (or inf - inf after score
  // overflow) is NaN; the context is then NaN. A clamp inside exp must not
  // turn NaN into a finite weight.
  mha::multi_head_attention<float, 4, 4, 8, 1> f{};
  for (std::size_t i = 0; i < 4; ++i) {
    f.w_query.weight(i, i) = 1.0f;
    f.w_key.weight(i, i) = 1.0f;
    f.w_value.weight(i, i) = 1.0f;
    f.out_proj.weight(i, i) = 1.0f;
  }
  mha::tensor<float, 3, 4> x{};
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 4; ++j) x(i, j) = 0.1f * static_cast<float>(i * 4 + j + 1);
  auto d = mha_test::to_dynamic(f);
  f.w_key.weight(0, 0) = std::numeric_limits<float>::quiet_NaN();
  d.w_key.weight(0, 0) = std::numeric_limits<float>::quiet_NaN();
  const auto y = f(x);
  const auto yd = d(mha_test::to_dynamic(x));
  for (std::size_t k = 0; k < y.size; ++k) {
    CHECK(std::isnan(y.data()[k]));
    CHECK(std::isnan(yd.data()[k]));
  }
  f.w_key.weight(0, 0) = 1.0f;
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 4; ++j) x(i, j) = 1e30f * static_cast<float>(i + 1);
  const auto z = f(x);  // scores overflow to inf; inf - inf = NaN in the softmax
  CHECK(std::isnan(z(1, 0)));
}
