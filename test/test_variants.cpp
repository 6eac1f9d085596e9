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

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <string_view>

#include <mha/mha.hpp>

#include "test_support.hpp"
#include "variant_fixture.hpp"

namespace {

using mha::attention_mask;

const std::filesystem::path variants_dir = std::filesystem::path(MHA_TEST_DATA_DIR) / "variants";

template <class T>
constexpr double variant_rtol = std::is_same_v<T, float> ? 2e-6 : 1e-12;

template <class T>
T* elements_of(mha::dynamic::tensor<T>& t) {
  return t.data();
}
template <class T, std::size_t... E>
T* elements_of(mha::tensor<T, E...>& t) {
  return t.data();
}

/// Every parameter of `model` (fixed or dynamic) from the fixture, by the
/// library's (book) names; checks that each one exists with the same size.
template <class M, class T>
void load(M& model, const variant_fixture::fixture<T>& fx) {
  const auto lib = fx.library_parameters();
  std::size_t loaded = 0;
  mha::for_each_parameter(model, [&](std::string_view name, auto& tensor) {
    const auto it = lib.find(std::string(name));
    INFO("parameter " << name);
    REQUIRE(it != lib.end());
    REQUIRE(it->second.size() == tensor.size());
    std::copy(it->second.data.begin(), it->second.data.end(), elements_of(tensor));
    ++loaded;
  });
  CHECK(loaded == lib.size());
}

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
    check_module<mha::multi_head_attention<float, 10, 9, 8, 3, true, none>,
                 mha::dynamic::multi_head_attention<float, none>, 2, 7>(
        "book_mha_f32_noncausal.json", {10, 9, 8, 3, true});
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
