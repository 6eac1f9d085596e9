// score_checks.hpp -- the checks that test_scores.cpp and test_sinks.cpp run
// on each of their PyTorch fixtures (test/variant_fixture.hpp's schema):
// a fixed-size module against the fixture's output, its mha::dynamic twin,
// its fused twin, its run-time token-count forward and its KV-cache streams.
// Nothing here computes an expected result.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>

#include <mha/mha.hpp>

#include "test_support.hpp"
#include "variant_fixture.hpp"

namespace score_checks {

/// The tolerance against PyTorch: float 2e-6, double 1e-12, relative to
/// max(1, |expected|) (as test_variants.cpp).
template <class T>
constexpr double rtol = std::is_same_v<T, float> ? 2e-6 : 1e-12;

/// The largest error / allowed of check_close in this process, per element
/// type (float, double).
inline double worst_ratio[2] = {0, 0};

/// actual [B][N][W] within rtol<T> of the fixture's output.
template <class T>
void check_close(const T* actual, const variant_fixture::fixture<T>& fx, const char* what) {
  const auto c = mha_test::compare(actual, fx.output.data.data(), fx.output.size(), rtol<T>);
  double& w = worst_ratio[std::is_same_v<T, float> ? 0 : 1];
  w = std::max(w, c.worst_ratio);
  INFO(fx.name << " " << what << ": " << c.describe());
  CHECK(c.violations == 0);
}

/// Runs module m over the fixture's tokens through its KV cache in steps of
/// `chunks` tokens (summing to N); returns the output rows [B][N][W].
template <class M, std::size_t B, std::size_t N>
std::vector<typename M::value_type> cached_stream(const M& m, const typename M::value_type* x,
                                                  const std::vector<std::size_t>& chunks) {
  using T = typename M::value_type;
  constexpr std::size_t C = M::context_length, D = M::d_in, W = M::output_width;
  auto cache = std::make_unique<typename M::template kv_cache<B>>();
  auto ws = std::make_unique<typename M::template workspace<B, C>>();
  auto xs = std::make_unique<mha::tensor<T, B, C, D>>();
  auto out = std::make_unique<mha::tensor<T, B, C, W>>();
  std::vector<T> result(B * N * W);
  std::size_t p = 0;
  for (const std::size_t k : chunks) {
    for (std::size_t b = 0; b < B; ++b)
      std::copy(x + (b * N + p) * D, x + (b * N + p + k) * D, xs->data() + b * C * D);
    REQUIRE(m.forward(*xs, k, *out, *cache, *ws) == mha::status::ok);
    for (std::size_t b = 0; b < B; ++b)
      std::copy(out->data() + b * C * W, out->data() + (b * C + k) * W, result.data() + (b * N + p) * W);
    p += k;
  }
  REQUIRE(p == N);
  REQUIRE(cache->size() == N);
  return result;
}

/// The same stream through the dynamic module's KV cache.
template <class D, class T>
std::vector<T> dynamic_cached_stream(const D& dyn, const T* x, std::size_t B, std::size_t N,
                                     std::size_t DIn, std::size_t W,
                                     const std::vector<std::size_t>& chunks) {
  mha::dynamic::kv_cache<T> cache(dyn, B);
  mha::dynamic::workspace<T> ws;
  std::vector<T> result(B * N * W);
  std::size_t p = 0;
  for (const std::size_t k : chunks) {
    mha::dynamic::tensor<T> xs({B, k, DIn}), out({B, k, W});
    for (std::size_t b = 0; b < B; ++b)
      std::copy(x + (b * N + p) * DIn, x + (b * N + p + k) * DIn, xs.data() + b * k * DIn);
    dyn.forward(xs, out, cache, ws);
    for (std::size_t b = 0; b < B; ++b)
      std::copy(out.data() + b * k * W, out.data() + (b + 1) * k * W, result.data() + (b * N + p) * W);
    p += k;
  }
  REQUIRE(cache.size() == N);
  return result;
}

/// The step schedules of a cached stream of N tokens: one token at a time,
/// and chunks (for N > 16: 3, then 12 (the blocked kernels), then 1, then
/// the rest; otherwise 2 then the rest, a multi-row decode step).
inline std::vector<std::vector<std::size_t>> schedules(std::size_t n) {
  std::vector<std::vector<std::size_t>> s{std::vector<std::size_t>(n, 1)};
  if (n > 16)
    s.push_back({3, 12, 1, n - 16});
  else if (n > 2)
    s.push_back({2, n - 2});
  return s;
}

/// The checks of a fixed-size module m (loaded from fixture fx) on input x
/// [B][N][DIn]: forward(x) against PyTorch; the dynamic twin `dyn` (given
/// m's parameters here) and the fused twin (where m has one) give the same
/// bits, also cached; the run-time token count gives the same bits; the KV
/// cache, token by token and in chunks (schedules), against PyTorch, the
/// dynamic cache the same bits.
template <class M, class D, std::size_t B, std::size_t N>
void check_paths(const M& m, D& dyn, const variant_fixture::fixture<typename M::value_type>& fx,
                 const mha::tensor<typename M::value_type, B, N, M::d_in>& x) {
  using T = typename M::value_type;
  constexpr std::size_t C = M::context_length, DIn = M::d_in, W = M::output_width;
  const auto out = std::make_unique<mha::tensor<T, B, N, W>>(m.forward(x));
  REQUIRE(fx.output.size() == out->size);
  check_close(out->data(), fx, "forward(x)");

  // the dynamic twin
  mha::copy_parameters(m, dyn);
  mha::dynamic::tensor<T> xd({B, N, DIn});
  std::copy(x.data(), x.data() + x.size, xd.data());
  CHECK(mha_test::same_bits(*out, dyn.forward(xd)));

  // the fused twin
  if constexpr (requires { mha::fuse_qkv(m); }) {
    const auto f = std::make_unique<decltype(mha::fuse_qkv(m))>(mha::fuse_qkv(m));
    using F = std::remove_cvref_t<decltype(*f)>;
    STATIC_REQUIRE(F::scores == M::scores);
    CHECK(mha_test::same_bits(*out, f->forward(x)));
    const auto steps = schedules(N);
    CHECK(mha_test::same_bits(cached_stream<M, B, N>(m, x.data(), steps.back()).data(),
                              cached_stream<F, B, N>(*f, x.data(), steps.back()).data(), B * N * W));
  }

  // the run-time token count: the first N rows of a [B][C] buffer
  {
    auto ws = std::make_unique<typename M::template workspace<B, C>>();
    auto xl = std::make_unique<mha::tensor<T, B, C, DIn>>();
    for (std::size_t b = 0; b < B; ++b)
      std::copy(x.data() + b * N * DIn, x.data() + (b + 1) * N * DIn, xl->data() + b * C * DIn);
    auto outl = std::make_unique<mha::tensor<T, B, C, W>>();
    REQUIRE(m.forward(*xl, N, *outl, *ws) == mha::status::ok);
    bool same = true;
    for (std::size_t b = 0; b < B; ++b)
      same = same && mha_test::same_bits(out->data() + b * N * W, outl->data() + b * C * W, N * W);
    CHECK(same);
  }

  // the KV cache: token by token and in chunks, against PyTorch; dynamic = fixed
  for (const auto& steps : schedules(N)) {
    INFO("cached, " << steps.size() << " steps, first " << steps.front());
    const auto rows = cached_stream<M, B, N>(m, x.data(), steps);
    check_close(rows.data(), fx, "cached");
    const auto drows = dynamic_cached_stream(dyn, x.data(), B, N, DIn, W, steps);
    CHECK(mha_test::same_bits(rows.data(), drows.data(), rows.size()));
  }
}

}  // namespace score_checks
