// test_scores.cpp -- the score options of issue 41 against PyTorch: logit
// soft-capping (mha::attention_scores{.softcap = c}), ALiBi ({.alibi = true})
// and both together, on the causal multi_head_attention and
// grouped_query_attention (with mha::no_rope and with mha::rope<10000>), float
// and double.
//
//  * The fixtures (test/data/scores/*.json, made by tools/make_score_fixtures.py:
//    an explicit PyTorch forward with Hugging Face Gemma 2's soft-cap lines and
//    BLOOM's build_alibi_tensor slopes; schema and cases in
//    test/data/scores/README.md) are read with test/variant_fixture.hpp; the
//    parameters and inputs are regenerated from the splitmix64 streams
//    (test/kv_fixture.hpp), W_query's weight and bias multiplied by the file's
//    query_weight_scale (a power of two).
//  * Each fixed-size module is compared with PyTorch (float 2e-6, double 1e-12
//    relative to max(1, |expected|), as test_variants.cpp); its mha::dynamic
//    twin, its fused twin (mha::fuse_qkv of a multi_head_attention) and its
//    run-time token-count forward forward(x, n, out, ws) must give the same
//    bits.
//  * The KV-cache forward of the same tokens, token by token and in chunks
//    (one of more than 8 tokens, the blocked kernels, where the case has that
//    many), is compared with the same PyTorch rows to the same tolerance; the
//    dynamic cached forward and the fused twin's give the fixed one's bits.
//  * Direct checks: the modules' `scores`, BLOOM's slopes of the files against
//    the library's, soft-capping bounds every logit (the attention weights of
//    a row stay finite and within a factor e^(2c) of each other, float and
//    double, with huge inputs), attention_scores{} is the
//    attention_mask::causal module, bit for bit, and logits far above the cap
//    (50 and 25 times it, where tanh is 1 in float) get equal weights.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include <mha/mha.hpp>

#include "program_path.hpp"
#include "test_support.hpp"
#include "variant_fixture.hpp"

// (a named namespace: the group is one translation unit, test/CMakeLists.txt)
namespace scores_test {

using mha::attention_scores;

const std::filesystem::path scores_dir =
    std::filesystem::path(mha_test::program_relative(MHA_TEST_DATA_DIR)) / "scores";

template <class T>
constexpr double score_rtol = std::is_same_v<T, float> ? 2e-6 : 1e-12;

/// The keys of a score fixture beyond the variant schema.
struct score_keys {
  unsigned softcap = 0;
  bool alibi = false;
  std::vector<double> alibi_slopes;  ///< (empty without alibi)
  double query_weight_scale = 1;
};

score_keys read_score_keys(const std::filesystem::path& file) {
  std::ifstream in(file);
  REQUIRE(in);
  nlohmann::json j;
  in >> j;
  score_keys k;
  k.softcap = j.at("softcap").get<unsigned>();
  k.alibi = j.at("alibi").get<bool>();
  if (!j.at("alibi_slopes").is_null()) k.alibi_slopes = j.at("alibi_slopes").get<std::vector<double>>();
  REQUIRE(k.alibi_slopes.empty() != k.alibi);
  k.query_weight_scale = j.at("query_weight_scale").get<double>();
  return k;
}

/// A fixture with W_query's weight and bias scaled as the generator did.
template <class T>
struct score_fixture {
  variant_fixture::fixture<T> fx;
  score_keys keys;
};

template <class T>
score_fixture<T> load_fixture(const char* file) {
  score_fixture<T> s{variant_fixture::load<T>(scores_dir / file), read_score_keys(scores_dir / file)};
  const T scale = static_cast<T>(s.keys.query_weight_scale);
  REQUIRE(static_cast<double>(scale) == s.keys.query_weight_scale);
  for (const char* name : {"W_query.weight", "W_query.bias"}) {
    const auto it = s.fx.parameters.find(name);
    if (it != s.fx.parameters.end())
      for (T& v : it->second.data) v *= scale;  // (a power of two: exact)
  }
  REQUIRE(s.fx.causal);
  return s;
}

template <class T>
T* elements_of(mha::dynamic::tensor<T>& t) {
  return t.data();
}
template <class T, std::size_t... E>
T* elements_of(mha::tensor<T, E...>& t) {
  return t.data();
}

/// Every parameter of `model` (fixed or dynamic) from the fixture, by the
/// library's (book) names.
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

template <class T>
void check_close(const T* actual, const variant_fixture::fixture<T>& fx, const char* what) {
  const auto c = mha_test::compare(actual, fx.output.data.data(), fx.output.size(), score_rtol<T>);
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
std::vector<T> dynamic_cached_stream(const D& dyn, const T* x, std::size_t B, std::size_t N, std::size_t DIn,
                                     std::size_t W, const std::vector<std::size_t>& chunks) {
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
/// and chunks (for N > 8: 3, then 12 (the blocked kernels), then 1, then the
/// rest; otherwise 2 then the rest, a multi-row decode step).
std::vector<std::vector<std::size_t>> schedules(std::size_t n) {
  std::vector<std::vector<std::size_t>> s{std::vector<std::size_t>(n, 1)};
  if (n > 16)
    s.push_back({3, 12, 1, n - 16});
  else if (n > 2)
    s.push_back({2, n - 2});
  return s;
}

/// A fixed-size module M on fixture `file` ([B][N][DIn] input) and its
/// dynamic twin `dyn`: every check of the top of this file.
template <class M, class D, std::size_t B, std::size_t N>
void check_module(const char* file, D dyn) {
  using T = typename M::value_type;
  constexpr std::size_t C = M::context_length, DIn = M::d_in, W = M::output_width;
  const auto [fx, keys] = load_fixture<T>(file);
  INFO(fx.name);
  REQUIRE(M::is_causal);
  REQUIRE(M::scores.softcap == keys.softcap);
  REQUIRE(M::scores.alibi == keys.alibi);
  REQUIRE(D::scores == M::scores);
  REQUIRE(fx.batch == B);
  REQUIRE(fx.num_queries == N);
  REQUIRE(fx.num_heads == M::num_heads);
  // BLOOM's slopes (the file's, in T) are the library's
  for (std::size_t h = 0; h < keys.alibi_slopes.size(); ++h)
    CHECK(static_cast<double>(mha::detail::alibi_slope<T>(M::num_heads, h)) == keys.alibi_slopes[h]);

  auto m = std::make_unique<M>();
  load(*m, fx);
  auto x = std::make_unique<mha::tensor<T, B, N, DIn>>();
  REQUIRE(fx.query().size() == x->size);
  std::copy(fx.query().data.begin(), fx.query().data.end(), x->data());
  const auto out = std::make_unique<mha::tensor<T, B, N, W>>(m->forward(*x));
  REQUIRE(fx.output.size() == out->size);
  check_close(out->data(), fx, "forward(x)");

  // the dynamic twin
  mha::copy_parameters(*m, dyn);
  mha::dynamic::tensor<T> xd({B, N, DIn});
  std::copy(x->data(), x->data() + x->size, xd.data());
  CHECK(mha_test::same_bits(*out, dyn.forward(xd)));

  // the fused twin
  if constexpr (requires { mha::fuse_qkv(*m); }) {
    const auto f = std::make_unique<decltype(mha::fuse_qkv(*m))>(mha::fuse_qkv(*m));
    STATIC_REQUIRE(std::remove_cvref_t<decltype(*f)>::scores == M::scores);
    CHECK(mha_test::same_bits(*out, f->forward(*x)));
    const auto steps = schedules(N);
    CHECK(mha_test::same_bits(cached_stream<M, B, N>(*m, x->data(), steps.back()).data(),
                              cached_stream<std::remove_cvref_t<decltype(*f)>, B, N>(*f, x->data(), steps.back()).data(),
                              B * N * W));
  }

  // the run-time token count: the first N rows of a [B][C] buffer
  {
    auto ws = std::make_unique<typename M::template workspace<B, C>>();
    auto xl = std::make_unique<mha::tensor<T, B, C, DIn>>();
    for (std::size_t b = 0; b < B; ++b)
      std::copy(x->data() + b * N * DIn, x->data() + (b + 1) * N * DIn, xl->data() + b * C * DIn);
    auto outl = std::make_unique<mha::tensor<T, B, C, W>>();
    REQUIRE(m->forward(*xl, N, *outl, *ws) == mha::status::ok);
    bool same = true;
    for (std::size_t b = 0; b < B; ++b)
      same = same && mha_test::same_bits(out->data() + b * N * W, outl->data() + b * C * W, N * W);
    CHECK(same);
  }

  // the KV cache: token by token and in chunks, against PyTorch; dynamic = fixed
  for (const auto& steps : schedules(N)) {
    INFO("cached, " << steps.size() << " steps, first " << steps.front());
    const auto rows = cached_stream<M, B, N>(*m, x->data(), steps);
    check_close(rows.data(), fx, "cached");
    const auto drows = dynamic_cached_stream(dyn, x->data(), B, N, DIn, W, steps);
    CHECK(mha_test::same_bits(rows.data(), drows.data(), rows.size()));
  }
}

/// Soft-capping with cap c bounds every logit to (-c, c), so the weights of
/// the keys of one row are within a factor e^(2c) of each other: checked on
/// the weights (forward_with_weights) of a module with parameters in
/// [-wbound, wbound] and inputs in [-xbound, xbound] (the dynamic twin's
/// weights are the same bits); the module without the cap exceeds the bound
/// somewhere on the same inputs (the cap is what keeps it).
template <class T, std::size_t B, unsigned Cap>
void check_softcap_bound(std::mt19937& rng, double wbound, double xbound) {
  constexpr std::size_t H = 2, N = 6;
  using M = mha::multi_head_attention<T, 8, 8, N, H, true, attention_scores{.softcap = Cap}>;
  using P = mha::multi_head_attention<T, 8, 8, N, H, true>;
  INFO((std::is_same_v<T, float> ? "float" : "double") << ", cap " << Cap);
  auto m = std::make_unique<M>();
  mha::for_each_parameter(*m, [&](auto, auto& t) { mha_test::fill_uniform(t, rng, wbound); });
  auto p = std::make_unique<P>();
  mha::copy_parameters(*m, *p);
  mha::tensor<T, B, N, 8> x{};
  mha_test::fill_uniform(x, rng, xbound);
  mha::tensor<T, B, N, 8> out{}, pout{};
  mha::tensor<T, B, H, N, N> w{}, wp{};
  auto ws = std::make_unique<typename M::template workspace<B, N>>();
  m->forward_with_weights(x, out, w, *ws);
  CHECK(mha_test::all_finite(out.data(), out.size));
  CHECK(mha_test::all_finite(w.data(), w.size));
  auto wsp = std::make_unique<typename P::template workspace<B, N>>();
  p->forward_with_weights(x, pout, wp, *wsp);
  const double bound = std::exp(2.0 * Cap) * (1 + 1e-5);
  bool uncapped_exceeds = false;
  for (std::size_t r = 0; r < B * H; ++r)
    for (std::size_t i = 0; i < N; ++i) {
      const T* row = w.data() + (r * N + i) * N;
      const T* prow = wp.data() + (r * N + i) * N;
      const auto [lo, hi] = std::minmax_element(row, row + i + 1);
      INFO("sequence and head " << r << ", row " << i);
      CHECK(*lo > T(0));
      CHECK(static_cast<double>(*hi) <= bound * static_cast<double>(*lo));
      CHECK(std::all_of(row + i + 1, row + N, [](T v) { return v == T(0); }));
      const auto [plo, phi] = std::minmax_element(prow, prow + i + 1);
      if (!(static_cast<double>(*phi) <= bound * static_cast<double>(*plo))) uncapped_exceeds = true;
    }
  CHECK(uncapped_exceeds);
  mha::dynamic::multi_head_attention<T, attention_scores{.softcap = Cap}> d(8, 8, N, H, true);
  mha::copy_parameters(*m, d);
  mha::dynamic::tensor<T> xd({B, N, 8}), od({B, N, 8}), wd({B, H, N, N});
  std::copy(x.data(), x.data() + x.size, xd.data());
  mha::dynamic::workspace<T> dws;
  d.forward_with_weights(xd, od, wd, dws);
  CHECK(mha_test::same_bits(w, wd));
  CHECK(mha_test::same_bits(out, od));
}

template <class T, attention_scores S>
using mha_h3 = mha::multi_head_attention<T, 12, 12, 8, 3, true, S>;

constexpr attention_scores cap2{.softcap = 2};
constexpr attention_scores cap3_alibi{.softcap = 3, .alibi = true};
constexpr attention_scores alibi{.alibi = true};

}  // namespace scores_test

TEST_CASE("soft-capping equals Gemma 2's logit soft-cap in PyTorch", "[scores][softcap]") {
  using mha::dynamic::rope_config;
  namespace dyn = mha::dynamic;
  SECTION("multi_head_attention") {
    scores_test::check_module<scores_test::mha_h3<float, scores_test::cap2>, dyn::multi_head_attention<float, scores_test::cap2>, 2, 6>(
        "softcap_mha_f32_h3_n6.json", {12, 12, 8, 3, true});
    scores_test::check_module<scores_test::mha_h3<double, scores_test::cap2>, dyn::multi_head_attention<double, scores_test::cap2>, 2, 6>(
        "softcap_mha_f64_h3_n6.json", {12, 12, 8, 3, true});
    scores_test::check_module<mha::multi_head_attention<float, 32, 32, 48, 4, true, scores_test::cap2>,
                 dyn::multi_head_attention<float, scores_test::cap2>, 1, 40>("softcap_mha_f32_h4_n40.json",
                                                                {32, 32, 48, 4, true});
  }
  SECTION("grouped_query_attention") {
    scores_test::check_module<mha::grouped_query_attention<float, 8, 16, 8, 4, 2, false, mha::rope<10000>, scores_test::cap2>,
                 dyn::grouped_query_attention<float, scores_test::cap2>, 2, 7>(
        "softcap_gqa_f32_rope_h4_kv2_n7.json", {8, 16, 8, 4, 2, false, rope_config{10000}});
    scores_test::check_module<mha::grouped_query_attention<double, 8, 16, 8, 4, 2, true, mha::no_rope, scores_test::cap2>,
                 dyn::grouped_query_attention<double, scores_test::cap2>, 2, 5>(
        "softcap_gqa_f64_norope_h4_kv2_n5.json", {8, 16, 8, 4, 2, true});
  }
}

TEST_CASE("ALiBi equals the bias with BLOOM's slopes in PyTorch", "[scores][alibi]") {
  using mha::dynamic::rope_config;
  namespace dyn = mha::dynamic;
  SECTION("multi_head_attention") {
    scores_test::check_module<scores_test::mha_h3<float, scores_test::alibi>, dyn::multi_head_attention<float, scores_test::alibi>, 2, 6>(
        "alibi_mha_f32_h3_n6.json", {12, 12, 8, 3, true});
    scores_test::check_module<mha::multi_head_attention<double, 12, 12, 8, 6, false, scores_test::alibi>,
                 dyn::multi_head_attention<double, scores_test::alibi>, 2, 7>("alibi_mha_f64_h6_n7.json",
                                                                 {12, 12, 8, 6, false});
    scores_test::check_module<mha::multi_head_attention<double, 32, 48, 48, 6, true, scores_test::alibi>,
                 dyn::multi_head_attention<double, scores_test::alibi>, 1, 40>("alibi_mha_f64_h6_n40.json",
                                                                  {32, 48, 48, 6, true});
  }
  SECTION("grouped_query_attention") {
    scores_test::check_module<mha::grouped_query_attention<float, 12, 24, 8, 6, 3, true, mha::no_rope, scores_test::alibi>,
                 dyn::grouped_query_attention<float, scores_test::alibi>, 2, 7>(
        "alibi_gqa_f32_norope_h6_kv3_n7.json", {12, 24, 8, 6, 3, true});
    scores_test::check_module<mha::grouped_query_attention<double, 8, 16, 8, 4, 2, false, mha::rope<10000>, scores_test::alibi>,
                 dyn::grouped_query_attention<double, scores_test::alibi>, 2, 6>(
        "alibi_gqa_f64_rope_h4_kv2_n6.json", {8, 16, 8, 4, 2, false, rope_config{10000}});
    scores_test::check_module<mha::grouped_query_attention<float, 16, 32, 8, 8, 2, false, mha::rope<10000>, scores_test::alibi>,
                 dyn::grouped_query_attention<float, scores_test::alibi>, 1, 8>(
        "alibi_gqa_f32_rope_h8_kv2_n8.json", {16, 32, 8, 8, 2, false, rope_config{10000}});
  }
}

TEST_CASE("soft-capping then ALiBi equals PyTorch", "[scores][softcap][alibi]") {
  using mha::dynamic::rope_config;
  namespace dyn = mha::dynamic;
  constexpr auto both = scores_test::cap3_alibi;
  SECTION("multi_head_attention") {
    scores_test::check_module<mha::multi_head_attention<float, 12, 12, 8, 6, true, both>,
                 dyn::multi_head_attention<float, both>, 2, 7>("both_mha_f32_h6_n7.json",
                                                               {12, 12, 8, 6, true});
    scores_test::check_module<scores_test::mha_h3<double, both>, dyn::multi_head_attention<double, both>, 2, 6>(
        "both_mha_f64_h3_n6.json", {12, 12, 8, 3, true});
    scores_test::check_module<mha::multi_head_attention<float, 32, 24, 48, 3, true, both>,
                 dyn::multi_head_attention<float, both>, 1, 40>("both_mha_f32_h3_n40.json",
                                                                {32, 24, 48, 3, true});
  }
  SECTION("grouped_query_attention") {
    scores_test::check_module<mha::grouped_query_attention<float, 12, 24, 8, 6, 3, true, mha::rope<10000>, both>,
                 dyn::grouped_query_attention<float, both>, 2, 7>(
        "both_gqa_f32_rope_h6_kv3_n7.json", {12, 24, 8, 6, 3, true, rope_config{10000}});
    scores_test::check_module<mha::grouped_query_attention<double, 8, 16, 8, 4, 1, false, mha::no_rope, both>,
                 dyn::grouped_query_attention<double, both>, 2, 5>(
        "both_gqa_f64_norope_h4_kv1_n5.json", {8, 16, 8, 4, 1, false});
    scores_test::check_module<mha::grouped_query_attention<double, 8, 16, 8, 4, 2, true, mha::rope<10000>, both>,
                 dyn::grouped_query_attention<double, both>, 1, 7>(
        "both_gqa_f64_rope_h4_kv2_n7.json", {8, 16, 8, 4, 2, true, rope_config{10000}});
  }
}

TEST_CASE("every score fixture is checked", "[scores]") {
  const auto files = variant_fixture::fixture_files(scores_test::scores_dir);
  CHECK(files.size() == 17);  // (the cases of the three test cases above)
}

TEST_CASE("score options: scores, soft-cap bounds, default options", "[scores]") {
  std::mt19937 rng(4141);
  SECTION("the modules' scores") {
    using S = mha::multi_head_attention<float, 8, 8, 4, 2, true, mha::attention_scores{.softcap = 50}>;
    STATIC_REQUIRE(S::scores.softcap == 50);
    STATIC_REQUIRE(!S::scores.alibi);
    STATIC_REQUIRE(S::is_causal);
    using A = mha::grouped_query_attention<double, 8, 8, 4, 2, 1, false, mha::rope<10000>,
                                           mha::attention_scores{.alibi = true}>;
    STATIC_REQUIRE(A::scores.alibi);
    STATIC_REQUIRE(A::scores.softcap == 0);
    using F = mha::fused_multi_head_attention<float, 8, 8, 4, 2, true,
                                              mha::attention_scores{.softcap = 30, .alibi = true}>;
    STATIC_REQUIRE(F::scores.softcap == 30);
    STATIC_REQUIRE(F::scores.alibi);
    STATIC_REQUIRE(mha::dynamic::multi_head_attention<float, mha::attention_scores{.softcap = 50}>::scores.softcap == 50);
    STATIC_REQUIRE(mha::dynamic::grouped_query_attention<float, mha::attention_scores{.alibi = true}>::scores.alibi);
  }
  SECTION("soft-capping bounds every logit: weights within e^(2c) in a row, float and double") {
    // float: logits up to about 40, then huge inputs; double: huge inputs,
    // logits around 1e11
    scores_test::check_softcap_bound<float, 1, 2>(rng, 1.0, 2.0);
    scores_test::check_softcap_bound<float, 2, 2>(rng, 30.0, 1000.0);
    scores_test::check_softcap_bound<double, 2, 2>(rng, 30.0, 1000.0);
    scores_test::check_softcap_bound<double, 3, 1>(rng, 30.0, 1000.0);
  }
  SECTION("attention_scores{} is attention_mask::causal, bit for bit") {
    using C = mha::multi_head_attention<float, 16, 16, 12, 4, true, mha::attention_mask::causal>;
    using S = mha::multi_head_attention<float, 16, 16, 12, 4, true, mha::attention_scores{}>;
    using Z = mha::multi_head_attention<float, 16, 16, 12, 4, true, mha::attention_scores{.softcap = 0, .alibi = false}>;
    STATIC_REQUIRE(C::scores == S::scores);
    STATIC_REQUIRE(std::is_same_v<S, Z>);
    C c{};
    mha::for_each_parameter(c, [&](auto, auto& t) { mha_test::fill_uniform(t, rng, 0.5); });
    S s{};
    mha::copy_parameters(c, s);
    mha::tensor<float, 2, 11, 16> x{};
    mha_test::fill_uniform(x, rng, 1.0);
    CHECK(mha_test::same_bits(c.forward(x), s.forward(x)));
    using CD = mha::grouped_query_attention<double, 16, 16, 12, 4, 2, true, mha::rope<10000>,
                                            mha::attention_mask::causal>;
    using SD = mha::grouped_query_attention<double, 16, 16, 12, 4, 2, true, mha::rope<10000>,
                                            mha::attention_scores{}>;
    CD cd{};
    mha::for_each_parameter(cd, [&](auto, auto& t) { mha_test::fill_uniform(t, rng, 0.5); });
    SD sd{};
    mha::copy_parameters(cd, sd);
    mha::tensor<double, 2, 11, 16> xd{};
    mha_test::fill_uniform(xd, rng, 1.0);
    CHECK(mha_test::same_bits(cd.forward(xd), sd.forward(xd)));
  }
}

// Logits far above the cap: tanh(50) and tanh(25) are 1 in float, so both
// keys of token 1 get the logit 1 and equal weights (the float exponential of
// the softmax holds only for arguments below 88: tanh_of must not take it
// at 2 * 50).
TEST_CASE("float soft-capping of logits 25 and 50 times the cap", "[scores][softcap]") {
  using M = mha::multi_head_attention<float, 1, 1, 2, 1, false, mha::attention_scores{.softcap = 1}>;
  M m{};
  m.w_query.weight.data()[0] = 10.0f;  // q_i = 10 x_i
  m.w_key.weight.data()[0] = 10.0f;    // k_j = 10 x_j
  m.w_value.weight.data()[0] = 1.0f;   // v_j = x_j
  m.out_proj.weight.data()[0] = 1.0f;  // (out_proj.bias 0)
  mha::tensor<float, 1, 2, 1> x{};
  x.data()[0] = 1.0f;
  x.data()[1] = 0.5f;  // token 1: logits 50 and 25
  mha::tensor<float, 1, 2, 1> out{};
  mha::tensor<float, 1, 1, 2, 2> w{};
  M::workspace<1, 2> ws{};
  m.forward_with_weights(x, out, w, ws);
  CHECK(w.data()[2] == Approx(0.5).margin(1e-6));
  CHECK(w.data()[3] == Approx(0.5).margin(1e-6));
  CHECK(out.data()[1] == Approx(0.75).margin(1e-6));
}
