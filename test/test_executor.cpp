// test_executor.cpp -- the execution seam of the pipeline (detail/engine/executor.hpp):
// the forwards' loops over the sequences of a call run through the spec's executor.
//
// A test executor that records the sequences it is given and runs them in
// reverse order replaces serial_executor (detail::with_executor) in a spec
// built as mha::dynamic's multi_head_attention builds its own (run-time
// sizes, one group of every head, out_proj): the whole-sequence, padded,
// cross-attention and cached forwards (a decode-path call of 3 rows and a
// blocked call of 10) hand the executor every sequence (the padded call each
// non-empty sequence a second time, as its own batch of one), and their
// outputs (and attention weights) are the serial executor's, bit for bit,
// float and double. (The sequences write disjoint rows, so the order of the
// pieces must not matter; a loop that bypassed the executor would record
// nothing.)
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include <mha/mha.hpp>

#include "test_support.hpp"

namespace executor_test {

/// Runs f(i, 0) for i = count-1 .. 0 and appends each i to *order.
struct reverse_executor {
  static constexpr std::size_t workers = 1;
  std::vector<std::size_t>* order;
  template <class F>
  void for_each(std::size_t count, F&& f) const {
    for (std::size_t i = count; i-- > 0;) {
      order->push_back(i);
      f(i, std::size_t{0});
    }
  }
};

/// count-1, ..., 0 repeated `calls` times.
std::vector<std::size_t> reversed(std::size_t count, std::size_t calls = 1) {
  std::vector<std::size_t> v;
  for (std::size_t c = 0; c < calls; ++c)
    for (std::size_t i = count; i-- > 0;) v.push_back(i);
  return v;
}

template <class T>
struct model {
  static constexpr std::size_t d_in = 8, heads = 2, head_dim = 4, width = heads * head_dim;
  std::vector<T> wq, wk, wv, bq, bk, bv, wo, bo;
  explicit model(std::mt19937& rng) {
    for (auto* w : {&wq, &wk, &wv}) {
      w->resize(width * d_in);
      mha_test::fill_uniform(w->data(), w->size(), rng, 0.5);
    }
    for (auto* b : {&bq, &bk, &bv, &bo}) {
      b->resize(width);
      mha_test::fill_uniform(b->data(), b->size(), rng, 0.5);
    }
    wo.resize(width * width);
    mha_test::fill_uniform(wo.data(), wo.size(), rng, 0.5);
  }
  /// The spec of this model with score options Scores.
  template <mha::attention_scores Scores = mha::attention_scores{}>
  auto spec() const {
    namespace d = mha::detail;
    const d::qkv_weights<T, const T*> w{d::weight_access(wq), bq.data(), d::weight_access(wk),
                                        bk.data(), d::weight_access(wv), bv.data(), T(0)};
    return d::make_spec<T, Scores>(d_in, head_dim, heads, std::size_t{1},
                                   [w](std::size_t) { return w; },
                                   d::out_weights<T, const T*>{d::weight_access(wo), bo.data()},
                                   static_cast<T>(std::sqrt(static_cast<T>(head_dim))));
  }
};

template <class T>
void check_executor() {
  namespace d = mha::detail;
  std::mt19937 rng(2024);
  const model<T> m(rng);
  constexpr std::size_t B = 3, N = 5, W = model<T>::width, DIn = model<T>::d_in, Max = 16;
  std::vector<T> x(B * N * DIn);
  mha_test::fill_uniform(x.data(), x.size(), rng, 1.0);
  const auto serial = m.spec();
  std::vector<std::size_t> order;
  const auto reverse = d::with_executor(serial, reverse_executor{&order});
  std::vector<T> ws(4 * Max * W * B), scores(d::gemm::mr * Max * 2);
  const auto run_sequence = [&](const auto& s, T* weights) {
    std::vector<T> out(B * N * W);
    const d::weights_out<T> wo{weights, N, N * N, model<T>::heads * N * N, false};
    d::forward_sequence<N>(s, x.data(), N * DIn, B, N, out.data(), N * W, ws.data(),
                           scores.data(), false, std::uint64_t{0}, wo);
    return out;
  };
  SECTION("whole sequence, with the attention weights") {
    std::vector<T> w1(B * model<T>::heads * N * N), w2(w1.size());
    const auto a = run_sequence(serial, w1.data());
    const auto b = run_sequence(reverse, w2.data());
    CHECK(order == reversed(B));
    CHECK(mha_test::same_bits(a.data(), b.data(), a.size()));
    CHECK(mha_test::same_bits(w1.data(), w2.data(), w1.size()));
  }
  SECTION("padded batch") {
    const std::size_t lengths[B] = {5, 0, 3};
    const auto run = [&](const auto& s) {
      std::vector<T> out(B * N * W, T(7));
      d::forward_padded<N>(s, x.data(), N * DIn, B, lengths, N, out.data(), N * W, ws.data(),
                           scores.data(), false, std::uint64_t{0}, d::weights_out<T>{});
      return out;
    };
    const auto a = run(serial);
    const auto b = run(reverse);
    // the padded loop, then each non-empty sequence's own forward (a batch of one)
    CHECK(order == std::vector<std::size_t>{2, 0, 1, 0, 0});
    CHECK(mha_test::same_bits(a.data(), b.data(), a.size()));
  }
  SECTION("cross-attention") {
    const auto cross_serial = m.template spec<mha::attention_scores{.mask = mha::attention_mask::none}>();
    const auto cross_reverse = d::with_executor(cross_serial, reverse_executor{&order});
    constexpr std::size_t Nkv = 4;
    std::vector<T> kv(B * Nkv * DIn);
    mha_test::fill_uniform(kv.data(), kv.size(), rng, 1.0);
    const std::size_t key_lengths[B] = {4, 0, 2};
    const auto run = [&](const auto& s) {
      std::vector<T> out(B * N * W);
      d::forward_cross(s, x.data(), N * DIn, B, N, kv.data(), Nkv * DIn, DIn, kv.data(),
                       Nkv * DIn, DIn, Nkv, key_lengths, out.data(), N * W, ws.data(),
                       scores.data(), false, std::uint64_t{0}, d::weights_out<T>{});
      return out;
    };
    const auto a = run(cross_serial);
    const auto b = run(cross_reverse);
    CHECK(order == reversed(B));
    CHECK(mha_test::same_bits(a.data(), b.data(), a.size()));
  }
  SECTION("KV cache: a decode-path call, then a blocked one") {
    constexpr std::size_t Cap = 16;
    const auto run = [&](const auto& s) {
      std::vector<T> kt(B * W * Cap), v(B * W * Cap), out(B * 10 * W);
      const d::kv_store<T> store{kt.data(), v.data(), Cap, W * Cap};
      std::vector<T> xs(B * 10 * DIn);
      std::mt19937 r(7);
      mha_test::fill_uniform(xs.data(), xs.size(), r, 1.0);
      d::forward_cached(s, xs.data(), 10 * DIn, B, 3, out.data(), 10 * W, store, 0, ws.data(),
                        scores.data(), Cap);
      std::vector<T> first(out);
      d::forward_cached(s, xs.data(), 10 * DIn, B, 10, out.data(), 10 * W, store, 3, ws.data(),
                        scores.data(), Cap);
      first.insert(first.end(), out.begin(), out.end());
      first.insert(first.end(), kt.begin(), kt.end());
      first.insert(first.end(), v.begin(), v.end());
      return first;
    };
    const auto a = run(serial);
    const auto b = run(reverse);
    CHECK(order == reversed(B, 2));
    CHECK(mha_test::same_bits(a.data(), b.data(), a.size()));
  }
}

}  // namespace executor_test

TEST_CASE("the forwards' loops over a call's sequences run through the spec's executor", "[executor]") {
  SECTION("float") { executor_test::check_executor<float>(); }
  SECTION("double") { executor_test::check_executor<double>(); }
}
