// Loading mha::grouped_query_attention (fixed and dynamic, RoPE) from
// safetensors files written by tools/make_gqa_safetensors_fixtures.py: the
// book's names, Hugging Face Llama names under a prefix, and Meta's
// interleaved RoPE rows (load_options::rope_layout); each reproduces
// PyTorch's output. The same with q/k/v biases (Qwen-style, written by
// tools/make_gqa_bias_safetensors_fixtures.py): the interleaved q/k biases are
// permuted too. Error cases leave the model unchanged. One fixed shape per
// bias setting (the fixtures') to keep the compile cost small.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <mha/io/safetensors.hpp>
#include <mha/mha.hpp>

#include "test_helpers.hpp"

using mha::io::checkpoint_format;
using mha::io::load_errc;
using mha::io::load_options;
using mha::io::rope_layout;
using namespace mha_io_test;

namespace {

// The fixture: d_in 8, d_out 16, context 8, 4 heads, 2 key/value heads, RoPE theta 10000.
using fixed_gqa = mha::grouped_query_attention<float, 8, 16, 8, 4, 2, false, mha::rope<10000>>;
using dyn_gqa = mha::dynamic::grouped_query_attention<float>;
const std::string llama_prefix = "model.layers.0.self_attn.";

dyn_gqa make_dyn(std::size_t kv_heads = 2, bool bias = false, double theta = 10000.0) {
  return dyn_gqa(8, 16, 8, 4, kv_heads, bias, mha::dynamic::rope_config{theta});
}

load_options gqa_opts(checkpoint_format f, std::string prefix = "", rope_layout rl = rope_layout::half) {
  load_options o;
  o.format = f;
  o.prefix = std::move(prefix);
  o.rope_layout = rl;
  return o;
}

std::vector<float> expected() {
  return read_tensor<float>(data_file("gqa_rope_f32.io.safetensors"), "output");
}

/// |actual - expected| <= 2e-6 * max(1, |expected|), as the other float io tests.
void check_output(const std::vector<float>& y) { check_close(y, expected(), 2e-6, 2e-6); }

/// The fixed model `Model` loaded from `file` (out_proj.bias set to 1 first:
/// a file without it must zero it), and its output on the input of the io
/// fixture `io` (input [2][7][8]).
template <class Model = fixed_gqa>
std::vector<float> fixed_output(const std::string& file, const load_options& o,
                                std::unique_ptr<Model>* keep = nullptr,
                                const std::string& io = "gqa_rope_f32.io.safetensors") {
  auto m = std::make_unique<Model>();
  std::fill(m->out_proj.bias.begin(), m->out_proj.bias.end(), 1.0f);
  const auto r = mha::io::try_load_safetensors(data_file(file), *m, o);
  INFO(r.message);
  REQUIRE(r.ok());
  CHECK(r.warnings.empty());
  const auto x = read_tensor<float>(data_file(io), "input");
  auto xt = std::make_unique<mha::tensor<float, 2, 7, 8>>();
  REQUIRE(x.size() == xt->size);
  std::copy(x.begin(), x.end(), xt->begin());
  const auto y = m->forward(*xt);
  if (keep != nullptr) *keep = std::move(m);
  return {y.begin(), y.end()};
}

/// The same for the dynamic twin (qkv_bias `bias`); `check_warnings`: the
/// load must give none.
std::vector<float> dynamic_output(const std::string& file, const load_options& o,
                                  bool bias = false,
                                  const std::string& io = "gqa_rope_f32.io.safetensors",
                                  bool check_warnings = false) {
  auto m = make_dyn(2, bias);
  std::fill(m.out_proj.bias.data(), m.out_proj.bias.data() + m.out_proj.bias.size(), 1.0f);
  const auto r = mha::io::load_safetensors(data_file(file), m, o);
  if (check_warnings) CHECK(r.warnings.empty());
  const auto x = read_tensor<float>(data_file(io), "input");
  mha::dynamic::tensor<float> xt({2, 7, 8});
  std::copy(x.begin(), x.end(), xt.data());
  const auto y = m.forward(xt);
  return {y.data(), y.data() + y.size()};
}

/// All parameters of a dynamic model, in walk order (to check it is unchanged).
std::vector<float> params_of(dyn_gqa& m) {
  std::vector<float> v;
  mha::for_each_parameter(m, [&](std::string_view, auto& t) { v.insert(v.end(), t.data(), t.data() + t.size()); });
  return v;
}

/// The dynamic load of `bytes` must fail with `code`, leaving `m` unchanged.
mha::io::load_result dyn_fails(const std::string& bytes, dyn_gqa m, const load_options& o, load_errc code) {
  mha::for_each_parameter(m, [](std::string_view, auto& t) { std::fill(t.data(), t.data() + t.size(), 0.5f); });
  const auto before = params_of(m);
  auto r = mha::io::try_load_safetensors_memory(bytes.data(), bytes.size(), m, o, "blob");
  INFO(r.message);
  CHECK(r.code == code);
  CHECK(params_of(m) == before);
  return r;
}

bool mentions(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("GQA + RoPE from the book's names (no out_proj.bias: zero)", "[io][pytorch][gqa]") {
  check_output(fixed_output("gqa_rope_book_f32.safetensors", gqa_opts(checkpoint_format::book)));
  check_output(dynamic_output("gqa_rope_book_f32.safetensors", gqa_opts(checkpoint_format::book)));
  // detect (the file's __metadata__ says book)
  check_output(fixed_output("gqa_rope_book_f32.safetensors", {}));
}

TEST_CASE("GQA + RoPE from Hugging Face Llama names under a prefix", "[io][pytorch][gqa][llama]") {
  const auto o = gqa_opts(checkpoint_format::llama, llama_prefix);
  check_output(fixed_output("gqa_rope_llama_f32.safetensors", o));
  check_output(dynamic_output("gqa_rope_llama_f32.safetensors", o));
  // detect: from the metadata, and from the names (q_proj.weight) without it
  check_output(fixed_output("gqa_rope_llama_f32.safetensors", gqa_opts(checkpoint_format::detect, llama_prefix)));
  const std::string bare = with_metadata(file_bytes(data_file("gqa_rope_llama_f32.safetensors")), nullptr);
  auto m = std::make_unique<fixed_gqa>();
  auto od = gqa_opts(checkpoint_format::detect, llama_prefix);
  od.expected_num_heads = 4;
  const auto r = mha::io::try_load_safetensors_memory(bare.data(), bare.size(), *m, od);
  INFO(r.message);
  CHECK(r.ok());
  CHECK(std::string(mha::io::to_string(checkpoint_format::llama)) == "llama");
}

TEST_CASE("Meta's interleaved RoPE rows: rope_layout::interleaved", "[io][pytorch][gqa][llama]") {
  const std::string meta = "gqa_rope_meta_f32.safetensors";
  const auto oi = gqa_opts(checkpoint_format::llama, llama_prefix, rope_layout::interleaved);
  std::unique_ptr<fixed_gqa> from_meta, from_hf;
  const auto y_meta = fixed_output(meta, oi, &from_meta);
  check_output(y_meta);
  // the same bits as the Hugging Face file
  const auto y_hf = fixed_output("gqa_rope_llama_f32.safetensors", gqa_opts(checkpoint_format::llama, llama_prefix), &from_hf);
  CHECK(model_bytes(*from_meta) == model_bytes(*from_hf));
  CHECK(y_meta == y_hf);
  CHECK(dynamic_output(meta, oi) == y_hf);
  // without the option the output differs (the option matters)
  const auto y_plain = fixed_output(meta, gqa_opts(checkpoint_format::llama, llama_prefix));
  const auto e = expected();
  double diff = 0;
  for (std::size_t i = 0; i < e.size(); ++i) diff = std::max(diff, double(std::fabs(y_plain[i] - e[i])));
  CHECK(diff > 1e-3);
  // the book's names take the option as well: the book file permuted back is
  // not the fixture, so only check that the permutation changes the output
  const auto y_book = fixed_output("gqa_rope_book_f32.safetensors",
                                   gqa_opts(checkpoint_format::book, "", rope_layout::interleaved));
  CHECK(y_book != y_hf);
}

TEST_CASE("GQA load errors name the cause and leave the model unchanged", "[io][gqa][llama]") {
  const auto llama = file_bytes_string(data_file("gqa_rope_llama_f32.safetensors"));
  const auto o = gqa_opts(checkpoint_format::llama, llama_prefix);
  SECTION("another num_kv_heads: recorded in the metadata") {
    const auto r = dyn_fails(llama, make_dyn(4), o, load_errc::hyperparameter);
    CHECK(mentions(r.message, "num_kv_heads"));
    CHECK(mentions(r.message, "is 2 in the file, expected 4"));
  }
  SECTION("another num_kv_heads: from k_proj's rows") {
    auto oi = o;
    oi.ignore_metadata = true;
    const auto r = dyn_fails(llama, make_dyn(1), oi, load_errc::shape);
    CHECK(r.tensor == llama_prefix + "k_proj.weight");
    CHECK(mentions(r.message, "8 rows are 2 key/value heads of head_dim 4, the model has num_kv_heads = 1 (4 rows)"));
  }
  SECTION("rope_layout::interleaved without RoPE") {
    const auto r = dyn_fails(llama, make_dyn(2, false, 0.0),
                             gqa_opts(checkpoint_format::llama, llama_prefix, rope_layout::interleaved),
                             load_errc::layout);
    CHECK(mentions(r.message, "has no RoPE"));
  }
  SECTION("rope_layout::interleaved for a multi-head attention (no RoPE)") {
    auto m = std::make_unique<mha::multi_head_attention<float, 8, 16, 8, 4>>();
    const auto before = model_bytes(*m);
    const auto book = file_bytes_string(data_file("book_mha_nobias_f32.safetensors"));
    auto oi = gqa_opts(checkpoint_format::book, "", rope_layout::interleaved);
    oi.ignore_metadata = true;  // (the file's sizes are not the model's: the option is checked first)
    const auto r = mha::io::try_load_safetensors_memory(book.data(), book.size(), *m, oi);
    INFO(r.message);
    CHECK(r.code == load_errc::layout);
    CHECK(model_bytes(*m) == before);
  }
  SECTION("qkv bias: the model has it, the file not") {
    auto oi = o;
    oi.ignore_metadata = true;
    const auto r = dyn_fails(llama, make_dyn(2, true), oi, load_errc::qkv_bias);
    CHECK(r.tensor == llama_prefix + "q_proj.bias");
  }
  SECTION("qkv bias: the file has it (Qwen2), the fixed model not") {
    std::vector<f_tensor> t;
    const auto add = [&](const std::string& n, std::size_t rows, std::size_t cols) {
      f_tensor x{llama_prefix + n, cols ? std::vector<std::size_t>{rows, cols} : std::vector<std::size_t>{rows}, {}};
      x.values.assign(rows * (cols ? cols : 1), 0.25);
      t.push_back(x);
    };
    add("q_proj.weight", 16, 8), add("k_proj.weight", 8, 8), add("v_proj.weight", 8, 8);
    add("o_proj.weight", 16, 16), add("q_proj.bias", 16, 0), add("k_proj.bias", 8, 0);
    add("v_proj.bias", 8, 0);
    const auto bytes = make_safetensors(t, "F32");
    auto m = std::make_unique<fixed_gqa>();
    const auto before = model_bytes(*m);
    const auto r = mha::io::try_load_safetensors_memory(bytes.data(), bytes.size(), *m, o);
    INFO(r.message);
    CHECK(r.code == load_errc::qkv_bias);
    CHECK(model_bytes(*m) == before);
    // into a model with qkv_bias the same file loads, its o_proj.bias absent: zero
    auto mb = make_dyn(2, true);
    std::fill(mb.out_proj.bias.data(), mb.out_proj.bias.data() + mb.out_proj.bias.size(), 1.0f);
    const auto rb = mha::io::try_load_safetensors_memory(bytes.data(), bytes.size(), mb, o);
    INFO(rb.message);
    REQUIRE(rb.ok());
    CHECK(mb.w_query.bias.data()[0] == 0.25f);
    CHECK(std::all_of(mb.out_proj.bias.data(), mb.out_proj.bias.data() + 16, [](float v) { return v == 0.0f; }));
  }
}

namespace {

// The qkv-bias fixture (tools/make_gqa_bias_safetensors_fixtures.py): the same
// sizes with biases on W_query, W_key and W_value (Qwen-style), no out_proj bias.
using fixed_gqa_bias = mha::grouped_query_attention<float, 8, 16, 8, 4, 2, true, mha::rope<10000>>;
const std::string bias_io = "gqa_rope_bias_f32.io.safetensors";

/// The fixed qkv-bias model loaded from `file` and its output on bias_io's input.
std::vector<float> bias_fixed_output(const std::string& file, const load_options& o,
                                     std::unique_ptr<fixed_gqa_bias>* keep = nullptr) {
  return fixed_output<fixed_gqa_bias>(file, o, keep, bias_io);
}

/// The same for the dynamic twin (qkv_bias = true).
std::vector<float> bias_dynamic_output(const std::string& file, const load_options& o) {
  return dynamic_output(file, o, true, bias_io, true);
}

std::vector<float> bias_expected() { return read_tensor<float>(data_file(bias_io), "output"); }

}  // namespace

TEST_CASE("GQA + RoPE with q/k/v biases (Qwen-style): rotate-half and Meta's interleaved rows",
          "[io][pytorch][gqa][llama]") {
  const std::string hf = "gqa_rope_bias_llama_f32.safetensors";
  const std::string meta = "gqa_rope_bias_meta_f32.safetensors";
  const auto oh = gqa_opts(checkpoint_format::llama, llama_prefix);
  const auto oi = gqa_opts(checkpoint_format::llama, llama_prefix, rope_layout::interleaved);
  std::unique_ptr<fixed_gqa_bias> from_hf, from_meta;
  // the rotate-half file as stored, the interleaved one permuted (weights and biases)
  const auto y_hf = bias_fixed_output(hf, oh, &from_hf);
  check_close(y_hf, bias_expected(), 2e-6, 2e-6);
  const auto y_meta = bias_fixed_output(meta, oi, &from_meta);
  check_close(y_meta, bias_expected(), 2e-6, 2e-6);
  // the same model, bit for bit: the q/k biases were permuted like the weights
  CHECK(model_bytes(*from_meta) == model_bytes(*from_hf));
  CHECK(y_meta == y_hf);
  CHECK(std::all_of(from_hf->out_proj.bias.begin(), from_hf->out_proj.bias.end(),
                    [](float v) { return v == 0.0f; }));
  // the dynamic twin
  const auto yd_hf = bias_dynamic_output(hf, oh);
  check_close(yd_hf, bias_expected(), 2e-6, 2e-6);
  CHECK(bias_dynamic_output(meta, oi) == yd_hf);
  // the interleaved file without rope_layout::interleaved does not match PyTorch
  for (const auto& y_plain : {bias_fixed_output(meta, oh), bias_dynamic_output(meta, oh)}) {
    const auto e = bias_expected();
    REQUIRE(y_plain.size() == e.size());
    double diff = 0;
    for (std::size_t i = 0; i < e.size(); ++i) diff = std::max(diff, double(std::fabs(y_plain[i] - e[i])));
    CHECK(diff > 1e-3);
  }
}
