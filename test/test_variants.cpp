// test_variants.cpp -- the attention variants of issue 13 against PyTorch:
// non-causal self-attention (mha::attention_mask::none) of every module.
//
//  * torch.nn.MultiheadAttention(embed_dim, num_heads, bias, batch_first=True)
//    called without attn_mask (test/data/variants/self_*.json) is
//    multi_head_attention<T, E, E, N, H, bias, attention_mask::none>; the same
//    model with the causal attn_mask (causal_*.json) is the default causal
//    module, which checks the name mapping of the fixtures;
//  * the book's CausalAttention, MultiHeadAttentionWrapper, MultiHeadAttention
//    and the Llama GroupedQueryAttention (with and without RoPE) with the mask
//    off (book_*_noncausal.json) are the library's modules with
//    attention_mask::none.
//
// Each fixed-size module is compared with PyTorch (float 2e-6, double 1e-12
// relative to max(1, |expected|)), then its mha::dynamic twin, its fused twin
// and its run-time token-count forward must give the same bits. The fixtures
// and their generator: test/data/variants/README.md.
#include <catch2/catch.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <string_view>

#include <mha/mha.hpp>

#include "constexpr_cases.hpp"
#include "program_path.hpp"
#include "test_support.hpp"
#include "fixture_parameters.hpp"
#include "variant_fixture.hpp"

namespace {

using mha::attention_mask;

const std::filesystem::path variants_dir = std::filesystem::path(mha_test::program_relative(MHA_TEST_DATA_DIR)) / "variants";

template <class T>
constexpr double variant_rtol = std::is_same_v<T, float> ? 2e-6 : 1e-12;

using variant_fixture::elements_of;
using variant_fixture::load;

/// The fixture's input x as a fixed-size [B][N][D] tensor.
template <class T, std::size_t B, std::size_t N, std::size_t D>
mha::tensor<T, B, N, D> input_of(const variant_fixture::fixture<T>& fx) {
  mha::tensor<T, B, N, D> x{};
  REQUIRE(fx.query().size() == x.size);
  std::copy(fx.query().data.begin(), fx.query().data.end(), x.data());
  return x;
}

template <class T, std::size_t... E>
void check_against_pytorch(const mha::tensor<T, E...>& out, const variant_fixture::fixture<T>& fx) {
  REQUIRE(fx.output.size() == out.size);
  const auto c = mha_test::compare(out.data(), fx.output.data.data(), out.size, variant_rtol<T>);
  INFO(fx.name << ": " << c.describe());
  CHECK(c.violations == 0);
}

/// A fixed-size module M on fixture `file` ([B][N][DIn] input): PyTorch's
/// output; then the dynamic twin D (same parameters, copy_parameters) and the
/// run-time token-count forward give the same bits.
template <class M, class D, std::size_t B, std::size_t N>
void check_module(const char* file, D dyn) {
  using T = typename M::value_type;
  const auto fx = variant_fixture::load<T>(variants_dir / file);
  REQUIRE(fx.causal == M::is_causal);
  REQUIRE(fx.batch == B);
  REQUIRE(fx.num_queries == N);
  auto m = std::make_unique<M>();
  load(*m, fx);
  const auto x = input_of<T, B, N, M::d_in>(fx);
  const auto out = m->forward(x);
  check_against_pytorch(out, fx);

  mha::copy_parameters(*m, dyn);
  mha::dynamic::tensor<T> xd({B, N, M::d_in});
  std::copy(x.data(), x.data() + x.size, xd.data());
  CHECK(mha_test::same_bits(out, dyn.forward(xd)));

  // the run-time token count: the first n rows of a longer buffer
  auto ws = std::make_unique<typename M::template workspace<B, M::context_length>>();
  mha::tensor<T, B, M::context_length, M::d_in> xl{};
  for (std::size_t b = 0; b < B; ++b)
    std::copy(x.data() + b * N * M::d_in, x.data() + (b + 1) * N * M::d_in,
              xl.data() + b * M::context_length * M::d_in);
  mha::tensor<T, B, M::context_length, M::output_width> outl{};
  REQUIRE(m->forward(xl, N, outl, *ws) == mha::status::ok);
  bool same = true;
  for (std::size_t b = 0; b < B; ++b)
    same = same && mha_test::same_bits(out.data() + b * N * M::output_width,
                                       outl.data() + b * M::context_length * M::output_width,
                                       N * M::output_width);
  CHECK(same);
}

}  // namespace

TEST_CASE("non-causal multi_head_attention equals nn.MultiheadAttention without attn_mask",
          "[variants][non_causal]") {
  using mha::dynamic::multi_head_attention;
  check_module<mha::multi_head_attention<float, 8, 8, 5, 2, true, attention_mask::none>,
               multi_head_attention<float, attention_mask::none>, 2, 5>(
      "self_f32_e8_h2_n5_b2.json", {8, 8, 5, 2, true});
  check_module<mha::multi_head_attention<float, 12, 12, 8, 2, true, attention_mask::none>,
               multi_head_attention<float, attention_mask::none>, 1, 7>(
      "self_f32_e12_h2_n7_b1.json", {12, 12, 8, 2, true});
  check_module<mha::multi_head_attention<float, 9, 9, 1, 3, true, attention_mask::none>,
               multi_head_attention<float, attention_mask::none>, 3, 1>(
      "self_f32_e9_h3_n1_b3.json", {9, 9, 1, 3, true});
  check_module<mha::multi_head_attention<double, 12, 12, 7, 3, false, attention_mask::none>,
               multi_head_attention<double, attention_mask::none>, 1, 7>(
      "self_f64_e12_h3_n7_nobias.json", {12, 12, 7, 3, false});
}

TEST_CASE("the causal module equals nn.MultiheadAttention with the causal attn_mask",
          "[variants][non_causal]") {
  using mha::dynamic::multi_head_attention;
  check_module<mha::multi_head_attention<float, 8, 8, 5, 2, true>, multi_head_attention<float>, 2,
               5>("causal_f32_e8_h2_n5_b2.json", {8, 8, 5, 2, true});
  check_module<mha::multi_head_attention<double, 12, 12, 7, 3, false>,
               multi_head_attention<double>, 1, 7>("causal_f64_e12_h3_n7_nobias.json",
                                                   {12, 12, 7, 3, false});
}

TEST_CASE("non-causal book modules equal the book's classes without the mask",
          "[variants][non_causal]") {
  constexpr auto none = attention_mask::none;
  SECTION("CausalAttention") {
    check_module<mha::causal_attention<float, 6, 5, 8, true, none>,
                 mha::dynamic::causal_attention<float, none>, 2, 6>("book_ca_f32_noncausal.json",
                                                                    {6, 5, 8, true});
  }
  SECTION("MultiHeadAttentionWrapper") {
    check_module<mha::multi_head_attention_wrapper<float, 7, 3, 8, 3, true, none>,
                 mha::dynamic::multi_head_attention_wrapper<float, none>, 2, 5>(
        "book_wrap_f32_noncausal.json", {7, 3, 8, 3, true});
  }
  SECTION("MultiHeadAttention") {
    check_module<mha::multi_head_attention<float, 12, 9, 8, 3, true, none>,
                 mha::dynamic::multi_head_attention<float, none>, 2, 7>(
        "book_mha_f32_noncausal.json", {12, 9, 8, 3, true});
    check_module<mha::multi_head_attention<double, 8, 12, 6, 4, false, none>,
                 mha::dynamic::multi_head_attention<double, none>, 2, 6>(
        "book_mha_f64_noncausal.json", {8, 12, 6, 4, false});
  }
  SECTION("GroupedQueryAttention") {
    using mha::dynamic::rope_config;
    check_module<mha::grouped_query_attention<float, 8, 16, 8, 4, 2, true, mha::no_rope, none>,
                 mha::dynamic::grouped_query_attention<float, none>, 2, 5>(
        "book_gqa_f32_norope_noncausal.json", {8, 16, 8, 4, 2, true});
    check_module<
        mha::grouped_query_attention<float, 8, 16, 8, 4, 2, false, mha::rope<10000>, none>,
        mha::dynamic::grouped_query_attention<float, none>, 2, 6>(
        "book_gqa_f32_rope_noncausal.json", {8, 16, 8, 4, 2, false, rope_config{10000}});
    check_module<
        mha::grouped_query_attention<double, 8, 16, 8, 4, 2, false, mha::rope<10000>, none>,
        mha::dynamic::grouped_query_attention<double, none>, 2, 6>(
        "book_gqa_f64_rope_noncausal.json", {8, 16, 8, 4, 2, false, rope_config{10000}});
  }
}

TEST_CASE("non-causal: fused twin, blocked path, constant evaluation and training",
          "[variants][non_causal]") {
  constexpr auto none = attention_mask::none;
  std::mt19937 rng(1313);
  SECTION("fuse_qkv keeps the mask and the bits") {
    using M = mha::multi_head_attention<float, 8, 8, 5, 2, true, none>;
    const auto fx = variant_fixture::load<float>(variants_dir / "self_f32_e8_h2_n5_b2.json");
    M m{};
    load(m, fx);
    const auto f = mha::fuse_qkv(m);
    STATIC_REQUIRE(!decltype(f)::is_causal);
    const auto x = input_of<float, 2, 5, 8>(fx);
    CHECK(mha_test::same_bits(m.forward(x), f.forward(x)));
  }
  SECTION("attention_scores{.mask = none} is the module of attention_mask::none") {
    constexpr mha::attention_scores options{.mask = none};
    using M = mha::multi_head_attention<float, 8, 8, 5, 2, true, none>;
    using S = mha::multi_head_attention<float, 8, 8, 5, 2, true, options>;
    STATIC_REQUIRE(S::scores == options);
    STATIC_REQUIRE(M::scores == options);
    STATIC_REQUIRE(S::mask == none);
    STATIC_REQUIRE(!S::is_causal);
    STATIC_REQUIRE(mha::multi_head_attention<float, 8, 8, 5, 2>::scores ==
                   mha::attention_scores{});
    const auto fx = variant_fixture::load<float>(variants_dir / "self_f32_e8_h2_n5_b2.json");
    M m{};
    load(m, fx);
    S s{};
    mha::copy_parameters(m, s);
    const auto x = input_of<float, 2, 5, 8>(fx);
    CHECK(mha_test::same_bits(m.forward(x), s.forward(x)));
    mha::dynamic::multi_head_attention<float, options> d(8, 8, 5, 2, true);
    STATIC_REQUIRE(!decltype(d)::is_causal);
    mha::copy_parameters(m, d);
    mha::dynamic::tensor<float> xd({2, 5, 8});
    std::copy(x.data(), x.data() + x.size, xd.data());
    CHECK(mha_test::same_bits(m.forward(x), d.forward(xd)));
  }
  SECTION("a shape past the small-shape path: fixed equals dynamic, every key is read") {
    using M = mha::multi_head_attention<float, 32, 32, 40, 4, true, none>;
    auto m = std::make_unique<M>();
    mha::for_each_parameter(*m, [&](auto, auto& t) { mha_test::fill_uniform(t, rng, 0.3); });
    auto x = std::make_unique<mha::tensor<float, 2, 37, 32>>();
    mha_test::fill_uniform(*x, rng, 1.0);
    auto out = std::make_unique<mha::tensor<float, 2, 37, 32>>();
    auto ws = std::make_unique<M::workspace<2, 37>>();
    m->forward(*x, *out, *ws);
    mha::dynamic::multi_head_attention<float, none> d(32, 32, 40, 4, true);
    mha::copy_parameters(*m, d);
    mha::dynamic::tensor<float> xd({2, 37, 32});
    std::copy(x->data(), x->data() + x->size, xd.data());
    CHECK(mha_test::same_bits(*out, d.forward(xd)));
    // changing the last token changes the first token's output (it is a key of every query)
    auto x2 = std::make_unique<mha::tensor<float, 2, 37, 32>>(*x);
    x2->data()[36 * 32] += 0.5f;
    auto out2 = std::make_unique<mha::tensor<float, 2, 37, 32>>();
    m->forward(*x2, *out2, *ws);
    CHECK(!mha_test::same_bits(out->data(), out2->data(), 32));
    // ... and the causal module's first row does not change
    using C = mha::multi_head_attention<float, 32, 32, 40, 4, true>;
    auto c = std::make_unique<C>();
    mha::copy_parameters(*m, *c);
    auto wc = std::make_unique<C::workspace<2, 37>>();
    c->forward(*x, *out, *wc);
    c->forward(*x2, *out2, *wc);
    CHECK(mha_test::same_bits(out->data(), out2->data(), 36 * 32));
  }
  SECTION("constant evaluation gives the run-time bits") {
    using M = mha::causal_attention<double, 3, 2, 4, false, none>;
    constexpr auto make = [] {
      M m{};
      for (std::size_t i = 0; i < 6; ++i) {
        m.w_query.weight.data()[i] = 0.125 * static_cast<double>(i) - 0.25;
        m.w_key.weight.data()[i] = 0.0625 * static_cast<double>(i * i % 5) - 0.125;
        m.w_value.weight.data()[i] = 0.5 - 0.1875 * static_cast<double>(i % 3);
      }
      return m;
    };
    constexpr auto input = [] {
      mha::tensor<double, 4, 3> x{};
      for (std::size_t i = 0; i < 12; ++i) x.data()[i] = 0.3 * static_cast<double>(i % 7) - 0.9;
      return x;
    };
    constexpr auto at_compile_time = make().forward(input());
    const M m = make();
    const auto x = input();
    const auto at_run_time = m.forward(x);
    CHECK(mha_test::same_bits(at_compile_time, at_run_time));
    // the first query attends to the later keys: its row differs from the causal module's
    const mha::causal_attention<double, 3, 2, 4> causal = [&] {
      mha::causal_attention<double, 3, 2, 4> c{};
      mha::copy_parameters(m, c);
      return c;
    }();
    CHECK(!mha_test::same_bits(causal.forward(x).data(), at_run_time.data(), 2));
  }
  SECTION("training: the same dropout mask in fixed and dynamic") {
    using M = mha::multi_head_attention<double, 6, 6, 9, 3, false, none>;
    M m{};
    mha::for_each_parameter(m, [&](auto, auto& t) { mha_test::fill_uniform(t, rng, 0.4); });
    m.dropout = 0.25;
    mha::tensor<double, 2, 9, 6> x{};
    mha_test::fill_uniform(x, rng, 1.0);
    const auto out = m.forward_training(x, 77);
    mha::dynamic::multi_head_attention<double, none> d(6, 6, 9, 3, false);
    mha::copy_parameters(m, d);
    d.dropout = 0.25;
    mha::dynamic::tensor<double> xd({2, 9, 6});
    std::copy(x.data(), x.data() + x.size, xd.data());
    CHECK(mha_test::same_bits(out, d.forward_training(xd, 77)));
    CHECK(!mha_test::same_bits(out, m.forward(x)));
  }
}

// ---------------------------------------------------------------------------
// Padded batches (lengths, PyTorch's key_padding_mask) and attention weights
// (need_weights=True, per head and averaged) against nn.MultiheadAttention.

namespace {

template <class T>
void check_close(const T* actual, const variant_fixture::tensor<double>& expected, std::size_t n,
                 const char* what, const std::string& name) {
  REQUIRE(expected.size() == n);
  const auto c = mha_test::compare(actual, expected.data.data(), n, variant_rtol<T>);
  INFO(name << " " << what << ": " << c.describe());
  CHECK(c.violations == 0);
}

/// A fixed-size module M ([B][N][DIn] inputs) on a padding and/or weights
/// fixture: output, per-head weights and their average against PyTorch; the
/// dynamic twin gives the same bits; the output equals the plain forward's
/// (or, padded, each sequence's run-time-count forward) bit for bit.
template <class M, class D, std::size_t B, std::size_t N>
void check_extras(const char* file, D dyn) {
  using T = typename M::value_type;
  constexpr std::size_t H = M::num_heads;
  constexpr std::size_t W = M::output_width;
  const auto fx = variant_fixture::load<T>(variants_dir / file);
  REQUIRE(fx.causal == M::is_causal);
  REQUIRE(fx.need_weights);
  REQUIRE(fx.batch == B);
  REQUIRE(fx.num_queries == N);
  auto m = std::make_unique<M>();
  load(*m, fx);
  const auto x = input_of<T, B, N, M::d_in>(fx);
  std::array<std::size_t, B> lengths{};
  for (std::size_t b = 0; b < B; ++b) lengths[b] = fx.key_length(b);

  auto ws = std::make_unique<typename M::template workspace<B, N>>();
  mha::tensor<T, B, N, W> out{}, out_avg{}, out_plain{};
  mha::tensor<T, B, H, N, N> weights{};
  mha::tensor<T, B, N, N> average{};
  if (fx.lengths) {
    REQUIRE(m->forward_with_weights(x, lengths, out, weights, *ws) == mha::status::ok);
    REQUIRE(m->forward_with_weights(x, lengths, out_avg, average, *ws) == mha::status::ok);
    REQUIRE(m->forward(x, lengths, out_plain, *ws) == mha::status::ok);
    // each sequence is the run-time-count forward of its first lengths[b] tokens
    for (std::size_t b = 0; b < B; ++b) {
      if (lengths[b] == 0) continue;
      mha::tensor<T, 1, N, M::d_in> xb{};
      std::copy(x.data() + b * N * M::d_in, x.data() + (b + 1) * N * M::d_in, xb.data());
      mha::tensor<T, 1, N, W> ob{};
      auto wb = std::make_unique<typename M::template workspace<1, N>>();
      REQUIRE(m->forward(xb, lengths[b], ob, *wb) == mha::status::ok);
      INFO("sequence " << b);
      CHECK(mha_test::same_bits(ob.data(), out.data() + b * N * W, lengths[b] * W));
    }
  } else {
    m->forward_with_weights(x, out, weights, *ws);
    m->forward_with_weights(x, out_avg, average, *ws);
    m->forward(x, out_plain, *ws);
  }
  check_close(out.data(), fx.output, out.size, "output", fx.name);
  check_close(weights.data(), fx.weights, weights.size, "weights", fx.name);
  check_close(average.data(), fx.average_weights, average.size, "average weights", fx.name);
  CHECK(mha_test::same_bits(out, out_avg));
  CHECK(mha_test::same_bits(out, out_plain));  // asking for weights changes no bit

  mha::copy_parameters(*m, dyn);
  mha::dynamic::tensor<T> xd({B, N, M::d_in}), od({B, N, W}), wd({B, H, N, N}), ad({B, N, N});
  std::copy(x.data(), x.data() + x.size, xd.data());
  mha::dynamic::workspace<T> dws;
  if (fx.lengths) {
    dyn.forward_with_weights(xd, lengths, od, wd, dws);
    dyn.forward_with_weights(xd, lengths, od, ad, dws);
  } else {
    dyn.forward_with_weights(xd, od, wd, dws);
    dyn.forward_with_weights(xd, od, ad, dws);
  }
  CHECK(mha_test::same_bits(out, od));
  CHECK(mha_test::same_bits(weights, wd));
  CHECK(mha_test::same_bits(average, ad));
}

}  // namespace

TEST_CASE("attention weights equal nn.MultiheadAttention's need_weights=True",
          "[variants][weights]") {
  constexpr auto none = attention_mask::none;
  using mha::dynamic::multi_head_attention;
  check_extras<mha::multi_head_attention<float, 8, 8, 5, 2, true, none>,
               multi_head_attention<float, none>, 2, 5>("weights_f32_e8_h2_n5_b2.json",
                                                        {8, 8, 5, 2, true});
  check_extras<mha::multi_head_attention<float, 12, 12, 8, 2, true, none>,
               multi_head_attention<float, none>, 1, 7>("weights_f32_e12_h2_n7_b1.json",
                                                        {12, 12, 8, 2, true});
  check_extras<mha::multi_head_attention<float, 8, 8, 5, 2, true>, multi_head_attention<float>, 2,
               5>("weights_causal_f32_e8_h2_n5_b2.json", {8, 8, 5, 2, true});
  check_extras<mha::multi_head_attention<double, 12, 12, 7, 3, false>,
               multi_head_attention<double>, 1, 7>("weights_causal_f64_e12_h3_n7_nobias.json",
                                                   {12, 12, 7, 3, false});
}

TEST_CASE("padded batches equal nn.MultiheadAttention with key_padding_mask",
          "[variants][padding]") {
  constexpr auto none = attention_mask::none;
  using mha::dynamic::multi_head_attention;
  check_extras<mha::multi_head_attention<float, 8, 8, 5, 2, true, none>,
               multi_head_attention<float, none>, 4, 5>("pad_f32_e8_h2_n5_b4.json",
                                                        {8, 8, 5, 2, true});
  check_extras<mha::multi_head_attention<float, 8, 8, 5, 2, true>, multi_head_attention<float>, 4,
               5>("pad_causal_f32_e8_h2_n5_b4.json", {8, 8, 5, 2, true});
  check_extras<mha::multi_head_attention<double, 12, 12, 7, 3, false, none>,
               multi_head_attention<double, none>, 3, 5>("pad_f64_e12_h3_n5_b3_nobias.json",
                                                         {12, 12, 7, 3, false});
  check_extras<mha::multi_head_attention<double, 12, 12, 7, 3, false>,
               multi_head_attention<double>, 3, 5>("pad_causal_f64_e12_h3_n5_b3_nobias.json",
                                                    {12, 12, 7, 3, false});
}

TEST_CASE("padding and weights: errors, training, other modules, constant evaluation",
          "[variants][padding][weights]") {
  std::mt19937 rng(4242);
  using M = mha::multi_head_attention<double, 6, 6, 9, 3, false>;
  M m{};
  mha::for_each_parameter(m, [&](auto, auto& t) { mha_test::fill_uniform(t, rng, 0.4); });
  mha::tensor<double, 2, 9, 6> x{};
  mha_test::fill_uniform(x, rng, 1.0);
  M::workspace<2, 9> ws{};
  mha::tensor<double, 2, 9, 6> out{};
  mha::tensor<double, 2, 3, 9, 9> w{};
  mha::dynamic::multi_head_attention<double> d(6, 6, 9, 3, false);
  mha::copy_parameters(m, d);
  mha::dynamic::tensor<double> xd({2, 9, 6}), od({2, 9, 6}), wd({2, 3, 9, 9});
  std::copy(x.data(), x.data() + x.size, xd.data());
  mha::dynamic::workspace<double> dws;
  SECTION("a length above the token count: bad_token_count, nothing written; dynamic throws") {
    out.data()[0] = 42.0;
    const std::array<std::size_t, 2> bad{9, 10};
    CHECK(m.forward(x, bad, out, ws) == mha::status::bad_token_count);
    CHECK(m.forward_with_weights(x, bad, out, w, ws) == mha::status::bad_token_count);
    CHECK(out.data()[0] == 42.0);
    const std::vector<std::size_t> bad_d{9, 10}, short_d{9};
    CHECK_THROWS_WITH(d.forward(xd, bad_d, od, dws),
                      Catch::Contains("lengths[1] = 10 exceeds the input's 9 tokens"));
    CHECK_THROWS_WITH(d.forward(xd, short_d, od, dws), Catch::Contains("1 lengths for a batch of 2"));
    mha::dynamic::tensor<double> wrong({2, 9, 9, 3});
    CHECK_THROWS_WITH(d.forward_with_weights(xd, od, wrong, dws),
                      Catch::Contains("weights are [2][9][9][3], expected [2][3][9][9] (per head) "
                                      "or [2][9][9] (the head average)"));
  }
  SECTION("training: weights after dropout, the same in fixed and dynamic") {
    m.dropout = 0.3;
    d.dropout = 0.3;
    m.forward_training_with_weights(x, out, w, ws, 99);
    d.forward_training_with_weights(xd, od, wd, dws, 99);
    CHECK(mha_test::same_bits(out, od));
    CHECK(mha_test::same_bits(w, wd));
    // the output is what forward_training gives; dropped weights are 0, kept ones scaled
    mha::tensor<double, 2, 9, 6> plain{};
    m.forward_training(x, plain, ws, 99);
    CHECK(mha_test::same_bits(out, plain));
    std::size_t zeros_below_diagonal = 0;
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t h = 0; h < 3; ++h)
        for (std::size_t i = 0; i < 9; ++i)
          for (std::size_t j = 0; j <= i; ++j)
            zeros_below_diagonal += w.data()[((b * 3 + h) * 9 + i) * 9 + j] == 0.0;
    CHECK(zeros_below_diagonal > 0);
    // padded training: the same dropout stream per sequence as the unpadded call
    const std::array<std::size_t, 2> full{9, 9};
    mha::tensor<double, 2, 9, 6> padded{};
    REQUIRE(m.forward_training(x, full, padded, ws, 99) == mha::status::ok);
    CHECK(mha_test::same_bits(padded, plain));
    const std::vector<std::size_t> full_d{9, 9};
    d.forward_training(xd, full_d, od, dws, 99);
    CHECK(mha_test::same_bits(padded, od));
    // padded training with the weights: full lengths give the unpadded call's
    // output and weights; shorter ones the padded training output, with padded
    // rows and masked keys 0 (fixed and dynamic alike)
    mha::tensor<double, 2, 3, 9, 9> wp{};
    REQUIRE(m.forward_training_with_weights(x, full, padded, wp, ws, 99) == mha::status::ok);
    CHECK(mha_test::same_bits(padded, plain));
    CHECK(mha_test::same_bits(wp, w));
    const std::array<std::size_t, 2> short_lengths{4, 0};
    mha::tensor<double, 2, 9, 6> short_plain{};
    REQUIRE(m.forward_training(x, short_lengths, short_plain, ws, 99) == mha::status::ok);
    REQUIRE(m.forward_training_with_weights(x, short_lengths, padded, wp, ws, 99) ==
            mha::status::ok);
    CHECK(mha_test::same_bits(padded, short_plain));
    for (std::size_t h = 0; h < 3; ++h)
      for (std::size_t i = 0; i < 9; ++i)
        for (std::size_t j = 0; j < 9; ++j) {
          if (i >= 4 || j >= 4) CHECK(wp.data()[((0 * 3 + h) * 9 + i) * 9 + j] == 0.0);
          CHECK(wp.data()[((1 * 3 + h) * 9 + i) * 9 + j] == 0.0);
        }
    const std::vector<std::size_t> short_d{4, 0};
    d.forward_training_with_weights(xd, short_d, od, wd, dws, 99);
    CHECK(mha_test::same_bits(padded, od));
    CHECK(mha_test::same_bits(wp, wd));
    const std::array<std::size_t, 2> too_long{9, 10};
    CHECK(m.forward_training_with_weights(x, too_long, padded, wp, ws, 99) ==
          mha::status::bad_token_count);
  }
  SECTION("the wrapper and grouped-query attention: rows sum to 1, fixed equals dynamic") {
    using G = mha::grouped_query_attention<float, 8, 16, 12, 4, 2, false, mha::rope<10000>>;
    G g{};
    mha::for_each_parameter(g, [&](auto, auto& t) { mha_test::fill_uniform(t, rng, 0.4); });
    mha::tensor<float, 11, 8> xg{};  // rank 2: weights [H][N][N]
    mha_test::fill_uniform(xg, rng, 1.0);
    G::workspace<1, 11> gws{};
    mha::tensor<float, 11, 16> og{};
    mha::tensor<float, 4, 11, 11> wg{};
    g.forward_with_weights(xg, og, wg, gws);
    for (std::size_t h = 0; h < 4; ++h)
      for (std::size_t i = 0; i < 11; ++i) {
        double sum = 0;
        for (std::size_t j = 0; j < 11; ++j) {
          const float v = wg.data()[(h * 11 + i) * 11 + j];
          if (j > i) CHECK(v == 0.0f);
          sum += v;
        }
        CHECK(sum == Approx(1.0).epsilon(1e-6));
      }
    mha::dynamic::grouped_query_attention<float> gd(8, 16, 12, 4, 2, false,
                                                    mha::dynamic::rope_config{10000});
    mha::copy_parameters(g, gd);
    mha::dynamic::tensor<float> xgd({11, 8}), ogd({11, 16}), wgd({4, 11, 11});
    std::copy(xg.data(), xg.data() + xg.size, xgd.data());
    mha::dynamic::workspace<float> gdws;
    gd.forward_with_weights(xgd, ogd, wgd, gdws);
    CHECK(mha_test::same_bits(og, ogd));
    CHECK(mha_test::same_bits(wg, wgd));

    using Wr = mha::multi_head_attention_wrapper<double, 5, 2, 6, 2, true, attention_mask::none>;
    Wr wr{};
    mha::for_each_parameter(wr, [&](auto, auto& t) { mha_test::fill_uniform(t, rng, 0.4); });
    mha::tensor<double, 1, 6, 5> xw{};
    mha_test::fill_uniform(xw, rng, 1.0);
    Wr::workspace<1, 6> wws{};
    mha::tensor<double, 1, 6, 4> ow{};
    mha::tensor<double, 1, 6, 6> aw{};
    const std::array<std::size_t, 1> len{4};
    REQUIRE(wr.forward_with_weights(xw, len, ow, aw, wws) == mha::status::ok);
    for (std::size_t i = 0; i < 6; ++i) {
      double sum = 0;
      for (std::size_t j = 0; j < 6; ++j) {
        const double v = aw.data()[i * 6 + j];
        if (i >= 4 || j >= 4) CHECK(v == 0.0);  // padded query rows and keys
        sum += v;
      }
      CHECK(sum == Approx(i < 4 ? 1.0 : 0.0).epsilon(1e-12));
      if (i >= 4)
        for (std::size_t c = 0; c < 4; ++c) CHECK(ow.data()[i * 4 + c] == 0.0);
    }
  }
  SECTION("constant evaluation gives the run-time weights") {
    using C = mha::causal_attention<double, 3, 2, 4>;
    constexpr auto at_compile_time = mha_test::padded_weights_case(C{});
    const auto at_run_time = mha_test::padded_weights_case(C{});
    CHECK(mha_test::same_bits(at_compile_time, at_run_time));
    CHECK(at_run_time.data()[0] == 1.0);
  }
}

// ---------------------------------------------------------------------------
// Cross-attention (nn.MultiheadAttention(query, key, value), kdim / vdim).

namespace {

template <class T, std::size_t... E>
mha::tensor<T, E...> fixed_of(const variant_fixture::tensor<T>& t) {
  mha::tensor<T, E...> out{};
  REQUIRE(t.size() == out.size);
  std::copy(t.data.begin(), t.data.end(), out.data());
  return out;
}
template <class T>
mha::dynamic::tensor<T> dynamic_of(const variant_fixture::tensor<T>& t) {
  mha::dynamic::tensor<T> out(t.shape);
  std::copy(t.data.begin(), t.data.end(), out.data());
  return out;
}

/// multi_head_attention<T, E, E, C, H, bias, none, KDim, VDim> on a
/// cross-attention fixture: output (and, when stored, per-head and average
/// weights, with the fixture's key lengths) against PyTorch; the dynamic
/// twin gives the same bits.
template <class M, std::size_t B, std::size_t NQ, std::size_t NKV>
void check_cross(const char* file) {
  using T = typename M::value_type;
  constexpr std::size_t H = M::num_heads;
  constexpr std::size_t E = M::output_width;
  const auto fx = variant_fixture::load<T>(variants_dir / file);
  REQUIRE(fx.cross);
  REQUIRE(fx.batch == B);
  REQUIRE(fx.num_queries == NQ);
  REQUIRE(fx.num_keys == NKV);
  auto m = std::make_unique<M>();
  load(*m, fx);
  const auto q = fixed_of<T, B, NQ, M::d_in>(fx.query());
  const auto k = fixed_of<T, B, NKV, M::key_dim>(fx.key());
  const auto v = fixed_of<T, B, NKV, M::value_dim>(fx.value());
  std::array<std::size_t, B> lengths{};
  for (std::size_t b = 0; b < B; ++b) lengths[b] = fx.key_length(b);
  auto ws = std::make_unique<typename M::template cross_workspace<B, NQ, NKV>>();
  mha::tensor<T, B, NQ, E> out{}, out_avg{};
  mha::tensor<T, B, H, NQ, NKV> weights{};
  mha::tensor<T, B, NQ, NKV> average{};

  mha::dynamic::multi_head_attention<T, attention_mask::none> d(
      M::d_in, E, M::context_length, H, M::qkv_bias,
      mha::dynamic::kv_dims{M::key_dim, M::value_dim});
  mha::copy_parameters(*m, d);
  const auto qd = dynamic_of(fx.query()), kd = dynamic_of(fx.key()), vd = dynamic_of(fx.value());
  mha::dynamic::tensor<T> od({B, NQ, E}), wd({B, H, NQ, NKV}), ad({B, NQ, NKV});
  mha::dynamic::workspace<T> dws;

  if (fx.lengths) {
    REQUIRE(m->forward(q, k, v, lengths, out, *ws) == mha::status::ok);
    d.forward(qd, kd, vd, lengths, od, dws);
  } else {
    m->forward(q, k, v, out, *ws);
    d.forward(qd, kd, vd, od, dws);
    CHECK(mha_test::same_bits(out, d.forward(qd, kd, vd)));
  }
  check_close(out.data(), fx.output, out.size, "output", fx.name);
  CHECK(mha_test::same_bits(out, od));
  if (!fx.need_weights) return;
  if (fx.lengths) {
    REQUIRE(m->forward_with_weights(q, k, v, lengths, out, weights, *ws) == mha::status::ok);
    REQUIRE(m->forward_with_weights(q, k, v, lengths, out_avg, average, *ws) == mha::status::ok);
    d.forward_with_weights(qd, kd, vd, lengths, od, wd, dws);
    d.forward_with_weights(qd, kd, vd, lengths, od, ad, dws);
  } else {
    m->forward_with_weights(q, k, v, out, weights, *ws);
    m->forward_with_weights(q, k, v, out_avg, average, *ws);
    d.forward_with_weights(qd, kd, vd, od, wd, dws);
    d.forward_with_weights(qd, kd, vd, od, ad, dws);
  }
  check_close(weights.data(), fx.weights, weights.size, "weights", fx.name);
  check_close(average.data(), fx.average_weights, average.size, "average weights", fx.name);
  CHECK(mha_test::same_bits(out, out_avg));
  CHECK(mha_test::same_bits(out, od));
  CHECK(mha_test::same_bits(weights, wd));
  CHECK(mha_test::same_bits(average, ad));
}

template <class T, std::size_t E, std::size_t H, bool Bias, std::size_t K, std::size_t V>
using cross_mha = mha::multi_head_attention<T, E, E, 8, H, Bias, attention_mask::none, K, V>;

}  // namespace

TEST_CASE("cross-attention equals nn.MultiheadAttention(query, key, value)",
          "[variants][cross]") {
  check_cross<cross_mha<float, 8, 2, true, 5, 7>, 2, 3, 6>("cross_f32_e8_h2_k5_v7_bias.json");
  check_cross<cross_mha<float, 8, 2, false, 5, 7>, 2, 3, 6>("cross_f32_e8_h2_k5_v7_nobias.json");
  check_cross<cross_mha<float, 8, 2, true, 8, 8>, 2, 3, 6>("cross_f32_e8_h2_kv8_bias.json");
  check_cross<cross_mha<double, 8, 2, true, 5, 7>, 2, 3, 6>("cross_f64_e8_h2_k5_v7_bias.json");
  check_cross<cross_mha<double, 8, 2, false, 5, 7>, 2, 3, 6>("cross_f64_e8_h2_k5_v7_nobias.json");
  check_cross<cross_mha<float, 6, 3, true, 5, 7>, 2, 7, 2>("cross_f32_e6_h3_k5_v7_nq7_nkv2.json");
  check_cross<cross_mha<double, 8, 2, true, 5, 7>, 2, 3, 6>("cross_weights_f64_e8_h2_k5_v7_bias.json");
}

TEST_CASE("cross-attention with padded keys (key_padding_mask)", "[variants][cross][padding]") {
  check_cross<cross_mha<float, 8, 2, true, 5, 7>, 3, 3, 6>("cross_pad_f32_e8_h2_k5_v7_bias.json");
  check_cross<cross_mha<double, 8, 2, false, 5, 7>, 3, 3, 6>(
      "cross_pad_f64_e8_h2_k5_v7_nobias.json");
}

TEST_CASE("cross-attention: a key input equal to the query is self-attention; errors",
          "[variants][cross]") {
  std::mt19937 rng(77);
  using M = mha::multi_head_attention<float, 16, 16, 24, 4, true, attention_mask::none>;
  auto m = std::make_unique<M>();
  mha::for_each_parameter(*m, [&](auto, auto& t) { mha_test::fill_uniform(t, rng, 0.3); });
  mha::tensor<float, 2, 21, 16> x{};
  mha_test::fill_uniform(x, rng, 1.0);
  mha::tensor<float, 2, 21, 16> self{}, cross{};
  auto ws = std::make_unique<M::workspace<2, 21>>();
  m->forward(x, self, *ws);
  m->forward(x, x, x, cross, *ws);
  CHECK(mha_test::same_bits(self, cross));

  mha::dynamic::multi_head_attention<float, attention_mask::none> d(
      16, 16, 24, 4, true, mha::dynamic::kv_dims{3, 5});
  mha::dynamic::tensor<float> q({2, 4, 16}), k({2, 6, 3}), v({2, 6, 5}), bad_v({2, 5, 5}),
      out({2, 4, 16});
  mha::dynamic::workspace<float> dws;
  CHECK_NOTHROW(d.forward(q, k, v, out, dws));
  CHECK_THROWS_WITH(d.forward(q, k, bad_v, out, dws),
                    Catch::Contains("must have one rank and batch, and key and value one token "
                                    "count"));
  CHECK_THROWS_WITH(d.forward(q, v, k, out, dws),
                    Catch::Contains("key [2][6][5] has last extent 5, expected kdim = 3"));
  // a module made for kdim / vdim has no self-attention forward
  mha::dynamic::tensor<float> xs({2, 4, 16});
  CHECK_THROWS_WITH(d.forward(xs), Catch::Contains("self-attention projects keys and values from "
                                                  "x, but this module was made for kdim = 3"));
  const std::vector<std::size_t> lengths{4, 2};
  CHECK_THROWS_WITH(d.forward(xs, lengths, out, dws), Catch::Contains("made for kdim = 3"));
  CHECK_THROWS_WITH(mha::dynamic::multi_head_attention<float>(16, 16, 24, 4, true,
                                                              mha::dynamic::kv_dims{3, 5}),
                    Catch::Contains("need Mask = attention_mask::none"));
  CHECK_THROWS_AS(mha::dynamic::multi_head_attention<float>(4, 4, 4, 2, false,
                                                            mha::dynamic::kv_dims{0, 3}),
                  std::invalid_argument);
  const std::vector<std::size_t> too_long{6, 7};
  CHECK_THROWS_WITH(d.forward(q, k, v, too_long, out, dws),
                    Catch::Contains("key_lengths[1] = 7 exceeds the key's 6 tokens"));
  mha::dynamic::tensor<float> long_k({2, 30, 3}), long_v({2, 30, 5});
  CHECK_THROWS_WITH(d.forward(q, long_k, long_v, out, dws),
                    Catch::Contains("key [2][30][3] has 30 tokens, expected at most "
                                    "context_length = 24"));
}

TEST_CASE("cross-attention in training mode: padded keys and the weights after dropout",
          "[variants][cross][padding][weights]") {
  // Dropout draws from mha's own stream (not PyTorch's), so these check the
  // overloads against each other and against the inference weights: every
  // training weight is 0 (dropped) or the inference weight scaled by
  // 1/(1 - p); with p = 0 training equals inference bit for bit.
  std::mt19937 rng(1313);
  using M = cross_mha<double, 8, 2, false, 5, 7>;
  auto m = std::make_unique<M>();
  mha::for_each_parameter(*m, [&](auto, auto& t) { mha_test::fill_uniform(t, rng, 0.4); });
  mha::tensor<double, 3, 3, 8> q{};
  mha::tensor<double, 3, 6, 5> k{};
  mha::tensor<double, 3, 6, 7> v{};
  mha_test::fill_uniform(q, rng, 1.0);
  mha_test::fill_uniform(k, rng, 1.0);
  mha_test::fill_uniform(v, rng, 1.0);
  auto ws = std::make_unique<M::cross_workspace<3, 3, 6>>();
  mha::dynamic::multi_head_attention<double, attention_mask::none> d(
      8, 8, 8, 2, false, mha::dynamic::kv_dims{5, 7});
  mha::copy_parameters(*m, d);
  mha::dynamic::tensor<double> qd({3, 3, 8}), kd({3, 6, 5}), vd({3, 6, 7}), od({3, 3, 8}),
      wd({3, 2, 3, 6});
  std::copy(q.data(), q.data() + q.size, qd.data());
  std::copy(k.data(), k.data() + k.size, kd.data());
  std::copy(v.data(), v.data() + v.size, vd.data());
  mha::dynamic::workspace<double> dws;
  const std::array<std::size_t, 3> lengths{6, 2, 0};
  const std::vector<std::size_t> lengths_d{6, 2, 0};
  mha::tensor<double, 3, 3, 8> inference{}, trained{}, with_weights{};
  mha::tensor<double, 3, 2, 3, 6> w_inference{}, w{};

  SECTION("p = 0: training equals inference") {
    REQUIRE(m->forward_with_weights(q, k, v, lengths, inference, w_inference, *ws) ==
            mha::status::ok);
    REQUIRE(m->forward_training(q, k, v, lengths, trained, *ws, 5) == mha::status::ok);
    REQUIRE(m->forward_training_with_weights(q, k, v, lengths, with_weights, w, *ws, 5) ==
            mha::status::ok);
    CHECK(mha_test::same_bits(trained, inference));
    CHECK(mha_test::same_bits(with_weights, inference));
    CHECK(mha_test::same_bits(w, w_inference));
  }
  SECTION("p = 0.4: dropped weights 0, kept ones scaled; fixed equals dynamic") {
    m->dropout = 0.4;
    d.dropout = 0.4;
    REQUIRE(m->forward_with_weights(q, k, v, lengths, inference, w_inference, *ws) ==
            mha::status::ok);
    REQUIRE(m->forward_training(q, k, v, lengths, trained, *ws, 5) == mha::status::ok);
    REQUIRE(m->forward_training_with_weights(q, k, v, lengths, with_weights, w, *ws, 5) ==
            mha::status::ok);
    CHECK(mha_test::same_bits(with_weights, trained));
    CHECK_FALSE(mha_test::same_bits(trained, inference));
    std::size_t dropped = 0, kept = 0;
    for (std::size_t b = 0; b < 3; ++b)
      for (std::size_t h = 0; h < 2; ++h)
        for (std::size_t i = 0; i < 3; ++i)
          for (std::size_t j = 0; j < 6; ++j) {
            const std::size_t at = ((b * 2 + h) * 3 + i) * 6 + j;
            const double got = w.data()[at], ref = w_inference.data()[at] / (1.0 - 0.4);
            if (j >= lengths[b]) {
              CHECK(got == 0.0);  // a masked key
            } else if (got == 0.0) {
              ++dropped;
            } else {
              ++kept;
              CHECK(std::abs(got - ref) <= 1e-14 * ref);
            }
          }
    CHECK(dropped > 0);
    CHECK(kept > 0);
    // sequence 2 has no keys: a zero context, its rows are out_proj's bias (never NaN)
    for (std::size_t i = 0; i < 3 * 8; ++i)
      CHECK(trained.data()[2 * 3 * 8 + i] == m->out_proj.bias.data()[i % 8]);
    d.forward_training(qd, kd, vd, lengths_d, od, dws, 5);
    CHECK(mha_test::same_bits(trained, od));
    d.forward_training_with_weights(qd, kd, vd, lengths_d, od, wd, dws, 5);
    CHECK(mha_test::same_bits(with_weights, od));
    CHECK(mha_test::same_bits(w, wd));
    // full key lengths: the unpadded training calls, same stream
    const std::array<std::size_t, 3> full{6, 6, 6};
    mha::tensor<double, 3, 3, 8> unpadded{};
    m->forward_training_with_weights(q, k, v, unpadded, w_inference, *ws, 5);
    REQUIRE(m->forward_training_with_weights(q, k, v, full, with_weights, w, *ws, 5) ==
            mha::status::ok);
    CHECK(mha_test::same_bits(with_weights, unpadded));
    CHECK(mha_test::same_bits(w, w_inference));
    d.forward_training_with_weights(qd, kd, vd, od, wd, dws, 5);
    CHECK(mha_test::same_bits(unpadded, od));
    CHECK(mha_test::same_bits(w, wd));
  }
  SECTION("a key length above Nkv: bad_token_count, nothing written; dynamic throws") {
    const std::array<std::size_t, 3> bad{6, 7, 0};
    trained.data()[0] = 42.0;
    CHECK(m->forward_training(q, k, v, bad, trained, *ws, 5) == mha::status::bad_token_count);
    CHECK(m->forward_training_with_weights(q, k, v, bad, trained, w, *ws, 5) ==
          mha::status::bad_token_count);
    CHECK(trained.data()[0] == 42.0);
    const std::vector<std::size_t> bad_d{6, 7, 0};
    CHECK_THROWS_WITH(d.forward_training(qd, kd, vd, bad_d, od, dws, 5),
                      Catch::Contains("::forward_training: key_lengths[1] = 7 exceeds the "
                                      "key's 6 tokens"));
    CHECK_THROWS_WITH(d.forward_training_with_weights(qd, kd, vd, bad_d, od, wd, dws, 5),
                      Catch::Contains("::forward_training_with_weights: key_lengths[1] = 7 "
                                      "exceeds the key's 6 tokens"));
  }
}
