// test_support.hpp -- helpers shared by the mha test files: random weights,
// copying a fixed-size module into its mha::dynamic twin, bitwise and
// tolerance comparisons. Nothing here computes an expected result.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <mha/mha.hpp>

namespace mha_test {

/// Fills n values with U(-bound, bound) drawn from rng.
template <class T>
void fill_uniform(T* p, std::size_t n, std::mt19937& rng, double bound) {
  std::uniform_real_distribution<double> dist(-bound, bound);
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<T>(dist(rng));
}

/// Fills a fixed-size tensor with U(-bound, bound).
template <class T, std::size_t... E>
void fill_uniform(mha::tensor<T, E...>& t, std::mt19937& rng, double bound) {
  fill_uniform(t.data(), t.size, rng, bound);
}

/// nn.Linear-style initialisation: weight and bias U(-1/sqrt(in), 1/sqrt(in)).
template <class T, std::size_t In, std::size_t Out, bool Bias>
void randomize(mha::linear<T, In, Out, Bias>& l, std::mt19937& rng) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(In));
  fill_uniform(l.weight, rng, bound);
  if constexpr (Bias) fill_uniform(l.bias, rng, bound);
}

template <class T, std::size_t DIn, std::size_t DOut, std::size_t Ctx, bool B>
void randomize(mha::causal_attention<T, DIn, DOut, Ctx, B>& m, std::mt19937& rng) {
  randomize(m.w_query, rng);
  randomize(m.w_key, rng);
  randomize(m.w_value, rng);
}

template <class T, std::size_t DIn, std::size_t DOut, std::size_t Ctx, std::size_t H, bool B>
void randomize(mha::multi_head_attention_wrapper<T, DIn, DOut, Ctx, H, B>& m, std::mt19937& rng) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (randomize(m.template head<I>(), rng), ...);
  }(std::make_index_sequence<H>{});
}

template <class T, std::size_t DIn, std::size_t DOut, std::size_t Ctx, std::size_t H, bool B>
void randomize(mha::multi_head_attention<T, DIn, DOut, Ctx, H, B>& m, std::mt19937& rng) {
  randomize(m.w_query, rng);
  randomize(m.w_key, rng);
  randomize(m.w_value, rng);
  randomize(m.out_proj, rng);
}

/// Sets every head's (or the module's) dropout probability.
template <class T, std::size_t DIn, std::size_t DOut, std::size_t Ctx, bool B>
void set_dropout(mha::causal_attention<T, DIn, DOut, Ctx, B>& m, T p) {
  m.dropout = p;
}
template <class T, std::size_t DIn, std::size_t DOut, std::size_t Ctx, std::size_t H, bool B>
void set_dropout(mha::multi_head_attention_wrapper<T, DIn, DOut, Ctx, H, B>& m, T p) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ((m.template head<I>().dropout = p), ...);
  }(std::make_index_sequence<H>{});
}
template <class T, std::size_t DIn, std::size_t DOut, std::size_t Ctx, std::size_t H, bool B>
void set_dropout(mha::multi_head_attention<T, DIn, DOut, Ctx, H, B>& m, T p) {
  m.dropout = p;
}

/// A zero-filled mha::dynamic tensor with the extents of a fixed tensor.
template <class T, std::size_t... E>
mha::dynamic::tensor<T> to_dynamic(const mha::tensor<T, E...>& t) {
  mha::dynamic::tensor<T> d(std::vector<std::size_t>{E...});
  std::copy(t.begin(), t.end(), d.begin());
  return d;
}

/// Copies a fixed-size linear's parameters into a dynamic linear of the same sizes.
template <class T, std::size_t In, std::size_t Out, bool Bias>
void copy_into(const mha::linear<T, In, Out, Bias>& f, mha::dynamic::linear<T>& d) {
  std::copy(f.weight.begin(), f.weight.end(), d.weight.begin());
  if constexpr (Bias) std::copy(f.bias.begin(), f.bias.end(), d.bias.begin());
}

/// The mha::dynamic twin of a fixed-size module, with the same parameters.
template <class T, std::size_t DIn, std::size_t DOut, std::size_t Ctx, bool B>
mha::dynamic::causal_attention<T> to_dynamic(const mha::causal_attention<T, DIn, DOut, Ctx, B>& f) {
  mha::dynamic::causal_attention<T> d(DIn, DOut, Ctx, B);
  copy_into(f.w_query, d.w_query);
  copy_into(f.w_key, d.w_key);
  copy_into(f.w_value, d.w_value);
  d.dropout = f.dropout;
  return d;
}
template <class T, std::size_t DIn, std::size_t DOut, std::size_t Ctx, std::size_t H, bool B>
mha::dynamic::multi_head_attention_wrapper<T> to_dynamic(
    const mha::multi_head_attention_wrapper<T, DIn, DOut, Ctx, H, B>& f) {
  mha::dynamic::multi_head_attention_wrapper<T> d(DIn, DOut, Ctx, H, B);
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ((d.heads[I] = to_dynamic(f.template head<I>())), ...);
  }(std::make_index_sequence<H>{});
  return d;
}
template <class T, std::size_t DIn, std::size_t DOut, std::size_t Ctx, std::size_t H, bool B>
mha::dynamic::multi_head_attention<T> to_dynamic(
    const mha::multi_head_attention<T, DIn, DOut, Ctx, H, B>& f) {
  mha::dynamic::multi_head_attention<T> d(DIn, DOut, Ctx, H, B);
  copy_into(f.w_query, d.w_query);
  copy_into(f.w_key, d.w_key);
  copy_into(f.w_value, d.w_value);
  copy_into(f.out_proj, d.out_proj);
  d.dropout = f.dropout;
  return d;
}

/// True when the n values at a and b have identical object representations.
template <class T>
bool same_bits(const T* a, const T* b, std::size_t n) {
  return std::memcmp(a, b, n * sizeof(T)) == 0;
}
template <class T, std::size_t... E>
bool same_bits(const mha::tensor<T, E...>& a, const mha::tensor<T, E...>& b) {
  return same_bits(a.data(), b.data(), a.size);
}
template <class T, std::size_t... E>
bool same_bits(const mha::tensor<T, E...>& a, const mha::dynamic::tensor<T>& b) {
  return b.shape() == std::vector<std::size_t>{E...} && same_bits(a.data(), b.data(), a.size);
}

/// True when every value is finite.
template <class T>
bool all_finite(const T* p, std::size_t n) {
  return std::all_of(p, p + n, [](T v) { return std::isfinite(v); });
}

/// Relative tolerance of the PyTorch comparisons (issue 2, section 5):
/// float 1e-5, double 1e-12.
template <class T>
constexpr double reference_rtol = sizeof(T) == sizeof(float) ? 1e-5 : 1e-12;

/// Result of comparing computed values with reference values under
///   |actual - expected| <= rtol * max(1, |expected|)
/// i.e. relative for |expected| >= 1 and absolute (rtol) below 1.
struct closeness {
  std::size_t violations = 0;
  std::size_t worst_index = 0;
  double worst_ratio = -1;  ///< max over elements of |a-e| / (rtol * max(1,|e|))
  double worst_actual = 0, worst_expected = 0;
  std::string describe() const {
    std::ostringstream s;
    s.precision(17);
    s << violations << " element(s) out of tolerance; worst at flat index " << worst_index
      << ": actual " << worst_actual << ", expected " << worst_expected
      << " (error / allowed = " << worst_ratio << ")";
    return s.str();
  }
};

template <class A, class E>
closeness compare(const A* actual, const E* expected, std::size_t n, double rtol) {
  closeness c;
  for (std::size_t i = 0; i < n; ++i) {
    const double a = static_cast<double>(actual[i]);
    const double e = static_cast<double>(expected[i]);
    const double allowed = rtol * std::max(1.0, std::fabs(e));
    const double err = std::fabs(a - e);
    const double ratio = std::isnan(err) ? INFINITY : err / allowed;
    if (!(err <= allowed)) ++c.violations;
    if (!(ratio <= c.worst_ratio)) {
      c.worst_ratio = ratio;
      c.worst_index = i;
      c.worst_actual = a;
      c.worst_expected = e;
    }
  }
  return c;
}

}  // namespace mha_test
