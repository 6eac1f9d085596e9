// test_weight_split.cpp -- the weight-split identity of book section 3.6.2:
// a multi_head_attention whose W_query/W_key/W_value stack the wrapper heads'
// matrices block by block (rows [h*d, (h+1)*d) = head h's weight [d][DIn]),
// with out_proj = identity and zero out_proj bias, equals the wrapper.
//
// Expected: bit-identical (compared with ==, so +0 and -0 count as equal).
// Both run the same code in mha/detail/kernels/kernels.hpp: row h*d+r of the stacked
// product is the same dot product over the same inputs in the same order as
// row r of head h's own product; each head's attention uses head_dim = d and
// the divisor sqrt(d) in both; and the identity out_proj adds only exact
// zeros (0 * c) to the single term 1 * c, then adds a zero bias. The same holds
// in training mode, because dropout decisions depend on (seed, head, b, i, j)
// only and the wrapper's head h uses head index h.
//
// Also checks the compile-time views: head_weights<H>() addresses rows
// [H*head_dim, (H+1)*head_dim), views are pointer-sized, and head_offset.
#include <catch2/catch.hpp>

#include <cstddef>
#include <memory>
#include <random>
#include <utility>

#include <mha/mha.hpp>

#include "test_support.hpp"

namespace {

template <class T, std::size_t DIn, std::size_t D, std::size_t Ctx, std::size_t H, bool Bias>
struct split_pair {
  using wrapper_t = mha::multi_head_attention_wrapper<T, DIn, D, Ctx, H, Bias>;
  using mha_t = mha::multi_head_attention<T, DIn, H * D, Ctx, H, Bias>;
  wrapper_t wrapper{};
  mha_t stacked{};
};

template <class T, std::size_t DIn, std::size_t W, std::size_t D, bool Bias>
void stack_block(mha::linear<T, DIn, W, Bias>& dst, const mha::linear<T, DIn, D, Bias>& src,
                 std::size_t h) {
  static_assert(W % D == 0);
  REQUIRE((h + 1) * D <= W);
  for (std::size_t r = 0; r < D; ++r) {
    for (std::size_t i = 0; i < DIn; ++i) dst.weight(h * D + r, i) = src.weight(r, i);
    if constexpr (Bias) dst.bias(h * D + r) = src.bias(r);
  }
}

/// Random wrapper; the stacked multi_head_attention built from it.
template <class Pair>
void build(Pair& p, std::mt19937& rng) {
  mha_test::randomize(p.wrapper, rng);
  constexpr std::size_t heads = Pair::wrapper_t::num_heads;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ((stack_block(p.stacked.w_query, p.wrapper.template head<I>().w_query, I),
      stack_block(p.stacked.w_key, p.wrapper.template head<I>().w_key, I),
      stack_block(p.stacked.w_value, p.wrapper.template head<I>().w_value, I)),
     ...);
  }(std::make_index_sequence<heads>{});
  constexpr std::size_t width = Pair::mha_t::d_out;
  for (std::size_t r = 0; r < width; ++r) {
    for (std::size_t c = 0; c < width; ++c) p.stacked.out_proj.weight(r, c) = r == c ? 1 : 0;
    p.stacked.out_proj.bias(r) = 0;
  }
}

template <class T>
bool equal_values(const T* a, const T* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (!(a[i] == b[i])) return false;
  return true;
}

template <class T, std::size_t DIn, std::size_t D, std::size_t Ctx, std::size_t H, bool Bias,
          std::size_t B, std::size_t N>
void check_identity(unsigned seed) {
  using pair_t = split_pair<T, DIn, D, Ctx, H, Bias>;
  std::mt19937 rng(seed);
  auto p = std::make_unique<pair_t>();
  build(*p, rng);

  mha::tensor<T, B, N, DIn> x{};
  mha_test::fill_uniform(x, rng, 2.0);

  const auto yw = p->wrapper.forward(x);
  const auto ym = p->stacked.forward(x);
  static_assert(std::is_same_v<decltype(yw), decltype(ym)>);
  REQUIRE(equal_values(yw.data(), ym.data(), yw.size));
  // Not trivially equal: the output is not all zeros.
  bool nonzero = false;
  for (const T v : yw) nonzero = nonzero || v != T(0);
  REQUIRE(nonzero);

  // The same identity for the mha::dynamic twins.
  const auto dx = mha_test::to_dynamic(x);
  const auto dyw = mha_test::to_dynamic(p->wrapper).forward(dx);
  const auto dym = mha_test::to_dynamic(p->stacked).forward(dx);
  REQUIRE(equal_values(dyw.data(), dym.data(), dyw.size()));
  REQUIRE(mha_test::same_bits(yw, dyw));

  // Training mode, same dropout probability and seed: same masks per head.
  mha_test::set_dropout(p->wrapper, T(0.25));
  mha_test::set_dropout(p->stacked, T(0.25));
  const auto tw = p->wrapper.forward_training(x, 77);
  const auto tm = p->stacked.forward_training(x, 77);
  REQUIRE(equal_values(tw.data(), tm.data(), tw.size));
  REQUIRE_FALSE(mha_test::same_bits(tw, yw));  // dropout did something

  // The head views address the stacked rows of each head.
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (
        [&] {
          const auto hw = p->stacked.template head_weights<I>();
          static_assert(decltype(hw.query)::rows == D && decltype(hw.query)::cols == DIn);
          REQUIRE(&hw.query(0, 0, 0) == &p->stacked.w_query.weight(I * D, 0));
          REQUIRE(&hw.key(0, D - 1, DIn - 1) == &p->stacked.w_key.weight(I * D + D - 1, DIn - 1));
          REQUIRE(hw.value.row(0, 0) == &p->stacked.w_value.weight(I * D, 0));
          for (std::size_t r = 0; r < D; ++r)
            for (std::size_t i = 0; i < DIn; ++i) {
              REQUIRE(hw.query(0, r, i) == p->wrapper.template head<I>().w_query.weight(r, i));
              REQUIRE(hw.key(0, r, i) == p->wrapper.template head<I>().w_key.weight(r, i));
              REQUIRE(hw.value(0, r, i) == p->wrapper.template head<I>().w_value.weight(r, i));
            }
        }(),
        ...);
  }(std::make_index_sequence<H>{});
}

}  // namespace

TEST_CASE("stacked multi_head_attention with identity out_proj equals the wrapper",
          "[weight_split]") {
  SECTION("float, 3 heads, no qkv bias") { check_identity<float, 5, 4, 9, 3, false, 2, 7>(1); }
  SECTION("float, 3 heads, qkv bias, N == context_length") {
    check_identity<float, 6, 3, 8, 3, true, 3, 8>(2);  // the wrapper of test_golden's wrap_f32_h3_bias
  }
  SECTION("double, 3 heads, no qkv bias") { check_identity<double, 6, 2, 8, 3, false, 2, 8>(3); }
  SECTION("double, 3 heads, qkv bias") { check_identity<double, 3, 5, 10, 3, true, 2, 4>(4); }
  SECTION("float, 5 heads of width 1, qkv bias") {
    check_identity<float, 7, 1, 6, 5, true, 1, 6>(5);
  }
  SECTION("float, the book's shape (2 heads x 2)") {
    check_identity<float, 3, 2, 6, 2, false, 2, 6>(6);
  }
}

TEST_CASE("compile-time head layouts and views", "[weight_split][layout]") {
  using m = mha::multi_head_attention<float, 5, 12, 8, 3, true>;
  static_assert(m::head_dim == 4);
  static_assert(m::head_offset<0> == 0 && m::head_offset<1> == 4 && m::head_offset<2> == 8);
  using w = mha::multi_head_attention_wrapper<double, 5, 3, 8, 3>;
  static_assert(w::output_width == 9);
  static_assert(w::head_offset<0> == 0 && w::head_offset<1> == 3 && w::head_offset<2> == 6);
  using gpt2 = mha::multi_head_attention<float, 768, 768, 1024, 12>;
  static_assert(gpt2::head_offset<11> == 704);

  // Views carry only a pointer.
  using hv = decltype(mha::head_view<1, 3>(std::declval<mha::tensor<float, 2, 4, 12>&>()));
  static_assert(sizeof(hv) == sizeof(float*));
  static_assert(sizeof(m::head_weights_type<2>::query) == sizeof(const float*));
  static_assert(sizeof(m::head_weights_type<2>) == 3 * sizeof(const float*));
  static_assert(sizeof(mha::block_view<double, mha::head_layout<0, 1, 1, 1, 1>>) == sizeof(double*));

  // head_layout maps (b, r, c) to column block H of a [B][N][W] tensor.
  using L = mha::head_layout<2, 3, 2, 4, 12>;
  static_assert(L::cols == 4 && L::rows == 4 && L::batch == 2);
  static_assert(L::offset == 8 && L::row_stride == 12 && L::batch_stride == 48);
  static_assert(L::map(1, 2, 3) == 8 + 48 + 24 + 3);
  static_assert(L::required_span_size == 96);

  mha::tensor<float, 2, 4, 12> t{};
  for (std::size_t i = 0; i < t.size; ++i) t.data()[i] = static_cast<float>(i);
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t r = 0; r < 4; ++r) {
      const auto v1 = mha::head_view<1, 3>(t);
      REQUIRE(v1.row(b, r) == &t(b, r, 4));
      for (std::size_t c = 0; c < 4; ++c) REQUIRE(&v1(b, r, c) == &t(b, r, 4 + c));
    }
  const auto& ct = t;
  const auto cv = mha::head_view<2, 3>(ct);
  static_assert(std::is_same_v<decltype(cv)::value_type, float>);
  REQUIRE(&cv(1, 3, 3) == &t(1, 3, 11));

  // weight_split_layout: rows [H*head_dim, (H+1)*head_dim) of [Out][In].
  using S = mha::weight_split_layout<1, 3, 12, 5>;
  static_assert(S::rows == 4 && S::cols == 5 && S::offset == 20 && S::row_stride == 5);
  m model{};
  REQUIRE(&model.head_weights<1>().query(0, 0, 0) == &model.w_query.weight(4, 0));
  REQUIRE(&model.head_weights<2>().value(0, 3, 4) == &model.w_value.weight(11, 4));
}
