// test_sinks.cpp -- attention sinks (mha::attention_scores{.sinks = true},
// gpt-oss's learned per-head sink logits) against PyTorch, alone and with a
// sliding window, soft-capping and ALiBi, on the causal multi_head_attention
// and grouped_query_attention (with mha::no_rope and with mha::rope<10000>),
// float and double.
//
//  * The fixtures (test/data/sinks/*.json, made by tools/make_sink_fixtures.py:
//    an explicit PyTorch forward with Hugging Face GptOssAttention's eager sink
//    lines; schema and cases in test/data/sinks/README.md) are read with
//    test/variant_fixture.hpp; the parameters and inputs are regenerated from
//    the splitmix64 streams (test/kv_fixture.hpp), W_query's weight and bias
//    multiplied by the file's query_weight_scale, the sinks from the stream
//    named in the file (the position of `sinks` in the parameter walk) plus
//    the file's offset, checked against the values the file lists.
//  * Each fixed-size module is compared with PyTorch (float 2e-6, double 1e-12
//    relative to max(1, |expected|), as test_scores.cpp); its mha::dynamic
//    twin, its fused twin (mha::fuse_qkv of a multi_head_attention) and its
//    run-time token-count forward forward(x, n, out, ws) must give the same
//    bits.
//  * The KV-cache forward of the same tokens, token by token and in chunks
//    (one of 12 tokens, the blocked kernels, in the 40-token cases), is
//    compared with the same PyTorch rows to the same tolerance; the dynamic
//    cached forward and the fused twin's give the fixed one's bits.
//  * Direct checks: the parameter walk (`sinks` last, [num_heads], absent
//    without the option; parameter_names, parameter_count), sinks of -infinity
//    give the module without sinks bit for bit, the attention weights of a row
//    sum to 1 - the sink's share (and are the plain module's weights times
//    that sum), and the dynamic module refuses a sinks tensor of another shape.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include <mha/mha.hpp>

#include "kv_fixture.hpp"
#include "program_path.hpp"
#include "test_support.hpp"
#include "score_checks.hpp"
#include "fixture_parameters.hpp"
#include "variant_fixture.hpp"

// (a named namespace: the group is one translation unit, test/CMakeLists.txt)
namespace sinks_test {

using mha::attention_scores;

const std::filesystem::path sinks_dir =
    std::filesystem::path(mha_test::program_relative(MHA_TEST_DATA_DIR)) / "sinks";

using score_checks::cached_stream;
template <class T>
constexpr double sink_rtol = score_checks::rtol<T>;

/// Prints worst_ratio (run the fixture test cases in one process, e.g.
/// `tests_variants "[sinks]"`, for the largest over every fixture).
inline void report() {
  std::printf("test_sinks: largest error / allowed vs PyTorch so far: float %.3g (of 2e-6), double %.3g (of 1e-12)\n",
              score_checks::worst_ratio[0], score_checks::worst_ratio[1]);
}

/// The keys of a sink fixture beyond the variant schema.
struct sink_keys {
  unsigned softcap = 0;
  bool alibi = false;
  std::size_t sliding_window = 0;
  double query_weight_scale = 1;
  std::vector<std::size_t> sinks_shape;
  std::uint64_t sinks_stream = 0;
  int sinks_scale_exponent = 0;
  double sinks_offset = 0;
  std::vector<double> sinks_values;
};

sink_keys read_sink_keys(const std::filesystem::path& file) {
  std::ifstream in(file);
  REQUIRE(in);
  nlohmann::json j;
  in >> j;
  sink_keys k;
  k.softcap = j.at("softcap").get<unsigned>();
  k.alibi = j.at("alibi").get<bool>();
  k.sliding_window = j.at("sliding_window").get<std::size_t>();
  k.query_weight_scale = j.at("query_weight_scale").get<double>();
  const auto& s = j.at("sinks");
  REQUIRE(s.at("name").get<std::string>() == "sinks");
  k.sinks_shape = s.at("shape").get<std::vector<std::size_t>>();
  k.sinks_stream = s.at("stream").get<std::uint64_t>();
  k.sinks_scale_exponent = s.at("scale_exponent").get<int>();
  k.sinks_offset = s.at("offset").get<double>();
  k.sinks_values = s.at("values").get<std::vector<double>>();
  return k;
}

/// A fixture with W_query's weight and bias scaled as the generator did, and
/// its sinks.
template <class T>
struct sink_fixture {
  variant_fixture::fixture<T> fx;
  sink_keys keys;
  std::vector<T> sinks;
};

template <class T>
sink_fixture<T> load_fixture(const char* file) {
  sink_fixture<T> s{variant_fixture::load<T>(sinks_dir / file), read_sink_keys(sinks_dir / file), {}};
  const T scale = static_cast<T>(s.keys.query_weight_scale);
  REQUIRE(static_cast<double>(scale) == s.keys.query_weight_scale);
  for (const char* name : {"W_query.weight", "W_query.bias"}) {
    const auto it = s.fx.parameters.find(name);
    if (it != s.fx.parameters.end())
      for (T& v : it->second.data) v *= scale;  // (a power of two: exact)
  }
  REQUIRE(s.fx.causal);
  // the sinks: the stream values plus the offset (exact), as the file lists them
  REQUIRE(s.keys.sinks_shape == std::vector<std::size_t>{s.fx.num_heads});
  s.sinks = kv_fixture::stream_values<T>(s.fx.seed, s.keys.sinks_stream, s.fx.num_heads,
                                         s.keys.sinks_scale_exponent);
  for (T& v : s.sinks) v += static_cast<T>(s.keys.sinks_offset);
  REQUIRE(s.sinks.size() == s.keys.sinks_values.size());
  for (std::size_t h = 0; h < s.sinks.size(); ++h) CHECK(static_cast<double>(s.sinks[h]) == s.keys.sinks_values[h]);
  return s;
}

using variant_fixture::elements_of;

/// Every parameter of `model` (fixed or dynamic) from the fixture, by the
/// library's (book) names, `sinks` from the fixture's stream; checks that
/// `sinks` is the last entry of the walk, at the position of its stream.
template <class M, class T>
void load(M& model, const sink_fixture<T>& s) {
  const auto lib = s.fx.library_parameters();
  std::size_t loaded = 0, sinks_at = 0;
  bool sinks_seen = false;
  mha::for_each_parameter(model, [&](std::string_view name, auto& tensor) {
    INFO("parameter " << name);
    if (name == "sinks") {
      REQUIRE(tensor.size() == s.sinks.size());
      std::copy(s.sinks.begin(), s.sinks.end(), elements_of(tensor));
      sinks_seen = true;
      sinks_at = loaded++;
      return;
    }
    const auto it = lib.find(std::string(name));
    REQUIRE(it != lib.end());
    REQUIRE(it->second.size() == tensor.size());
    std::copy(it->second.data.begin(), it->second.data.end(), elements_of(tensor));
    ++loaded;
  });
  REQUIRE(sinks_seen);
  CHECK(sinks_at == s.keys.sinks_stream);
  CHECK(sinks_at + 1 == loaded);  // the last entry
  CHECK(loaded == lib.size() + 1);
}

/// A fixed-size module M on fixture `file` ([B][N][DIn] input) and its
/// dynamic twin `dyn`: every check of the top of this file.
template <class M, class D, std::size_t B, std::size_t N>
void check_module(const char* file, D dyn) {
  using T = typename M::value_type;
  constexpr std::size_t DIn = M::d_in;
  const auto s = load_fixture<T>(file);
  const auto& fx = s.fx;
  const auto& keys = s.keys;
  INFO(fx.name);
  STATIC_REQUIRE(M::is_causal);
  STATIC_REQUIRE(M::scores.sinks);
  REQUIRE(M::scores.softcap == keys.softcap);
  REQUIRE(M::scores.alibi == keys.alibi);
  REQUIRE(M::scores.sliding_window == keys.sliding_window);
  REQUIRE(D::scores == M::scores);
  REQUIRE(fx.batch == B);
  REQUIRE(fx.num_queries == N);
  REQUIRE(fx.num_heads == M::num_heads);

  auto m = std::make_unique<M>();
  load(*m, s);
  for (std::size_t h = 0; h < M::num_heads; ++h) CHECK(m->score_params.sinks.data()[h] == s.sinks[h]);
  auto x = std::make_unique<mha::tensor<T, B, N, DIn>>();
  REQUIRE(fx.query().size() == x->size);
  std::copy(fx.query().data.begin(), fx.query().data.end(), x->data());
  score_checks::check_paths<M, D, B, N>(*m, dyn, fx, *x);

  // the dynamic twin loaded by the fixture itself (not by copy_parameters)
  {
    D dyn2 = dyn;
    mha::for_each_parameter(dyn2, [](std::string_view, auto& t) { std::fill(t.data(), t.data() + t.size(), T(0)); });
    load(dyn2, s);
    mha::dynamic::tensor<T> xd({B, N, DIn});
    std::copy(x->data(), x->data() + x->size, xd.data());
    CHECK(mha_test::same_bits(m->forward(*x), dyn2.forward(xd)));
  }
  // the fused twin keeps the sinks
  if constexpr (requires { mha::fuse_qkv(*m); }) {
    const auto f = std::make_unique<decltype(mha::fuse_qkv(*m))>(mha::fuse_qkv(*m));
    CHECK(mha_test::same_bits(f->score_params.sinks, m->score_params.sinks));
  }
}

constexpr attention_scores sinks{.sinks = true};
constexpr attention_scores sinks_sw3{.sliding_window = 3, .sinks = true};
constexpr attention_scores sinks_sw8{.sliding_window = 8, .sinks = true};
constexpr attention_scores sinks_cap2{.softcap = 2, .sinks = true};
constexpr attention_scores sinks_cap3_alibi{.softcap = 3, .alibi = true, .sinks = true};

/// `to`'s parameters by name from `from` (which lacks `sinks`); `to`'s sinks = `sink`.
template <class From, class To, class T>
void copy_with_sinks(From& from, To& to, T sink) {
  std::map<std::string, std::vector<T>> values;
  mha::for_each_parameter(from, [&](std::string_view name, auto& t) {
    values[std::string(name)].assign(elements_of(t), elements_of(t) + t.size());
  });
  std::size_t copied = 0;
  mha::for_each_parameter(to, [&](std::string_view name, auto& t) {
    if (name == "sinks") {
      std::fill(elements_of(t), elements_of(t) + t.size(), sink);
      return;
    }
    const auto& v = values.at(std::string(name));
    REQUIRE(v.size() == t.size());
    std::copy(v.begin(), v.end(), elements_of(t));
    ++copied;
  });
  CHECK(copied == values.size());
}

/// The names of a walk, in order.
template <class M>
std::vector<std::string> walk_names(M& m) {
  std::vector<std::string> names;
  mha::for_each_parameter(m, [&](std::string_view name, auto&) { names.emplace_back(name); });
  return names;
}

}  // namespace sinks_test

TEST_CASE("attention sinks equal Hugging Face GptOssAttention's in PyTorch", "[sinks]") {
  using mha::dynamic::rope_config;
  namespace dyn = mha::dynamic;
  namespace st = sinks_test;
  SECTION("multi_head_attention") {
    st::check_module<mha::multi_head_attention<float, 12, 12, 8, 3, true, st::sinks>,
                     dyn::multi_head_attention<float, st::sinks>, 2, 6>("sinks_mha_f32_h3_n6.json",
                                                                        {12, 12, 8, 3, true});
    st::check_module<mha::multi_head_attention<double, 12, 12, 8, 3, true, st::sinks>,
                     dyn::multi_head_attention<double, st::sinks>, 2, 6>("sinks_mha_f64_h3_n6.json",
                                                                         {12, 12, 8, 3, true});
    st::check_module<mha::multi_head_attention<double, 32, 32, 48, 4, true, st::sinks>,
                     dyn::multi_head_attention<double, st::sinks>, 1, 40>("sinks_mha_f64_h4_n40.json",
                                                                          {32, 32, 48, 4, true});
  }
  SECTION("grouped_query_attention") {
    st::check_module<mha::grouped_query_attention<double, 8, 16, 8, 4, 2, false, mha::no_rope, st::sinks>,
                     dyn::grouped_query_attention<double, st::sinks>, 2, 7>(
        "sinks_gqa_f64_norope_h4_kv2_n7.json", {8, 16, 8, 4, 2, false});
  }
  sinks_test::report();
}

TEST_CASE("attention sinks with a sliding window and RoPE (gpt-oss) equal PyTorch", "[sinks][sliding_window]") {
  using mha::dynamic::rope_config;
  namespace dyn = mha::dynamic;
  namespace st = sinks_test;
  st::check_module<mha::grouped_query_attention<float, 8, 16, 12, 4, 2, true, mha::rope<10000>, st::sinks_sw3>,
                   dyn::grouped_query_attention<float, st::sinks_sw3>, 2, 10>(
      "sinks_sw3_gqa_f32_rope_h4_kv2_n10.json", {8, 16, 12, 4, 2, true, rope_config{10000}});
  st::check_module<mha::grouped_query_attention<float, 32, 32, 48, 4, 2, true, mha::rope<10000>, st::sinks_sw8>,
                   dyn::grouped_query_attention<float, st::sinks_sw8>, 1, 40>(
      "sinks_sw8_gqa_f32_rope_h4_kv2_n40.json", {32, 32, 48, 4, 2, true, rope_config{10000}});
  sinks_test::report();
}

TEST_CASE("attention sinks after soft-capping and ALiBi equal PyTorch", "[sinks][softcap][alibi]") {
  using mha::dynamic::rope_config;
  namespace dyn = mha::dynamic;
  namespace st = sinks_test;
  st::check_module<mha::multi_head_attention<float, 16, 16, 8, 4, true, st::sinks_cap2>,
                   dyn::multi_head_attention<float, st::sinks_cap2>, 2, 7>("sinks_softcap_mha_f32_h4_n7.json",
                                                                           {16, 16, 8, 4, true});
  st::check_module<mha::grouped_query_attention<double, 8, 16, 8, 4, 1, true, mha::rope<10000>, st::sinks_cap3_alibi>,
                   dyn::grouped_query_attention<double, st::sinks_cap3_alibi>, 2, 6>(
      "sinks_softcap_alibi_gqa_f64_rope_h4_kv1_n6.json", {8, 16, 8, 4, 1, true, rope_config{10000}});
  sinks_test::report();
}

TEST_CASE("every sink fixture is checked", "[sinks]") {
  const auto files = variant_fixture::fixture_files(sinks_test::sinks_dir);
  CHECK(files.size() == 8);  // (the cases of the three test cases above)
}

TEST_CASE("attention sinks: the parameter walk", "[sinks][parameters]") {
  namespace st = sinks_test;
  using M = mha::multi_head_attention<float, 12, 12, 8, 3, true, st::sinks>;
  using P = mha::multi_head_attention<float, 12, 12, 8, 3, true>;
  using G = mha::grouped_query_attention<double, 8, 16, 8, 4, 2, false, mha::rope<10000>, st::sinks_sw3>;
  using GP = mha::grouped_query_attention<double, 8, 16, 8, 4, 2, false, mha::rope<10000>,
                                          mha::attention_scores{.sliding_window = 3}>;
  using F = mha::fused_multi_head_attention<float, 12, 12, 8, 3, true, st::sinks>;
  using FP = mha::fused_multi_head_attention<float, 12, 12, 8, 3, true>;
  // parameter_names: `sinks` last, the rest the plain module's
  STATIC_REQUIRE(mha::parameter_names<M>.size() == mha::parameter_names<P>.size() + 1);
  STATIC_REQUIRE(mha::parameter_names<M>.back() == "sinks");
  STATIC_REQUIRE(mha::parameter_names<G>.back() == "sinks");
  STATIC_REQUIRE(mha::parameter_names<F>.back() == "sinks");
  STATIC_REQUIRE(mha::parameter_names<G>.size() == mha::parameter_names<GP>.size() + 1);
  STATIC_REQUIRE(mha::parameter_names<F>.size() == mha::parameter_names<FP>.size() + 1);
  for (std::size_t i = 0; i < mha::parameter_names<P>.size(); ++i)
    CHECK(mha::parameter_names<M>[i] == mha::parameter_names<P>[i]);
  for (const auto n : mha::parameter_names<P>) CHECK(n != "sinks");
  for (const auto n : mha::parameter_names<GP>) CHECK(n != "sinks");
  // parameter_count grows by num_heads
  STATIC_REQUIRE(M::parameter_count == P::parameter_count + 3);
  STATIC_REQUIRE(G::parameter_count == GP::parameter_count + 4);
  STATIC_REQUIRE(F::parameter_count == FP::parameter_count + 3);
  // the walk visits the member with its size
  auto m = std::make_unique<M>();
  std::size_t visited = 0;
  mha::for_each_parameter(*m, [&](std::string_view name, auto& t) {
    if (name == "sinks") {
      CHECK(static_cast<const void*>(t.data()) == static_cast<const void*>(m->score_params.sinks.data()));
      CHECK(t.size() == 3);
    }
    ++visited;
  });
  CHECK(visited == mha::parameter_names<M>.size());
  // the dynamic twins: `sinks` [num_heads] last, absent without the option
  mha::dynamic::multi_head_attention<float, st::sinks> d(12, 12, 8, 3, true);
  mha::dynamic::multi_head_attention<float> dp(12, 12, 8, 3, true);
  const auto dn = st::walk_names(d);
  const auto dpn = st::walk_names(dp);
  REQUIRE(dn.size() == dpn.size() + 1);
  CHECK(dn.back() == "sinks");
  CHECK(std::equal(dpn.begin(), dpn.end(), dn.begin()));
  CHECK(std::find(dpn.begin(), dpn.end(), "sinks") == dpn.end());
  mha::dynamic::grouped_query_attention<double, st::sinks_sw3> dg(8, 16, 8, 4, 2, false,
                                                                   mha::dynamic::rope_config{10000});
  mha::dynamic::grouped_query_attention<double> dgp(8, 16, 8, 4, 2, false, mha::dynamic::rope_config{10000});
  const auto gn = st::walk_names(dg);
  CHECK(gn.size() == st::walk_names(dgp).size() + 1);
  CHECK(gn.back() == "sinks");
  std::size_t sink_size = 0, total = 0, total_plain = 0;
  mha::for_each_parameter(dg, [&](std::string_view name, auto& t) {
    if (name == "sinks") sink_size = t.size();
    total += t.size();
  });
  mha::for_each_parameter(dgp, [&](std::string_view, auto& t) { total_plain += t.size(); });
  CHECK(sink_size == 4);
  CHECK(total == total_plain + 4);
  CHECK(total == G::parameter_count);
  CHECK(dg.score_params.sinks.shape() == std::vector<std::size_t>{4});
  CHECK(dp.score_params.sinks.size() == 0);
}

TEST_CASE("attention sinks of -infinity give the module without sinks, bit for bit", "[sinks]") {
  namespace st = sinks_test;
  std::mt19937 rng(4343);
  constexpr float ninf = -std::numeric_limits<float>::infinity();
  constexpr double ninf_d = -std::numeric_limits<double>::infinity();
  SECTION("multi_head_attention, fixed and dynamic, forward and cached") {
    using P = mha::multi_head_attention<float, 16, 16, 24, 4, true>;
    using M = mha::multi_head_attention<float, 16, 16, 24, 4, true, st::sinks>;
    auto p = std::make_unique<P>();
    mha::for_each_parameter(*p, [&](auto, auto& t) { mha_test::fill_uniform(t, rng, 0.5); });
    auto m = std::make_unique<M>();
    st::copy_with_sinks(*p, *m, ninf);
    mha::tensor<float, 2, 20, 16> x{};
    mha_test::fill_uniform(x, rng, 1.0);
    const auto y = p->forward(x);
    CHECK(mha_test::same_bits(y, m->forward(x)));
    const auto steps = score_checks::schedules(20);
    CHECK(mha_test::same_bits(st::cached_stream<P, 2, 20>(*p, x.data(), steps.back()).data(),
                              st::cached_stream<M, 2, 20>(*m, x.data(), steps.back()).data(), 2 * 20 * 16));
    mha::dynamic::multi_head_attention<float, st::sinks> d(16, 16, 24, 4, true);
    mha::copy_parameters(*m, d);
    mha::dynamic::tensor<float> xd({2, 20, 16});
    std::copy(x.data(), x.data() + x.size, xd.data());
    CHECK(mha_test::same_bits(y, d.forward(xd)));
    // finite sinks change it
    m->score_params.sinks.data()[1] = 1.0f;
    CHECK(!mha_test::same_bits(y, m->forward(x)));
  }
  SECTION("grouped_query_attention with RoPE and a sliding window, double") {
    using P = mha::grouped_query_attention<double, 8, 16, 16, 4, 2, true, mha::rope<10000>,
                                           mha::attention_scores{.sliding_window = 4}>;
    using M = mha::grouped_query_attention<double, 8, 16, 16, 4, 2, true, mha::rope<10000>,
                                           mha::attention_scores{.sliding_window = 4, .sinks = true}>;
    auto p = std::make_unique<P>();
    mha::for_each_parameter(*p, [&](auto, auto& t) { mha_test::fill_uniform(t, rng, 0.5); });
    auto m = std::make_unique<M>();
    st::copy_with_sinks(*p, *m, ninf_d);
    mha::tensor<double, 2, 13, 8> x{};
    mha_test::fill_uniform(x, rng, 1.0);
    const auto y = p->forward(x);
    CHECK(mha_test::same_bits(y, m->forward(x)));
    mha::dynamic::grouped_query_attention<double, M::scores> d(8, 16, 16, 4, 2, true,
                                                               mha::dynamic::rope_config{10000});
    mha::copy_parameters(*m, d);
    mha::dynamic::tensor<double> xd({2, 13, 8});
    std::copy(x.data(), x.data() + x.size, xd.data());
    CHECK(mha_test::same_bits(y, d.forward(xd)));
  }
}

TEST_CASE("attention sinks: a row's weights sum to 1 - the sink's share", "[sinks]") {
  namespace st = sinks_test;
  std::mt19937 rng(4344);
  constexpr std::size_t B = 2, H = 3, N = 7, D = 12;
  using P = mha::multi_head_attention<double, D, D, 8, H, true>;
  using M = mha::multi_head_attention<double, D, D, 8, H, true, st::sinks>;
  auto p = std::make_unique<P>();
  mha::for_each_parameter(*p, [&](auto, auto& t) { mha_test::fill_uniform(t, rng, 0.5); });
  auto m = std::make_unique<M>();
  st::copy_with_sinks(*p, *m, 0.0);
  const double sink_values[H] = {2.0, -1.0, 0.5};
  std::copy(sink_values, sink_values + H, m->score_params.sinks.data());
  mha::tensor<double, B, N, D> x{};
  mha_test::fill_uniform(x, rng, 1.0);
  mha::tensor<double, B, N, D> out{}, pout{};
  mha::tensor<double, B, H, N, N> w{}, wp{};
  auto ws = std::make_unique<M::workspace<B, N>>();
  m->forward_with_weights(x, out, w, *ws);
  CHECK(mha_test::same_bits(out, m->forward(x)));
  auto wsp = std::make_unique<P::workspace<B, N>>();
  p->forward_with_weights(x, pout, wp, *wsp);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < N; ++i) {
        INFO("sequence " << b << ", head " << h << ", row " << i);
        const double* row = w.data() + ((b * H + h) * N + i) * N;
        const double* prow = wp.data() + ((b * H + h) * N + i) * N;
        double sum = 0, psum = 0;
        for (std::size_t j = 0; j < N; ++j) sum += row[j], psum += prow[j];
        CHECK(psum == Approx(1.0).epsilon(1e-14));
        // the sink's share e^s / (e^s + sum e^l) = 1 / (1 + sum_j e^(l_j - s)):
        // the plain weights are e^l_j / sum e^l, so w_j = p_j (1 - share)
        CHECK(sum < 1.0);
        CHECK(sum > 0.0);
        for (std::size_t j = 0; j <= i; ++j) CHECK(row[j] == Approx(prow[j] * sum).epsilon(1e-13));
        for (std::size_t j = i + 1; j < N; ++j) CHECK(row[j] == 0.0);
        // head 0 (sink 2, logits near 0) gives the sink a large share on the first rows
        if (h == 0 && i == 0) CHECK(1.0 - sum > 0.5);
      }
  // the dynamic twin's weights are the same bits
  mha::dynamic::multi_head_attention<double, st::sinks> d(D, D, 8, H, true);
  mha::copy_parameters(*m, d);
  mha::dynamic::tensor<double> xd({B, N, D}), od({B, N, D}), wd({B, H, N, N});
  std::copy(x.data(), x.data() + x.size, xd.data());
  mha::dynamic::workspace<double> dws;
  d.forward_with_weights(xd, od, wd, dws);
  CHECK(mha_test::same_bits(w, wd));
  CHECK(mha_test::same_bits(out, od));
}

TEST_CASE("attention sinks: the dynamic module refuses sinks of another shape", "[sinks][dynamic]") {
  namespace st = sinks_test;
  const auto refuses = [](auto& d, const char* what) {
    INFO(what);
    mha::dynamic::tensor<float> x({1, 3, 8});
    std::fill(x.data(), x.data() + x.size(), 0.25f);
    try {
      static_cast<void>(d.forward(x));
      FAIL("no exception");
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      INFO(message);
      CHECK(message.find("score_params.sinks has shape [") != std::string::npos);
    }
  };
  mha::dynamic::multi_head_attention<float, st::sinks> d(8, 8, 6, 2, true);
  CHECK_NOTHROW(d.forward(mha::dynamic::tensor<float>({1, 3, 8})));
  d.score_params.sinks = mha::dynamic::tensor<float>({3});
  refuses(d, "multi_head_attention, 3 sinks for 2 heads");
  d.score_params.sinks = mha::dynamic::tensor<float>({1, 2});
  refuses(d, "multi_head_attention, sinks of shape [1][2]");
  mha::dynamic::grouped_query_attention<float, st::sinks_sw3> g(8, 8, 6, 4, 2, false,
                                                                mha::dynamic::rope_config{10000});
  CHECK_NOTHROW(g.forward(mha::dynamic::tensor<float>({1, 3, 8})));
  g.score_params.sinks = mha::dynamic::tensor<float>({2});
  refuses(g, "grouped_query_attention, 2 sinks for 4 heads");
}
