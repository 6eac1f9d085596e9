// Loading mha::grouped_query_attention with attention sinks
// (attention_scores{.sliding_window = 3, .sinks = true}, a gpt-oss layer;
// fixed and dynamic) from the safetensors files written by
// tools/make_sink_safetensors_fixtures.py: Hugging Face names plus `sinks`
// under "model.layers.0.self_attn." (checkpoint_format::llama) and the
// book's names plus `sinks` (checkpoint_format::book, the parameter walk's
// names). The loaded sinks are the file's, and the output is PyTorch's
// (GptOssAttention's eager forward). A file without `sinks` into a model with
// sinks is a missing tensor; a file with `sinks` into a model without them an
// unexpected tensor (strict mode), as for any tensor the model does not use.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include <mha/io/safetensors.hpp>
#include <mha/mha.hpp>

#include "test_helpers.hpp"

using mha::io::checkpoint_format;
using mha::io::load_errc;
using mha::io::load_options;
using namespace mha_io_test;

namespace {

constexpr mha::attention_scores gpt_oss_scores{.sliding_window = 3, .sinks = true};
constexpr mha::attention_scores window_only{.sliding_window = 3};
// The fixture: d_in 8, d_out 16, context 8, 4 heads, 2 key/value heads,
// qkv bias, RoPE theta 10000, sliding window 3, sinks.
using sink_gqa = mha::grouped_query_attention<float, 8, 16, 8, 4, 2, true, mha::rope<10000>, gpt_oss_scores>;
using plain_gqa = mha::grouped_query_attention<float, 8, 16, 8, 4, 2, true, mha::rope<10000>, window_only>;
using dyn_sink_gqa = mha::dynamic::grouped_query_attention<float, gpt_oss_scores>;
using dyn_plain_gqa = mha::dynamic::grouped_query_attention<float, window_only>;
const std::string sinks_prefix = "model.layers.0.self_attn.";
const std::string llama_file = "gqa_sinks_llama_f32.safetensors";
const std::string book_file = "gqa_sinks_book_f32.safetensors";
const std::string io_file = "gqa_sinks_f32.io.safetensors";

dyn_sink_gqa make_sinks_dyn() { return dyn_sink_gqa(8, 16, 8, 4, 2, true, mha::dynamic::rope_config{10000}); }

load_options sinks_opts(checkpoint_format f, std::string p = "") {
  load_options o;
  o.format = f;
  o.prefix = std::move(p);
  return o;
}

std::vector<float> sinks_input() { return read_tensor<float>(data_file(io_file), "input"); }
std::vector<float> sinks_expected() { return read_tensor<float>(data_file(io_file), "output"); }

/// The fixed model loaded from `file` (sinks set to 7 first) and its output on the fixture's input.
std::vector<float> sinks_fixed_output(const std::string& file, const load_options& o, std::unique_ptr<sink_gqa>& m) {
  m = std::make_unique<sink_gqa>();
  std::fill(m->score_params.sinks.begin(), m->score_params.sinks.end(), 7.0f);
  const auto r = mha::io::try_load_safetensors(data_file(file), *m, o);
  INFO(r.message);
  REQUIRE(r.ok());
  CHECK(r.warnings.empty());
  const auto x = sinks_input();
  auto xt = std::make_unique<mha::tensor<float, 2, 7, 8>>();
  REQUIRE(x.size() == xt->size);
  std::copy(x.begin(), x.end(), xt->begin());
  const auto y = m->forward(*xt);
  return {y.begin(), y.end()};
}

/// The same for the dynamic twin (load_safetensors, which throws on failure).
std::vector<float> sinks_dynamic_output(const std::string& file, const load_options& o, dyn_sink_gqa& m) {
  std::fill(m.score_params.sinks.data(), m.score_params.sinks.data() + m.score_params.sinks.size(), 7.0f);
  const auto r = mha::io::load_safetensors(data_file(file), m, o);
  CHECK(r.warnings.empty());
  const auto x = sinks_input();
  mha::dynamic::tensor<float> xt({2, 7, 8});
  std::copy(x.begin(), x.end(), xt.data());
  const auto y = m.forward(xt);
  return {y.data(), y.data() + y.size()};
}

/// The tensors of a file (as f_tensor, values as doubles), in `names` order.
std::vector<f_tensor> tensors_of(const std::string& file, const std::vector<std::string>& names,
                                 const std::vector<std::vector<std::size_t>>& shapes) {
  std::vector<f_tensor> t;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto v = read_tensor<float>(data_file(file), names[i]);
    t.push_back({names[i], shapes[i], std::vector<double>(v.begin(), v.end())});
  }
  return t;
}

/// The llama file's tensors (with or without `sinks`).
std::vector<f_tensor> llama_tensors(bool with_sinks) {
  std::vector<std::string> names;
  std::vector<std::vector<std::size_t>> shapes;
  const auto add = [&](const std::string& n, std::vector<std::size_t> s) {
    names.push_back(sinks_prefix + n);
    shapes.push_back(std::move(s));
  };
  add("q_proj.weight", {16, 8}), add("q_proj.bias", {16}), add("k_proj.weight", {8, 8});
  add("k_proj.bias", {8}), add("v_proj.weight", {8, 8}), add("v_proj.bias", {8});
  add("o_proj.weight", {16, 16}), add("o_proj.bias", {16});
  if (with_sinks) add("sinks", {4});
  return tensors_of(llama_file, names, shapes);
}

/// The book file's tensors (with or without `sinks`).
std::vector<f_tensor> book_tensors(bool with_sinks) {
  std::vector<std::string> names{"W_query.weight", "W_query.bias", "W_key.weight", "W_key.bias",
                                 "W_value.weight", "W_value.bias", "out_proj.weight", "out_proj.bias"};
  std::vector<std::vector<std::size_t>> shapes{{16, 8}, {16}, {8, 8}, {8}, {8, 8}, {8}, {16, 16}, {16}};
  if (with_sinks) names.push_back("sinks"), shapes.push_back({4});
  return tensors_of(book_file, names, shapes);
}

bool sinks_mentions(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// Loads `bytes` into a copy of `model` (every parameter 0.5 first): must fail
/// with `code` naming `tensor`, leaving the model unchanged.
template <class Model>
mha::io::load_result sinks_load_fails(const std::string& bytes, Model& m, const load_options& o, load_errc code,
                           const std::string& tensor) {
  mha::for_each_parameter(m, [](std::string_view, auto& t) { std::fill(t.data(), t.data() + t.size(), 0.5f); });
  std::vector<float> before;
  mha::for_each_parameter(m, [&](std::string_view, auto& t) { before.insert(before.end(), t.data(), t.data() + t.size()); });
  auto r = mha::io::try_load_safetensors_memory(bytes.data(), bytes.size(), m, o, "blob");
  INFO(r.message);
  CHECK(r.code == code);
  CHECK(r.tensor == tensor);
  std::vector<float> after;
  mha::for_each_parameter(m, [&](std::string_view, auto& t) { after.insert(after.end(), t.data(), t.data() + t.size()); });
  CHECK(after == before);
  return r;
}

}  // namespace

TEST_CASE("gpt-oss-style GQA with sinks from Hugging Face names (llama) and the book's names",
          "[io][pytorch][gqa][sinks]") {
  const auto file_sinks = read_tensor<float>(data_file(llama_file), sinks_prefix + "sinks");
  REQUIRE(file_sinks.size() == 4);
  CHECK(read_tensor<float>(data_file(book_file), "sinks") == file_sinks);
  const auto y_expected = sinks_expected();
  std::unique_ptr<sink_gqa> from_llama, from_book, from_detect;
  // llama: q/k/v/o projections with biases, and `<prefix>sinks`
  const auto y_llama = sinks_fixed_output(llama_file, sinks_opts(checkpoint_format::llama, sinks_prefix), from_llama);
  CHECK(std::vector<float>(from_llama->score_params.sinks.begin(), from_llama->score_params.sinks.end()) ==
        file_sinks);
  check_close(y_llama, y_expected, 2e-6, 2e-6);
  // book: the walk's names, `sinks` among them
  const auto y_book = sinks_fixed_output(book_file, sinks_opts(checkpoint_format::book), from_book);
  CHECK(model_bytes(*from_book) == model_bytes(*from_llama));
  CHECK(y_book == y_llama);
  // detect (the files' __metadata__ name the format)
  CHECK(sinks_fixed_output(llama_file, sinks_opts(checkpoint_format::detect, sinks_prefix), from_detect) == y_llama);
  CHECK(sinks_fixed_output(book_file, {}, from_detect) == y_llama);
  // the dynamic twin: the same sinks, the same bits
  for (const auto& [file, o] : {std::pair{llama_file, sinks_opts(checkpoint_format::llama, sinks_prefix)},
                                std::pair{book_file, sinks_opts(checkpoint_format::book)}}) {
    INFO(file);
    auto d = make_sinks_dyn();
    const auto yd = sinks_dynamic_output(file, o, d);
    CHECK(std::vector<float>(d.score_params.sinks.data(), d.score_params.sinks.data() + 4) == file_sinks);
    CHECK(yd == y_llama);
  }
  // the sinks matter: the same file without them (allow_extra_tensors) into
  // the model without sinks gives another output
  auto p = std::make_unique<plain_gqa>();
  auto o = sinks_opts(checkpoint_format::llama, sinks_prefix);
  o.allow_extra_tensors = true;
  const auto r = mha::io::try_load_safetensors(data_file(llama_file), *p, o);
  INFO(r.message);
  REQUIRE(r.ok());
  const auto x = sinks_input();
  auto xt = std::make_unique<mha::tensor<float, 2, 7, 8>>();
  std::copy(x.begin(), x.end(), xt->begin());
  const auto yp = p->forward(*xt);
  double diff = 0;
  for (std::size_t i = 0; i < y_expected.size(); ++i)
    diff = std::max(diff, double(std::fabs(yp.data()[i] - y_expected[i])));
  CHECK(diff > 1e-3);
}

TEST_CASE("sinks load errors: a missing `sinks`, an unexpected `sinks`, a wrong shape",
          "[io][gqa][sinks]") {
  SECTION("a file without sinks into a model with sinks: missing_tensor") {
    const auto llama = make_safetensors(llama_tensors(false), "F32");
    auto m = std::make_unique<sink_gqa>();
    auto r = sinks_load_fails(llama, *m, sinks_opts(checkpoint_format::llama, sinks_prefix), load_errc::missing_tensor, sinks_prefix + "sinks");
    CHECK(sinks_mentions(r.message, "missing from the file"));
    auto d = make_sinks_dyn();
    sinks_load_fails(llama, d, sinks_opts(checkpoint_format::llama, sinks_prefix), load_errc::missing_tensor, sinks_prefix + "sinks");
    const auto book = make_safetensors(book_tensors(false), "F32");
    r = sinks_load_fails(book, *m, sinks_opts(checkpoint_format::book), load_errc::missing_tensor, "sinks");
    CHECK(sinks_mentions(r.message, "missing from the file"));
    sinks_load_fails(book, d, sinks_opts(checkpoint_format::book), load_errc::missing_tensor, "sinks");
    // the older Llama fixture with q/k/v biases (no o_proj.bias, no sinks)
    const auto bias = file_bytes_string(data_file("gqa_rope_bias_llama_f32.safetensors"));
    sinks_load_fails(bias, *m, sinks_opts(checkpoint_format::llama, sinks_prefix), load_errc::missing_tensor, sinks_prefix + "sinks");
  }
  SECTION("a file with sinks into a model without sinks: unexpected_tensor (strict mode)") {
    const auto llama = file_bytes_string(data_file(llama_file));
    const auto book = file_bytes_string(data_file(book_file));
    auto m = std::make_unique<plain_gqa>();
    dyn_plain_gqa d(8, 16, 8, 4, 2, true, mha::dynamic::rope_config{10000});
    for (const auto& [bytes, o, name] :
         {std::tuple{llama, sinks_opts(checkpoint_format::llama, sinks_prefix), sinks_prefix + "sinks"},
          std::tuple{book, sinks_opts(checkpoint_format::book), std::string("sinks")}}) {
      INFO(name);
      auto r = sinks_load_fails(bytes, *m, o, load_errc::unexpected_tensor, name);
      CHECK(sinks_mentions(r.message, "unexpected tensor F32 [4]"));
      CHECK(sinks_mentions(r.message, "allow_extra_tensors"));
      sinks_load_fails(bytes, d, o, load_errc::unexpected_tensor, name);
      // with allow_extra_tensors the rest loads
      auto oe = o;
      oe.allow_extra_tensors = true;
      const auto ok = mha::io::try_load_safetensors_memory(bytes.data(), bytes.size(), *m, oe);
      INFO(ok.message);
      CHECK(ok.ok());
    }
  }
  SECTION("sinks of another shape: shape") {
    auto t = llama_tensors(true);
    t.back().shape = {2, 2};
    const auto bytes = make_safetensors(t, "F32");
    auto m = std::make_unique<sink_gqa>();
    sinks_load_fails(bytes, *m, sinks_opts(checkpoint_format::llama, sinks_prefix), load_errc::shape, sinks_prefix + "sinks");
    auto bt = book_tensors(true);
    bt.back().shape = {1, 4};
    auto d = make_sinks_dyn();
    sinks_load_fails(make_safetensors(bt, "F32"), d, sinks_opts(checkpoint_format::book), load_errc::shape, "sinks");
  }
  SECTION("a non-finite sink: non_finite") {
    auto t = llama_tensors(true);
    t.back().values[2] = -INFINITY;
    auto m = std::make_unique<sink_gqa>();
    sinks_load_fails(make_safetensors(t, "F32"), *m, sinks_opts(checkpoint_format::llama, sinks_prefix), load_errc::non_finite,
          sinks_prefix + "sinks");
  }
}

TEST_CASE("sinks of a multi_head_attention in the other formats: `<prefix>sinks`", "[io][sinks]") {
  // (values: element i of tensor k is 0.01 (k + 1) + 0.001 i, the sinks 1.5, -0.5)
  using M = mha::multi_head_attention<float, 8, 8, 6, 2, true, mha::attention_scores{.sinks = true}>;
  const auto tensor = [](std::string name, std::vector<std::size_t> shape, std::size_t k) {
    std::size_t n = 1;
    for (const auto e : shape) n *= e;
    f_tensor t{std::move(name), std::move(shape), std::vector<double>(n)};
    for (std::size_t i = 0; i < n; ++i) t.values[i] = 0.01 * double(k + 1) + 0.001 * double(i);
    return t;
  };
  const f_tensor sinks_t{"sinks", {2}, {1.5, -0.5}};
  struct form {
    checkpoint_format format;
    std::string prefix;
    std::vector<f_tensor> tensors;
  };
  std::vector<form> forms;
  forms.push_back({checkpoint_format::pytorch_multihead, "",
                   {tensor("in_proj_weight", {24, 8}, 0), tensor("in_proj_bias", {24}, 1),
                    tensor("out_proj.weight", {8, 8}, 2), tensor("out_proj.bias", {8}, 3)}});
  forms.push_back({checkpoint_format::gpt2, "h.0.attn.",
                   {tensor("h.0.attn.c_attn.weight", {8, 24}, 0), tensor("h.0.attn.c_attn.bias", {24}, 1),
                    tensor("h.0.attn.c_proj.weight", {8, 8}, 2), tensor("h.0.attn.c_proj.bias", {8}, 3)}});
  for (const auto& f : forms) {
    INFO(mha::io::to_string(f.format));
    auto with = f.tensors;
    with.push_back(sinks_t);
    with.back().name = f.prefix + "sinks";
    const auto bytes = make_safetensors(with, "F32");
    auto m = std::make_unique<M>();
    const auto r = mha::io::try_load_safetensors_memory(bytes.data(), bytes.size(), *m, sinks_opts(f.format, f.prefix));
    INFO(r.message);
    REQUIRE(r.ok());
    CHECK(m->score_params.sinks.data()[0] == 1.5f);
    CHECK(m->score_params.sinks.data()[1] == -0.5f);
    CHECK(m->out_proj.bias.data()[7] == static_cast<float>(0.04 + 0.007));
    // without `sinks`: missing
    const auto without = make_safetensors(f.tensors, "F32");
    sinks_load_fails(without, *m, sinks_opts(f.format, f.prefix), load_errc::missing_tensor, f.prefix + "sinks");
    // into the model without sinks: unexpected
    auto p = std::make_unique<mha::multi_head_attention<float, 8, 8, 6, 2, true>>();
    const auto rp = sinks_load_fails(bytes, *p, sinks_opts(f.format, f.prefix), load_errc::unexpected_tensor,
                                     f.prefix + "sinks");
    CHECK(sinks_mentions(rp.message, "unexpected tensor F32 [2]"));
  }
}
