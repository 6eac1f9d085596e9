// test_scores.cpp -- the score options of issue 41 against PyTorch: logit
// soft-capping (mha::attention_scores{.softcap = c}), ALiBi ({.alibi = true}),
// both together, and the sliding window ({.sliding_window = W}: alone, with
// ALiBi, and with soft-capping as in Gemma 2's local layers), on the causal
// multi_head_attention and grouped_query_attention (with mha::no_rope and with
// mha::rope<10000>), float and double.
//
//  * The fixtures (test/data/scores/*.json, made by tools/make_score_fixtures.py:
//    an explicit PyTorch forward with Hugging Face Gemma 2's soft-cap lines,
//    BLOOM's build_alibi_tensor slopes and Hugging Face's sliding-window mask
//    (key k visible to query q iff q - W < k <= q, as for Mistral); schema and
//    cases in test/data/scores/README.md) are read with
//    test/variant_fixture.hpp; the parameters and inputs are regenerated from
//    the splitmix64 streams (test/kv_fixture.hpp), W_query's weight and bias
//    multiplied by the file's query_weight_scale (a power of two).
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
//  * Direct checks of the sliding window W: the modules' `scores`; the first
//    W rows of each sequence are the causal module's bits (the window hides no
//    key there) and later rows differ, and with W >= N every row is (fixed,
//    dynamic twin, KV cache token by token); the attention weights
//    (forward_with_weights) are exactly 0 for keys j <= i - W and j > i,
//    positive inside the window, each row sums to 1 within 1e-6 (float) or
//    1e-13 (double), the dynamic twin's the same bits; W = 1 puts weight
//    exactly 1 on the diagonal, so each output row is out_proj of the token's
//    own value row (checked against a direct computation in double), and the
//    query and key weights change no output bit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <mha/mha.hpp>

#include "program_path.hpp"
#include "test_support.hpp"
#include "score_checks.hpp"
#include "fixture_parameters.hpp"
#include "variant_fixture.hpp"

// (a named namespace: the group is one translation unit, test/CMakeLists.txt)
namespace scores_test {

using mha::attention_scores;

const std::filesystem::path scores_dir =
    std::filesystem::path(mha_test::program_relative(MHA_TEST_DATA_DIR)) / "scores";

using score_checks::cached_stream;
template <class T>
constexpr double score_rtol = score_checks::rtol<T>;

/// The keys of a score fixture beyond the variant schema.
struct score_keys {
  unsigned softcap = 0;
  bool alibi = false;
  std::vector<double> alibi_slopes;  ///< (empty without alibi)
  double query_weight_scale = 1;
  std::size_t sliding_window = 0;  ///< (absent from the files without a window: 0)
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
  if (j.contains("sliding_window")) {
    k.sliding_window = j.at("sliding_window").get<std::size_t>();
    REQUIRE(k.sliding_window >= 1);
  }
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

using variant_fixture::elements_of;
using variant_fixture::load;

/// A fixed-size module M on fixture `file` ([B][N][DIn] input) and its
/// dynamic twin `dyn`: every check of the top of this file.
template <class M, class D, std::size_t B, std::size_t N>
void check_module(const char* file, D dyn) {
  using T = typename M::value_type;
  constexpr std::size_t DIn = M::d_in;
  const auto [fx, keys] = load_fixture<T>(file);
  INFO(fx.name);
  REQUIRE(M::is_causal);
  REQUIRE(M::scores.softcap == keys.softcap);
  REQUIRE(M::scores.alibi == keys.alibi);
  REQUIRE(M::scores.sliding_window == keys.sliding_window);
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
  score_checks::check_paths<M, D, B, N>(*m, dyn, fx, *x);
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

// ---------------------------------------------------------------------------
// The sliding window.

template <std::size_t W>
constexpr attention_scores window{.sliding_window = W};

/// Windowed module M (W = M::scores.sliding_window) against P, the same module
/// with the causal mask alone, on random parameters and inputs ([B][N]): the
/// first min(W, N) rows of each sequence are the same bits, and when W < N
/// some later row differs; the same for the dynamic twins dm (windowed) and dp
/// (causal) and for a KV-cache stream one token at a time; the dynamic twin
/// gives the fixed module's bits.
template <class M, class P, std::size_t B, std::size_t N, class DM, class DP>
void check_window_rows(std::mt19937& rng, DM dm, DP dp) {
  using T = typename M::value_type;
  constexpr std::size_t W = M::scores.sliding_window, DIn = M::d_in, Out = M::output_width;
  constexpr std::size_t same_rows = W < N ? W : N;
  STATIC_REQUIRE(W > 0);
  STATIC_REQUIRE(P::scores == attention_scores{});
  INFO("window " << W << ", " << N << " tokens");
  auto m = std::make_unique<M>();
  mha::for_each_parameter(*m, [&](auto, auto& t) { mha_test::fill_uniform(t, rng, 0.5); });
  auto p = std::make_unique<P>();
  mha::copy_parameters(*m, *p);
  mha::copy_parameters(*m, dm);
  mha::copy_parameters(*m, dp);
  auto x = std::make_unique<mha::tensor<T, B, N, DIn>>();
  mha_test::fill_uniform(*x, rng, 1.0);
  const auto compare_rows = [&](const T* a, const T* b, const char* what) {
    bool same = true, later_differs = false;
    for (std::size_t s = 0; s < B; ++s) {
      same = same && mha_test::same_bits(a + s * N * Out, b + s * N * Out, same_rows * Out);
      later_differs = later_differs || !mha_test::same_bits(a + (s * N + same_rows) * Out,
                                                            b + (s * N + same_rows) * Out,
                                                            (N - same_rows) * Out);
    }
    INFO(what);
    CHECK(same);
    CHECK(later_differs == (W < N));
  };
  const auto out = std::make_unique<mha::tensor<T, B, N, Out>>(m->forward(*x));
  const auto pout = std::make_unique<mha::tensor<T, B, N, Out>>(p->forward(*x));
  compare_rows(out->data(), pout->data(), "forward(x)");
  mha::dynamic::tensor<T> xd({B, N, DIn});
  std::copy(x->data(), x->data() + x->size, xd.data());
  const auto od = dm.forward(xd);
  const auto pd = dp.forward(xd);
  compare_rows(od.data(), pd.data(), "dynamic");
  CHECK(mha_test::same_bits(*out, od));
  const std::vector<std::size_t> steps(N, 1);
  compare_rows(cached_stream<M, B, N>(*m, x->data(), steps).data(),
               cached_stream<P, B, N>(*p, x->data(), steps).data(), "cached, token by token");
}

/// The attention weights of windowed module M ([B][N] random inputs): exactly
/// 0 for keys j <= i - W and j > i, positive for the others, each row's sum 1
/// within 1e-6 (float) or 1e-13 (double); the dynamic twin `dyn` gives the
/// same weights and outputs, bit for bit.
template <class M, std::size_t B, std::size_t N, class D>
void check_window_weights(std::mt19937& rng, D dyn) {
  using T = typename M::value_type;
  constexpr std::size_t W = M::scores.sliding_window, H = M::num_heads, DIn = M::d_in,
                        Out = M::output_width;
  INFO("window " << W << ", " << N << " tokens");
  auto m = std::make_unique<M>();
  mha::for_each_parameter(*m, [&](auto, auto& t) { mha_test::fill_uniform(t, rng, 0.5); });
  auto x = std::make_unique<mha::tensor<T, B, N, DIn>>();
  mha_test::fill_uniform(*x, rng, 1.0);
  auto out = std::make_unique<mha::tensor<T, B, N, Out>>();
  auto w = std::make_unique<mha::tensor<T, B, H, N, N>>();
  auto ws = std::make_unique<typename M::template workspace<B, N>>();
  m->forward_with_weights(*x, *out, *w, *ws);
  const double tol = std::is_same_v<T, float> ? 1e-6 : 1e-13;
  std::size_t outside_nonzero = 0, inside_not_positive = 0, bad_sums = 0;
  double worst_sum = 0;
  for (std::size_t r = 0; r < B * H; ++r)
    for (std::size_t i = 0; i < N; ++i) {
      const T* row = w->data() + (r * N + i) * N;
      double sum = 0;
      for (std::size_t j = 0; j < N; ++j) {
        const bool inside = j <= i && j + W > i;
        if (inside && !(row[j] > T(0))) ++inside_not_positive;
        if (!inside && row[j] != T(0)) ++outside_nonzero;
        sum += static_cast<double>(row[j]);
      }
      worst_sum = std::max(worst_sum, std::abs(sum - 1));
      if (!(std::abs(sum - 1) <= tol)) ++bad_sums;
    }
  INFO("largest |row sum - 1| " << worst_sum);
  CHECK(outside_nonzero == 0);
  CHECK(inside_not_positive == 0);
  CHECK(bad_sums == 0);
  CHECK(mha_test::same_bits(*out, m->forward(*x)));  // (the weights change no output bit)
  mha::copy_parameters(*m, dyn);
  mha::dynamic::tensor<T> xd({B, N, DIn}), od({B, N, Out}), wd({B, H, N, N});
  std::copy(x->data(), x->data() + x->size, xd.data());
  mha::dynamic::workspace<T> dws;
  dyn.forward_with_weights(xd, od, wd, dws);
  CHECK(mha_test::same_bits(*w, wd));
  CHECK(mha_test::same_bits(*out, od));
}

/// Window 1 on module M ([B][N] random inputs): weight exactly 1 on the
/// diagonal and 0 elsewhere; each output row is out_proj of the token's own
/// value row (query head h reads key/value head h / (H / kv heads)), checked
/// against that computation in double (float 2e-6, double 1e-12 relative to
/// max(1, |expected|)); other W_query and W_key weights give the same bits.
template <class M, std::size_t B, std::size_t N>
void check_window_one(std::mt19937& rng) {
  using T = typename M::value_type;
  constexpr std::size_t H = M::num_heads, DIn = M::d_in, Out = M::output_width;
  STATIC_REQUIRE(M::scores.sliding_window == 1);
  auto m = std::make_unique<M>();
  mha::for_each_parameter(*m, [&](auto, auto& t) { mha_test::fill_uniform(t, rng, 0.5); });
  auto x = std::make_unique<mha::tensor<T, B, N, DIn>>();
  mha_test::fill_uniform(*x, rng, 1.0);
  auto out = std::make_unique<mha::tensor<T, B, N, Out>>();
  auto w = std::make_unique<mha::tensor<T, B, H, N, N>>();
  auto ws = std::make_unique<typename M::template workspace<B, N>>();
  m->forward_with_weights(*x, *out, *w, *ws);
  bool diagonal = true;
  for (std::size_t r = 0; r < B * H; ++r)
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t j = 0; j < N; ++j)
        diagonal = diagonal && w->data()[(r * N + i) * N + j] == (i == j ? T(1) : T(0));
  CHECK(diagonal);
  // the expected output, in double, from the parameters by name
  std::map<std::string, std::vector<double>> p;
  mha::for_each_parameter(*m, [&](std::string_view name, auto& t) {
    p[std::string(name)].assign(elements_of(t), elements_of(t) + t.size());
  });
  const std::vector<double>& wv = p.at("W_value.weight");
  const std::vector<double>& wo = p.at("out_proj.weight");
  const std::size_t kv_width = wv.size() / DIn, width = wo.size() / Out;
  const std::size_t head_dim = width / H, kv_heads = kv_width / head_dim;
  REQUIRE(kv_heads * head_dim == kv_width);
  std::vector<double> expected(B * N * Out);
  for (std::size_t t = 0; t < B * N; ++t) {
    std::vector<double> v(kv_width), context(width);
    for (std::size_t f = 0; f < kv_width; ++f) {
      double a = p.count("W_value.bias") ? p.at("W_value.bias")[f] : 0.0;
      for (std::size_t c = 0; c < DIn; ++c) a += wv[f * DIn + c] * static_cast<double>(x->data()[t * DIn + c]);
      v[f] = static_cast<double>(static_cast<T>(a));  // (V is stored in T)
    }
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t d = 0; d < head_dim; ++d)
        context[h * head_dim + d] = v[(h / (H / kv_heads)) * head_dim + d];
    for (std::size_t o = 0; o < Out; ++o) {
      double a = p.count("out_proj.bias") ? p.at("out_proj.bias")[o] : 0.0;
      for (std::size_t f = 0; f < width; ++f) a += wo[o * width + f] * context[f];
      expected[t * Out + o] = a;
    }
  }
  const auto c = mha_test::compare(out->data(), expected.data(), expected.size(), score_rtol<T>);
  INFO(c.describe());
  CHECK(c.violations == 0);
  // W_query and W_key do not matter
  auto m2 = std::make_unique<M>();
  mha::copy_parameters(*m, *m2);
  mha::for_each_parameter(*m2, [&](std::string_view name, auto& t) {
    if (name.starts_with("W_query") || name.starts_with("W_key")) mha_test::fill_uniform(t, rng, 2.0);
  });
  CHECK(mha_test::same_bits(m->forward(*x), m2->forward(*x)));
}

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

TEST_CASE("the sliding window equals Hugging Face's (Mistral's) mask in PyTorch",
          "[scores][window]") {
  using mha::dynamic::rope_config;
  using scores_test::window;
  namespace dyn = mha::dynamic;
  SECTION("multi_head_attention") {
    scores_test::check_module<mha::multi_head_attention<float, 12, 12, 16, 3, true, window<3>>,
                 dyn::multi_head_attention<float, window<3>>, 2, 10>("window_mha_f32_h3_w3_n10.json",
                                                                     {12, 12, 16, 3, true});
    scores_test::check_module<mha::multi_head_attention<double, 16, 16, 16, 4, false, window<4>>,
                 dyn::multi_head_attention<double, window<4>>, 1, 13>("window_mha_f64_h4_w4_n13.json",
                                                                      {16, 16, 16, 4, false});
    scores_test::check_module<mha::multi_head_attention<float, 32, 32, 48, 4, true, window<8>>,
                 dyn::multi_head_attention<float, window<8>>, 1, 40>("window_mha_f32_h4_w8_n40.json",
                                                                     {32, 32, 48, 4, true});
    constexpr mha::attention_scores alibi_window{.alibi = true, .sliding_window = 5};
    scores_test::check_module<mha::multi_head_attention<double, 12, 12, 16, 3, true, alibi_window>,
                 dyn::multi_head_attention<double, alibi_window>, 2, 12>(
        "window_alibi_mha_f64_h3_w5_n12.json", {12, 12, 16, 3, true});
  }
  SECTION("grouped_query_attention") {
    scores_test::check_module<mha::grouped_query_attention<float, 8, 16, 16, 4, 2, false, mha::rope<10000>, window<3>>,
                 dyn::grouped_query_attention<float, window<3>>, 2, 9>(
        "window_gqa_f32_rope_h4_kv2_w3_n9.json", {8, 16, 16, 4, 2, false, rope_config{10000}});
    scores_test::check_module<mha::grouped_query_attention<double, 8, 16, 8, 4, 1, true, mha::no_rope, window<1>>,
                 dyn::grouped_query_attention<double, window<1>>, 2, 6>(
        "window_gqa_f64_norope_h4_kv1_w1_n6.json", {8, 16, 8, 4, 1, true});
    scores_test::check_module<mha::grouped_query_attention<double, 32, 16, 48, 4, 2, true, mha::rope<10000>, window<8>>,
                 dyn::grouped_query_attention<double, window<8>>, 1, 40>(
        "window_gqa_f64_rope_h4_kv2_w8_n40.json", {32, 16, 48, 4, 2, true, rope_config{10000}});
  }
  SECTION("Gemma 2's local layers: grouped-query, RoPE, soft-cap and window") {
    constexpr mha::attention_scores local{.softcap = 2, .sliding_window = 4};
    scores_test::check_module<mha::grouped_query_attention<float, 16, 16, 16, 4, 2, true, mha::rope<10000>, local>,
                 dyn::grouped_query_attention<float, local>, 2, 11>(
        "window_softcap_gqa_f32_rope_h4_kv2_w4_n11.json", {16, 16, 16, 4, 2, true, rope_config{10000}});
  }
}

TEST_CASE("every score fixture is checked", "[scores]") {
  const auto files = variant_fixture::fixture_files(scores_test::scores_dir);
  CHECK(files.size() == 25);  // (the cases of the four test cases above)
}

TEST_CASE("sliding window: scores, rows before the window, weights, window 1", "[scores][window]") {
  using scores_test::window;
  using mha::attention_scores;
  namespace dyn = mha::dynamic;
  std::mt19937 rng(4142);
  SECTION("the modules' scores") {
    STATIC_REQUIRE(attention_scores{}.sliding_window == 0);
    using S = mha::multi_head_attention<float, 8, 8, 16, 2, true, window<4>>;
    STATIC_REQUIRE(S::scores.sliding_window == 4);
    STATIC_REQUIRE(S::scores.softcap == 0);
    STATIC_REQUIRE(!S::scores.alibi);
    STATIC_REQUIRE(S::is_causal);
    using G = mha::grouped_query_attention<double, 8, 8, 16, 2, 1, false, mha::rope<10000>,
                                           attention_scores{.softcap = 50, .sliding_window = 4096}>;
    STATIC_REQUIRE(G::scores.sliding_window == 4096);
    STATIC_REQUIRE(G::scores.softcap == 50);
    using F = mha::fused_multi_head_attention<float, 8, 8, 16, 2, true,
                                              attention_scores{.alibi = true, .sliding_window = 3}>;
    STATIC_REQUIRE(F::scores.sliding_window == 3);
    STATIC_REQUIRE(F::scores.alibi);
    STATIC_REQUIRE(std::remove_cvref_t<decltype(mha::fuse_qkv(std::declval<S&>()))>::scores ==
                   S::scores);
    STATIC_REQUIRE(dyn::multi_head_attention<float, window<4>>::scores.sliding_window == 4);
    STATIC_REQUIRE(dyn::grouped_query_attention<double, window<7>>::scores.sliding_window == 7);
    STATIC_REQUIRE(mha::multi_head_attention<float, 8, 8, 16, 2>::scores.sliding_window == 0);
  }
  SECTION("rows i < W are the causal module's bits, later rows are not") {
    scores_test::check_window_rows<mha::multi_head_attention<float, 16, 16, 24, 4, true, window<5>>,
                                   mha::multi_head_attention<float, 16, 16, 24, 4, true>, 2, 20>(
        rng, dyn::multi_head_attention<float, window<5>>(16, 16, 24, 4, true),
        dyn::multi_head_attention<float, attention_scores{}>(16, 16, 24, 4, true));
    scores_test::check_window_rows<
        mha::grouped_query_attention<double, 16, 16, 24, 4, 2, true, mha::rope<10000>, window<5>>,
        mha::grouped_query_attention<double, 16, 16, 24, 4, 2, true, mha::rope<10000>>, 2, 20>(
        rng, dyn::grouped_query_attention<double, window<5>>(16, 16, 24, 4, 2, true, dyn::rope_config{10000}),
        dyn::grouped_query_attention<double, attention_scores{}>(16, 16, 24, 4, 2, true,
                                                                 dyn::rope_config{10000}));
  }
  SECTION("W >= N: the causal module, bit for bit") {
    // W == N, W == ContextLength (> N), and W far beyond ContextLength
    scores_test::check_window_rows<mha::multi_head_attention<float, 16, 16, 24, 4, true, window<20>>,
                                   mha::multi_head_attention<float, 16, 16, 24, 4, true>, 2, 20>(
        rng, dyn::multi_head_attention<float, window<20>>(16, 16, 24, 4, true),
        dyn::multi_head_attention<float, attention_scores{}>(16, 16, 24, 4, true));
    scores_test::check_window_rows<mha::multi_head_attention<float, 16, 16, 24, 4, true, window<24>>,
                                   mha::multi_head_attention<float, 16, 16, 24, 4, true>, 1, 17>(
        rng, dyn::multi_head_attention<float, window<24>>(16, 16, 24, 4, true),
        dyn::multi_head_attention<float, attention_scores{}>(16, 16, 24, 4, true));
    scores_test::check_window_rows<
        mha::grouped_query_attention<double, 16, 16, 24, 4, 2, true, mha::rope<10000>, window<1000>>,
        mha::grouped_query_attention<double, 16, 16, 24, 4, 2, true, mha::rope<10000>>, 2, 20>(
        rng, dyn::grouped_query_attention<double, window<1000>>(16, 16, 24, 4, 2, true, dyn::rope_config{10000}),
        dyn::grouped_query_attention<double, attention_scores{}>(16, 16, 24, 4, 2, true,
                                                                 dyn::rope_config{10000}));
  }
  SECTION("attention weights: 0 outside the window, rows sum to 1") {
    scores_test::check_window_weights<mha::multi_head_attention<float, 16, 16, 24, 4, true, window<4>>, 2, 13>(
        rng, dyn::multi_head_attention<float, window<4>>(16, 16, 24, 4, true));
    scores_test::check_window_weights<mha::multi_head_attention<float, 32, 32, 48, 4, true, window<8>>, 1, 40>(
        rng, dyn::multi_head_attention<float, window<8>>(32, 32, 48, 4, true));
    scores_test::check_window_weights<
        mha::grouped_query_attention<float, 16, 16, 24, 4, 2, false, mha::rope<10000>, window<3>>, 2, 11>(
        rng, dyn::grouped_query_attention<float, window<3>>(16, 16, 24, 4, 2, false, dyn::rope_config{10000}));
    scores_test::check_window_weights<
        mha::grouped_query_attention<double, 16, 16, 24, 4, 2, true, mha::rope<10000>, window<5>>, 2, 20>(
        rng, dyn::grouped_query_attention<double, window<5>>(16, 16, 24, 4, 2, true, dyn::rope_config{10000}));
  }
  SECTION("W = 1: each token's own value row, projected") {
    scores_test::check_window_one<mha::multi_head_attention<float, 8, 12, 8, 3, true, window<1>>, 2, 7>(rng);
    scores_test::check_window_one<
        mha::grouped_query_attention<double, 8, 16, 8, 4, 2, true, mha::rope<10000>, window<1>>, 2, 7>(rng);
  }
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
