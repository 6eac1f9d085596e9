// Loading safetensors files written from real PyTorch modules
// (tools/make_safetensors_fixtures.py) reproduces PyTorch's outputs.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include <mha/io/safetensors.hpp>
#include <mha/mha.hpp>

#include "test_helpers.hpp"

#ifdef MHA_TEST_EXPORTED_HEADERS
// Written at build time by tools/export_weights_header.py from the same files
// (test/io/CMakeLists.txt; their outputs are checked against PyTorch's in
// test_exported_header.cpp).
#include "book_ca_f32.hpp"
#include "book_mha_bf16.hpp"
#include "book_mha_f64.hpp"
#include "book_wrapper_f32.hpp"
#include "gpt2_f32.hpp"
#include "torch_mha_f32.hpp"
#endif

using mha::io::checkpoint_format;
using mha::io::load_options;
using namespace mha_io_test;

namespace {

load_options opts(checkpoint_format f, std::string prefix = "") {
  load_options o;
  o.format = f;
  o.prefix = std::move(prefix);
  return o;
}

/// The output of a fixed-size Model loaded from `bytes` (a safetensors file
/// in memory) on the input of `io_case`.io.safetensors.
template <class Model, std::size_t B, std::size_t N>
std::vector<double> fixed_output(const std::string& bytes, const std::string& io_case,
                                 const load_options& o) {
  using T = typename Model::value_type;
  auto model = std::make_unique<Model>();
  const auto r = mha::io::try_load_safetensors_memory(bytes.data(), bytes.size(), *model, o);
  INFO(r.message);
  REQUIRE(r.ok());
  const auto x = read_tensor<T>(data_file(io_case + ".io.safetensors"), "input");
  auto xt = std::make_unique<mha::tensor<T, B, N, Model::d_in>>();
  REQUIRE(x.size() == xt->size);  // static member
  for (std::size_t i = 0; i < x.size(); ++i) xt->elements[i] = x[i];
  const auto y = model->forward(*xt);
  return {y.begin(), y.end()};
}

/// Loads `case_name` into a value-initialised fixed-size Model and compares its
/// output on the stored input with PyTorch's `out_name`.
template <class Model, std::size_t B, std::size_t N>
void check_fixed(const std::string& case_name, const load_options& o, const char* out_name = "output",
                 double rel = 1e-5, double abs = 1e-6) {
  using T = typename Model::value_type;
  auto model = std::make_unique<Model>();
  const auto r = mha::io::try_load_safetensors(data_file(case_name + ".safetensors"), *model, o);
  INFO(r.message);
  REQUIRE(r.ok());
  const auto io = data_file(case_name + ".io.safetensors");
  const auto x = read_tensor<T>(io, "input");
  const auto expected = read_tensor<T>(io, out_name);
  auto xt = std::make_unique<mha::tensor<T, B, N, Model::d_in>>();
  REQUIRE(x.size() == xt->size);  // static member
  for (std::size_t i = 0; i < x.size(); ++i) xt->elements[i] = x[i];
  const auto y = model->forward(*xt);
  check_close(y, expected, rel, abs);
}

template <class Model>
void check_dynamic(Model model, const std::string& case_name, const load_options& o,
                   std::vector<std::size_t> shape, const char* out_name = "output",
                   double rel = 1e-5, double abs = 1e-6) {
  using T = typename Model::value_type;
  mha::io::load_safetensors(data_file(case_name + ".safetensors"), model, o);
  const auto io = data_file(case_name + ".io.safetensors");
  const auto x = read_tensor<T>(io, "input");
  mha::dynamic::tensor<T> xt(shape);
  REQUIRE(x.size() == xt.size());
  for (std::size_t i = 0; i < x.size(); ++i) xt.data()[i] = x[i];
  const auto y = model.forward(xt);
  check_close(y, read_tensor<T>(io, out_name), rel, abs);
}

/// The fixture `case_name`.safetensors without its __metadata__.
std::string without_metadata(const std::string& case_name) {
  return with_metadata(file_bytes(data_file(case_name + ".safetensors")), nullptr);
}

/// The load_result of `bytes` into a fresh Model, checking that a failed load
/// left the model unchanged.
template <class Model>
mha::io::load_result try_load(const std::string& bytes, const load_options& o = {}) {
  auto m = std::make_unique<Model>();
  const auto before = model_bytes(*m);
  auto r = mha::io::try_load_safetensors_memory(bytes.data(), bytes.size(), *m, o, "blob");
  if (!r.ok()) CHECK(model_bytes(*m) == before);
  return r;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("book CausalAttention with qkv bias", "[io][pytorch][book]") {
  const auto o = opts(checkpoint_format::book);
  check_fixed<mha::causal_attention<float, 4, 5, 7, true>, 2, 6>("book_ca_f32", o);
  check_dynamic(mha::dynamic::causal_attention<float>(4, 5, 7, true), "book_ca_f32", o, {2, 6, 4});
}

TEST_CASE("book MultiHeadAttentionWrapper", "[io][pytorch][book]") {
  const auto o = opts(checkpoint_format::book);
  check_fixed<mha::multi_head_attention_wrapper<float, 5, 3, 6, 3>, 2, 6>("book_wrapper_f32", o);
  check_dynamic(mha::dynamic::multi_head_attention_wrapper<float>(5, 3, 6, 3), "book_wrapper_f32",
                o, {2, 6, 5});
  check_fixed<mha::multi_head_attention_wrapper<float, 3, 2, 4, 2, true>, 1, 3>(
      "book_wrapper_bias_f32", o);
  check_dynamic(mha::dynamic::multi_head_attention_wrapper<float>(3, 2, 4, 2, true),
                "book_wrapper_bias_f32", o, {1, 3, 3});
}

TEST_CASE("book MultiHeadAttention", "[io][pytorch][book]") {
  const auto o = opts(checkpoint_format::book);
  check_fixed<mha::multi_head_attention<float, 6, 8, 9, 4, true>, 3, 7>("book_mha_f32", o);
  check_fixed<mha::fused_multi_head_attention<float, 6, 8, 9, 4, true>, 3, 7>("book_mha_f32", o);
  check_dynamic(mha::dynamic::multi_head_attention<float>(6, 8, 9, 4, true), "book_mha_f32", o,
                {3, 7, 6});
  check_fixed<mha::multi_head_attention<float, 4, 6, 5, 2>, 1, 5>("book_mha_nobias_f32", o);
  check_fixed<mha::fused_multi_head_attention<float, 4, 6, 5, 2>, 1, 5>("book_mha_nobias_f32", o);
  check_dynamic(mha::dynamic::multi_head_attention<float>(4, 6, 5, 2), "book_mha_nobias_f32", o,
                {1, 5, 4});
}

TEST_CASE("book MultiHeadAttention stored as F16 and BF16", "[io][pytorch][book][dtype]") {
  const auto o = opts(checkpoint_format::book);
  for (const char* c : {"book_mha_f16", "book_mha_bf16"}) {
    INFO(c);
    check_fixed<mha::multi_head_attention<float, 6, 8, 9, 4, true>, 3, 7>(c, o);
    check_dynamic(mha::dynamic::multi_head_attention<float>(6, 8, 9, 4, true), c, o, {3, 7, 6});
  }
}

TEST_CASE("book MultiHeadAttention stored as F64", "[io][pytorch][book][dtype]") {
  const auto o = opts(checkpoint_format::book);
  // Into a double model: PyTorch's float64 output.
  check_fixed<mha::multi_head_attention<double, 5, 6, 8, 3, true>, 2, 8>("book_mha_f64", o, "output",
                                                                          1e-12, 1e-13);
  check_dynamic(mha::dynamic::multi_head_attention<double>(5, 6, 8, 3, true), "book_mha_f64", o,
                {2, 8, 5}, "output", 1e-12, 1e-13);
  // Into a float model: weights rounded to nearest float = PyTorch's .float().
  check_fixed<mha::multi_head_attention<float, 5, 6, 8, 3, true>, 2, 8>("book_mha_f64", o,
                                                                         "output_f32");
}

TEST_CASE("torch.nn.MultiheadAttention with a causal mask", "[io][pytorch][pytorch_multihead]") {
  const auto o = opts(checkpoint_format::pytorch_multihead);
  for (const char* c : {"torch_mha_f32", "torch_mha_bf16"}) {
    INFO(c);
    check_fixed<mha::multi_head_attention<float, 8, 8, 6, 2, true>, 2, 6>(c, o);
    check_fixed<mha::fused_multi_head_attention<float, 8, 8, 6, 2, true>, 2, 6>(c, o);
    check_dynamic(mha::dynamic::multi_head_attention<float>(8, 8, 6, 2, true), c, o, {2, 6, 8});
  }
}

namespace {

// The cross-attention fixture (tools/make_safetensors_fixtures.py, cross_cases):
// nn.MultiheadAttention(8, 2, bias=True, kdim=5, vdim=7, batch_first=True),
// query [2][3][8], key [2][6][5], value [2][6][7]; context 6.
using cross_model = mha::multi_head_attention<float, 8, 8, 6, 2, true, mha::attention_mask::none, 5, 7>;
using self_model = mha::multi_head_attention<float, 8, 8, 6, 2, true, mha::attention_mask::none>;
using dyn_cross = mha::dynamic::multi_head_attention<float, mha::attention_mask::none>;
const std::string cross_io = "torch_cross_f32.io.safetensors";

dyn_cross make_dyn_cross(std::size_t kdim = 5, std::size_t vdim = 7) {
  return dyn_cross(8, 8, 6, 2, true, mha::dynamic::kv_dims{kdim, vdim});
}

/// Copies a stored input into a fixed-size tensor of the same element count.
template <class X>
void fill_from(X& x, const std::string& name) {
  const auto v = read_tensor<float>(data_file(cross_io), name);
  REQUIRE(v.size() == x.size);  // static member
  std::copy(v.begin(), v.end(), x.begin());
}

/// The fixed cross model loaded from `bytes` (returned in `keep` when given)
/// and its forward(query, key, value, out, ws) on the fixture's inputs.
mha::tensor<float, 2, 3, 8> cross_fixed_output(const std::string& bytes, const load_options& o,
                                               std::unique_ptr<cross_model>* keep = nullptr) {
  auto m = std::make_unique<cross_model>();
  const auto r = mha::io::try_load_safetensors_memory(bytes.data(), bytes.size(), *m, o);
  INFO(r.message);
  REQUIRE(r.ok());
  CHECK(r.warnings.empty());
  auto q = std::make_unique<mha::tensor<float, 2, 3, 8>>();
  auto k = std::make_unique<mha::tensor<float, 2, 6, 5>>();
  auto v = std::make_unique<mha::tensor<float, 2, 6, 7>>();
  fill_from(*q, "query");
  fill_from(*k, "key");
  fill_from(*v, "value");
  auto ws = std::make_unique<cross_model::cross_workspace<2, 3, 6>>();
  mha::tensor<float, 2, 3, 8> out{};
  m->forward(*q, *k, *v, out, *ws);
  if (keep != nullptr) *keep = std::move(m);
  return out;
}

/// The same for the dynamic twin (mha::dynamic::kv_dims{5, 7}).
mha::dynamic::tensor<float> cross_dynamic_output(const std::string& bytes, const load_options& o) {
  auto m = make_dyn_cross();
  const auto r = mha::io::load_safetensors_memory(bytes.data(), bytes.size(), m, o);
  CHECK(r.warnings.empty());
  const auto in = [](const std::string& name, std::vector<std::size_t> shape) {
    mha::dynamic::tensor<float> t(shape);
    const auto v = read_tensor<float>(data_file(cross_io), name);
    REQUIRE(v.size() == t.size());
    std::copy(v.begin(), v.end(), t.data());
    return t;
  };
  return m.forward(in("query", {2, 3, 8}), in("key", {2, 6, 5}), in("value", {2, 6, 7}));
}

/// Fixed and dynamic outputs against PyTorch's (2e-6, as the other float io
/// tests), and the same bits from both.
void check_cross(const std::string& bytes, const load_options& o) {
  const auto y = cross_fixed_output(bytes, o);
  check_close(y, read_tensor<float>(data_file(cross_io), "output"), 2e-6, 2e-6);
  const auto yd = cross_dynamic_output(bytes, o);
  REQUIRE(yd.shape() == std::vector<std::size_t>{2, 3, 8});
  CHECK(std::equal(y.begin(), y.end(), yd.data(), [](float a, float b) {
    return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
  }));
}

/// The load_result of `bytes` into a dynamic model, checking that a failed
/// load left its parameters unchanged.
mha::io::load_result try_load_dynamic(dyn_cross m, const std::string& bytes, const load_options& o) {
  mha::for_each_parameter(m, [](std::string_view, auto& t) { std::fill(t.data(), t.data() + t.size(), 0.5f); });
  auto r = mha::io::try_load_safetensors_memory(bytes.data(), bytes.size(), m, o, "blob");
  if (!r.ok())
    mha::for_each_parameter(m, [](std::string_view name, auto& t) {
      INFO(std::string(name));
      CHECK(std::all_of(t.data(), t.data() + t.size(), [](float x) { return x == 0.5f; }));
    });
  return r;
}

/// A book-named self-attention checkpoint of the fixture's sizes (d_in =
/// kdim = vdim = 8, qkv bias), values 0.25.
std::string book_self_attention_file() {
  std::vector<f_tensor> t;
  for (const char* p : {"W_query", "W_key", "W_value", "out_proj"}) {
    t.push_back({std::string(p) + ".weight", {8, 8}, std::vector<double>(64, 0.25)});
    t.push_back({std::string(p) + ".bias", {8}, std::vector<double>(8, 0.25)});
  }
  return make_safetensors(t, "F32");
}

}  // namespace

TEST_CASE("torch.nn.MultiheadAttention with kdim / vdim (cross-attention)",
          "[io][pytorch][pytorch_multihead][cross]") {
  const auto file = file_bytes_string(data_file("torch_cross_f32.safetensors"));
  check_cross(file, opts(checkpoint_format::pytorch_multihead));
  // detect: from the metadata, and from the names (q_proj_weight) without it
  check_cross(file, {});
  auto bare = opts(checkpoint_format::detect);
  bare.expected_num_heads = 2;
  check_cross(without_metadata("torch_cross_f32"), bare);
  // in_proj_bias is split into the three biases, the weights copied as they are
  std::unique_ptr<cross_model> m;
  cross_fixed_output(file, {}, &m);
  const auto bias = read_tensor<float>(data_file("torch_cross_f32.safetensors"), "in_proj_bias");
  const auto kw = read_tensor<float>(data_file("torch_cross_f32.safetensors"), "k_proj_weight");
  REQUIRE(bias.size() == 24);
  CHECK(std::equal(m->w_query.bias.begin(), m->w_query.bias.end(), bias.begin()));
  CHECK(std::equal(m->w_key.bias.begin(), m->w_key.bias.end(), bias.begin() + 8));
  CHECK(std::equal(m->w_value.bias.begin(), m->w_value.bias.end(), bias.begin() + 16));
  CHECK(std::equal(m->w_key.weight.begin(), m->w_key.weight.end(), kw.begin(), kw.end()));
}

TEST_CASE("a cross-attention module from the book's names (W_key [8][5], W_value [8][7])",
          "[io][pytorch][book][cross]") {
  const auto book = file_bytes_string(data_file("torch_cross_book_f32.safetensors"));
  check_cross(book, opts(checkpoint_format::book));
  check_cross(book, {});  // detect: the metadata says book
  // the same model as from PyTorch's own names
  std::unique_ptr<cross_model> from_book, from_torch;
  cross_fixed_output(book, {}, &from_book);
  cross_fixed_output(file_bytes_string(data_file("torch_cross_f32.safetensors")), {}, &from_torch);
  CHECK(model_bytes(*from_book) == model_bytes(*from_torch));
}

TEST_CASE("cross-attention and self-attention checkpoints do not load into each other's models",
          "[io][pytorch_multihead][cross]") {
  using mha::io::load_errc;
  const auto cross_file = file_bytes_string(data_file("torch_cross_f32.safetensors"));
  auto no_meta = opts(checkpoint_format::pytorch_multihead);
  no_meta.ignore_metadata = true;
  SECTION("PyTorch's kdim / vdim state_dict into a model with kdim = vdim = d_in") {
    // the recorded kdim
    auto r = try_load<self_model>(cross_file, opts(checkpoint_format::pytorch_multihead));
    INFO(r.message);
    CHECK(r.code == load_errc::hyperparameter);
    CHECK(contains(r.message, "'kdim' is 5 in the file, expected 8"));
    // without the metadata: the separate projections are named
    r = try_load<self_model>(cross_file, no_meta);
    INFO(r.message);
    CHECK(r.code == load_errc::shape);
    CHECK(r.tensor == "k_proj_weight");
    CHECK(contains(r.message, "present in the file (F32 [8][5])"));
    CHECK(contains(r.message, "d_in = kdim = vdim = 8"));
    CHECK(contains(r.message, "in_proj_weight [24][8]"));
    const auto rd = try_load_dynamic(make_dyn_cross(8, 8), cross_file, no_meta);
    CHECK(rd.code == load_errc::shape);
    CHECK(rd.tensor == "k_proj_weight");
  }
  SECTION("PyTorch's in_proj_weight state_dict into a kdim / vdim model") {
    const auto self_file = file_bytes_string(data_file("torch_mha_f32.safetensors"));
    for (const auto& o : {opts(checkpoint_format::pytorch_multihead), load_options{}, no_meta}) {
      const auto r = try_load<cross_model>(self_file, o);
      INFO(r.message);
      CHECK(r.code == load_errc::shape);
      CHECK(r.tensor == "in_proj_weight");
      CHECK(contains(r.message, "present in the file (F32 [24][8])"));
      CHECK(contains(r.message, "d_in = 8, kdim = 5, vdim = 7"));
      CHECK(contains(r.message, "k_proj_weight [8][5] and v_proj_weight [8][7]"));
    }
    const auto rd = try_load_dynamic(make_dyn_cross(), self_file, no_meta);
    CHECK(rd.code == load_errc::shape);
    CHECK(rd.tensor == "in_proj_weight");
  }
  SECTION("book names: the widths of W_key / W_value") {
    auto o = opts(checkpoint_format::book);
    o.ignore_metadata = true;
    // a kdim / vdim checkpoint into a self-attention model
    const auto book = file_bytes_string(data_file("torch_cross_book_f32.safetensors"));
    auto r = try_load<self_model>(book, o);
    INFO(r.message);
    CHECK(r.code == load_errc::shape);
    CHECK(r.tensor == "W_key.weight");
    CHECK(contains(r.message, "shape [8][5] in the file, expected [8][8]"));
    CHECK(contains(r.message, "its 5 columns are the checkpoint's key input width (kdim), the model's kdim is 8 (= d_in)"));
    // a self-attention checkpoint into a kdim / vdim model
    r = try_load<cross_model>(book_self_attention_file(), o);
    INFO(r.message);
    CHECK(r.code == load_errc::shape);
    CHECK(r.tensor == "W_key.weight");
    CHECK(contains(r.message, "shape [8][8] in the file, expected [8][5]"));
    CHECK(contains(r.message, "(d_in 8, kdim 5, vdim 7, d_out 8)"));
    const auto rd = try_load_dynamic(make_dyn_cross(5, 8), book_self_attention_file(), o);
    CHECK(rd.code == load_errc::shape);
    CHECK(rd.tensor == "W_key.weight");
    // the value width alone
    const auto rv = try_load_dynamic(make_dyn_cross(8, 7), book_self_attention_file(), o);
    INFO(rv.message);
    CHECK(rv.code == load_errc::shape);
    CHECK(rv.tensor == "W_value.weight");
    CHECK(contains(rv.message, "its 8 columns are the checkpoint's value input width (vdim), the model's vdim is 7"));
  }
  SECTION("gpt2, neox and llama have no kdim / vdim layout") {
    const auto bare = without_metadata("torch_cross_f32");
    for (const auto f : {checkpoint_format::gpt2, checkpoint_format::neox, checkpoint_format::llama}) {
      auto o = opts(f);
      if (f == checkpoint_format::neox) o.layout = mha::io::qkv_layout::contiguous;
      const auto r = try_load<cross_model>(bare, o);
      INFO(r.message);
      CHECK(r.code == load_errc::model);
      CHECK(contains(r.message, std::string("checkpoint_format::") + mha::io::to_string(f) +
                                    " has no layout for key / value inputs of their own widths"));
      CHECK(contains(r.message, "d_in = 8, kdim = 5, vdim = 7"));
      const auto rd = try_load_dynamic(make_dyn_cross(), bare, o);
      CHECK(rd.code == load_errc::model);
    }
  }
  SECTION("qkv_layout::interleaved_per_head for the separate projections") {
    auto o = no_meta;
    o.layout = mha::io::qkv_layout::interleaved_per_head;
    const auto r = try_load<cross_model>(cross_file, o);
    INFO(r.message);
    CHECK(r.code == load_errc::layout);
  }
  SECTION("qkv bias: the file has in_proj_bias, the model not") {
    using no_bias = mha::multi_head_attention<float, 8, 8, 6, 2, false, mha::attention_mask::none, 5, 7>;
    const auto r = try_load<no_bias>(cross_file, no_meta);
    INFO(r.message);
    CHECK(r.code == load_errc::qkv_bias);
    CHECK(r.tensor == "in_proj_bias");
  }
}

TEST_CASE("a dynamic model whose layers were replaced is refused, not written out of bounds",
          "[io][dynamic]") {
  using mha::io::load_errc;
  using dyn = mha::dynamic::multi_head_attention<float>;
  using lin = mha::dynamic::linear<float>;
  // (found by an adversarial trial: the packed plans sized their copies from
  // d_in/d_out, so a smaller layer was overrun and a layer without bias was a
  // null store)
  const auto torch = file_bytes(data_file("torch_mha_f32.safetensors"));
  const auto book = file_bytes(data_file("book_mha_f32.safetensors"));
  const auto load = [](const std::vector<unsigned char>& f, dyn& m) {
    return mha::io::try_load_safetensors_memory(f.data(), f.size(), m);  // format detected
  };
  const auto same_parameters = [](const dyn& a, const dyn& b) {
    std::vector<float> pa, pb;
    mha::for_each_parameter(a, [&](std::string_view, const auto& t) { pa.insert(pa.end(), t.begin(), t.end()); });
    mha::for_each_parameter(b, [&](std::string_view, const auto& t) { pb.insert(pb.end(), t.begin(), t.end()); });
    return pa == pb;
  };
  {
    dyn m(8, 8, 6, 2, true);
    m.w_query = lin(1, 1, true);  // smaller than d_out x d_in
    const dyn before = m;
    const auto r = load(torch, m);
    CHECK(r.code == load_errc::model);
    CHECK_THAT(r.message, Catch::Matchers::Contains("w_query is linear(1, 1, bias), expected linear(8, 8, bias)"));
    CHECK(same_parameters(m, before));
  }
  {
    dyn m(8, 8, 6, 2, true);
    m.w_key = lin(8, 8, false);  // no bias in a qkv_bias = true model
    const auto r = load(torch, m);
    CHECK(r.code == load_errc::model);
    CHECK_THAT(r.message, Catch::Matchers::Contains("w_key"));
  }
  {
    dyn m(8, 8, 6, 2, true);
    m.out_proj = lin(8, 8, false);  // out_proj always has a bias
    CHECK(load(torch, m).code == load_errc::model);
  }
  {
    // book format: the plan follows the walked shapes, but the model is
    // inconsistent (its forward would throw), so the load is refused too
    dyn m(6, 8, 9, 4, true);
    m.w_key = lin(5, 7, true);
    const dyn before = m;
    const auto r = load(book, m);
    CHECK(r.code == load_errc::model);
    CHECK_THAT(r.message, Catch::Matchers::Contains("w_key is linear(5, 7, bias), expected linear(6, 8, bias)"));
    CHECK(same_parameters(m, before));
    // a bias given to a layer of a qkv_bias = false model
    dyn nb(6, 8, 9, 4, false);
    nb.w_query = lin(6, 8, true);
    CHECK(load(book, nb).code == load_errc::model);
  }
}

TEST_CASE("GPT-2 attention (Conv1D layout) under a prefix", "[io][pytorch][gpt2]") {
  const auto o = opts(checkpoint_format::gpt2, "h.0.attn.");
  for (const char* c : {"gpt2_f32", "gpt2_f16"}) {
    INFO(c);
    check_fixed<mha::multi_head_attention<float, 12, 12, 10, 3, true>, 2, 8>(c, o);
    check_fixed<mha::fused_multi_head_attention<float, 12, 12, 10, 3, true>, 2, 8>(c, o);
    check_dynamic(mha::dynamic::multi_head_attention<float>(12, 12, 10, 3, true), c, o, {2, 8, 12});
  }
}

TEST_CASE("the throwing overload with (format, prefix) arguments", "[io]") {
  mha::multi_head_attention<float, 12, 12, 10, 3, true> m{};
  REQUIRE_NOTHROW(mha::io::load_safetensors(data_file("gpt2_f32.safetensors"), m,
                                            checkpoint_format::gpt2, "h.0.attn."));
  // c_attn.weight is [in][3E] (Conv1D): W_query[o][i] = c_attn[i][o].
  const auto c_attn = read_tensor<float>(data_file("gpt2_f32.safetensors"), "h.0.attn.c_attn.weight");
  CHECK(m.w_query.weight(1, 2) == c_attn[2 * 36 + 1]);
  CHECK(m.w_key.weight(0, 5) == c_attn[5 * 36 + 12 + 0]);
  CHECK(m.w_value.weight(11, 0) == c_attn[0 * 36 + 24 + 11]);
}

TEST_CASE("F16, BF16 and F64 conversions match PyTorch's", "[io][dtype]") {
  const auto f = data_file("dtypes.safetensors");
  for (const auto& [src, ref] : {std::pair{"f16", "f16_as_f32"}, std::pair{"bf16", "bf16_as_f32"},
                                 std::pair{"f64", "f64_as_f32"}}) {
    INFO(src);
    const auto ours = read_tensor<float>(f, src);
    const auto torch = read_tensor<float>(f, ref);
    REQUIRE(ours.size() == torch.size());
    for (std::size_t i = 0; i < ours.size(); ++i) {
      INFO("element " << i);
      if (std::isnan(torch[i])) {
        CHECK(std::isnan(ours[i]));
      } else {
        CHECK(std::bit_cast<std::uint32_t>(ours[i]) == std::bit_cast<std::uint32_t>(torch[i]));
      }
    }
    // To double the conversion is exact: equal to the float value widened.
    const auto ours64 = read_tensor<double>(f, src);
    if (std::string(src) != "f64")
      for (std::size_t i = 0; i < ours.size(); ++i)
        if (!std::isnan(torch[i])) CHECK(ours64[i] == static_cast<double>(torch[i]));
  }
}

// ---------------------------------------------------------------- head count (issue 11, defect 8)

TEST_CASE("a 4-head checkpoint into an 8-head model fails when the file records num_heads",
          "[io][hyperparameters]") {
  // book_mha_f32: MultiHeadAttention(6, 8, 9, num_heads=4); its __metadata__
  // says num_heads = 4. The same d_in/d_out with 8 heads has the same tensor
  // shapes: before the check this loaded and gave 0.29 relative error.
  const auto file = data_file("book_mha_f32.safetensors");
  using eight = mha::multi_head_attention<float, 6, 8, 9, 8, true>;
  auto m = std::make_unique<eight>();
  const auto before = model_bytes(*m);
  const auto r = mha::io::try_load_safetensors(file, *m);
  INFO(r.message);
  CHECK(r.code == mha::io::load_errc::hyperparameter);
  CHECK(contains(r.message, file.string()));
  CHECK(contains(r.message, "__metadata__ 'num_heads' is 4 in the file, expected 8"));
  CHECK(contains(r.message, "mha::multi_head_attention"));
  CHECK(model_bytes(*m) == before);
  CHECK(try_load<mha::fused_multi_head_attention<float, 6, 8, 9, 8, true>>(
            file_bytes_string(file)).code == mha::io::load_errc::hyperparameter);
  mha::dynamic::multi_head_attention<float> dyn(6, 8, 9, 8, true);
  try {
    mha::io::load_safetensors(file, dyn);
    FAIL("no load_error");
  } catch (const mha::io::load_error& e) {
    CHECK(e.code() == mha::io::load_errc::hyperparameter);
    CHECK(contains(e.what(), "'num_heads' is 4 in the file, expected 8"));
  }
  // ignore_metadata skips the check (and then warns).
  load_options ignore;
  ignore.ignore_metadata = true;
  const auto ri = try_load<eight>(file_bytes_string(file), ignore);
  CHECK(ri.ok());
  REQUIRE(ri.warnings.size() == 1);
  CHECK(contains(ri.warnings[0], "head count is not verified"));
}

TEST_CASE("a 4-head checkpoint without metadata: load_options::expected_num_heads",
          "[io][hyperparameters]") {
  const std::string bare = without_metadata("book_mha_f32");
  using eight = mha::multi_head_attention<float, 6, 8, 9, 8, true>;
  // Nothing to check against: loads, and says so in a warning.
  const auto r = try_load<eight>(bare);
  CHECK(r.ok());
  REQUIRE(r.warnings.size() == 1);
  CHECK(contains(r.warnings[0], "mha::io: blob: warning: the checkpoint's head count is not verified"));
  CHECK(contains(r.warnings[0], "num_heads = 8"));
  // With the head count the user knows: an error.
  load_options o;
  o.expected_num_heads = 4;
  const auto r2 = try_load<eight>(bare, o);
  INFO(r2.message);
  CHECK(r2.code == mha::io::load_errc::hyperparameter);
  CHECK(contains(r2.message, "load_options::expected_num_heads is 4, but the model "
                             "(mha::multi_head_attention) has num_heads = 8"));
  CHECK(try_load<mha::fused_multi_head_attention<float, 6, 8, 9, 8, true>>(bare, o).code ==
        mha::io::load_errc::hyperparameter);
  mha::dynamic::multi_head_attention<float> dyn(6, 8, 9, 8, true);
  CHECK(mha::io::try_load_safetensors_memory(bare.data(), bare.size(), dyn, o).code ==
        mha::io::load_errc::hyperparameter);
}

TEST_CASE("head counts that agree load, and reproduce PyTorch", "[io][hyperparameters]") {
  using four = mha::multi_head_attention<float, 6, 8, 9, 4, true>;
  const auto io = data_file("book_mha_f32.io.safetensors");
  const auto expected = read_tensor<float>(io, "output");
  // Metadata present and equal: no warning.
  const auto with = file_bytes_string(data_file("book_mha_f32.safetensors"));
  const auto r = try_load<four>(with);
  CHECK(r.ok());
  CHECK(r.warnings.empty());
  check_close(fixed_output<four, 3, 7>(with, "book_mha_f32", {}), expected);
  // No metadata, expected_num_heads given and equal: no warning.
  load_options o;
  o.expected_num_heads = 4;
  const auto bare = without_metadata("book_mha_f32");
  const auto r2 = try_load<four>(bare, o);
  CHECK(r2.ok());
  CHECK(r2.warnings.empty());
  check_close(fixed_output<four, 3, 7>(bare, "book_mha_f32", o), expected);
  // The throwing API returns the same warnings.
  mha::dynamic::multi_head_attention<float> dyn(6, 8, 9, 4, true);
  CHECK(mha::io::load_safetensors_memory(bare.data(), bare.size(), dyn).warnings.size() == 1);
  CHECK(mha::io::load_safetensors_memory(bare.data(), bare.size(), dyn, o).warnings.empty());
  // The wrapper's and the single head's head counts are checked too.
  CHECK(try_load<mha::multi_head_attention_wrapper<float, 5, 3, 6, 3>>(
            file_bytes_string(data_file("book_wrapper_f32.safetensors"))).warnings.empty());
  o.expected_num_heads = 2;
  CHECK(try_load<mha::multi_head_attention_wrapper<float, 5, 3, 6, 3>>(
            file_bytes_string(data_file("book_wrapper_f32.safetensors")), o).code ==
        mha::io::load_errc::hyperparameter);
  // Without metadata, a 3-head file into a 2-head wrapper: the extra head's
  // tensor is unexpected, and the message counts the heads of both.
  const auto w2 = try_load<mha::multi_head_attention_wrapper<float, 5, 3, 6, 2>>(
      without_metadata("book_wrapper_f32"));
  CHECK(w2.code == mha::io::load_errc::unexpected_tensor);
  CHECK_THAT(w2.message, Catch::Matchers::Contains("unexpected tensor") &&
                             Catch::Matchers::Contains("the file has 3 heads (heads.0 .. heads.2), "
                                                       "the model num_heads = 2"));
}

TEST_CASE("the other recorded hyperparameters are checked", "[io][hyperparameters]") {
  using mha::io::load_errc;
  // context_length: no weight depends on it, so another context loads; a
  // longer one than the checkpoint's (10) is reported as a warning.
  const auto gpt2 = file_bytes_string(data_file("gpt2_f32.safetensors"));
  load_options g;
  g.format = checkpoint_format::gpt2;
  g.prefix = "h.0.attn.";
  auto r = try_load<mha::multi_head_attention<float, 12, 12, 16, 3, true>>(gpt2, g);
  CHECK(r.ok());
  REQUIRE(r.warnings.size() == 1);
  CHECK(contains(r.warnings[0], "__metadata__ 'context_length' is 10 in the file, the model's is 16"));
  r = try_load<mha::multi_head_attention<float, 12, 12, 4, 3, true>>(gpt2, g);
  CHECK(r.ok());
  CHECK(r.warnings.empty());
  // checkpoint_format against load_options::format.
  load_options t;
  t.format = checkpoint_format::pytorch_multihead;
  t.prefix = "h.0.attn.";
  r = try_load<mha::multi_head_attention<float, 12, 12, 10, 3, true>>(gpt2, t);
  CHECK(r.code == load_errc::hyperparameter);
  CHECK(contains(r.message, "'checkpoint_format' is gpt2 in the file, expected pytorch_multihead "
                            "(load_options::format)"));
  // qkv_bias (before the tensors are looked at).
  r = try_load<mha::multi_head_attention<float, 6, 8, 9, 4, false>>(
      file_bytes_string(data_file("book_mha_f32.safetensors")));
  CHECK(r.code == load_errc::hyperparameter);
  CHECK(contains(r.message, "'qkv_bias' is true in the file, expected false"));
  // Unreadable values name the key and the value.
  const auto base = file_bytes(data_file("book_mha_f32.safetensors"));
  for (const auto& [key, value, needle] :
       {std::tuple<std::string, std::string, std::string>{"num_heads", "four", "not a non-negative integer"},
        {"num_heads", "-4", "not a non-negative integer"},
        {"num_heads", "", "not a non-negative integer"},
        {"d_in", "99999999999999999999999", "not a non-negative integer"},
        {"context_length", "ten", "not a non-negative integer"},
        {"qkv_bias", "yes", "not true or false"},
        {"qkv_layout", "interleaved", "not contiguous or interleaved_per_head"}}) {
    INFO(key << " = " << value);
    const auto bytes = with_metadata(base, {{key, value}});
    r = try_load<mha::multi_head_attention<float, 6, 8, 9, 4, true>>(bytes);
    CHECK(r.code == load_errc::hyperparameter);
    CHECK(contains(r.message, "__metadata__ '" + key + "' is \"" + value + "\", " + needle));
  }
  // Keys it does not know are ignored; the values it knows may be "True"/"1".
  r = try_load<mha::multi_head_attention<float, 6, 8, 9, 4, true>>(
      with_metadata(base, {{"format", "pt"}, {"qkv_bias", "True"}, {"num_heads", "4"}, {"author", "x"}}));
  CHECK(r.ok());
}

// ---------------------------------------------------------------- NeoX / Megatron fused QKV (defect 10)

namespace {

load_options neox_opts(mha::io::qkv_layout layout = mha::io::qkv_layout::unspecified) {
  load_options o;
  o.format = checkpoint_format::neox;
  o.prefix = "gpt_neox.layers.0.attention.";
  o.layout = layout;
  return o;
}

}  // namespace

TEST_CASE("GPT-NeoX attention (per-head interleaved query_key_value) reproduces PyTorch",
          "[io][pytorch][neox]") {
  // The layout comes from the file's __metadata__ (qkv_layout = interleaved_per_head).
  const auto o = neox_opts();
  check_fixed<mha::multi_head_attention<float, 12, 12, 8, 3, true>, 2, 7>("neox_f32", o, "output",
                                                                          2e-6, 1e-7);
  check_fixed<mha::fused_multi_head_attention<float, 12, 12, 8, 3, true>, 2, 7>("neox_f32", o,
                                                                                "output", 2e-6, 1e-7);
  check_dynamic(mha::dynamic::multi_head_attention<float>(12, 12, 8, 3, true), "neox_f32", o,
                {2, 7, 12}, "output", 2e-6, 1e-7);
  // Given explicitly: the same.
  const auto oi = neox_opts(mha::io::qkv_layout::interleaved_per_head);
  check_fixed<mha::multi_head_attention<float, 12, 12, 8, 3, true>, 2, 7>("neox_f32", oi, "output",
                                                                          2e-6, 1e-7);
  // Double: PyTorch's float64 output.
  check_fixed<mha::multi_head_attention<double, 12, 12, 8, 3, true>, 2, 7>("neox_f64", o, "output",
                                                                           1e-12, 1e-13);
  check_fixed<mha::fused_multi_head_attention<double, 12, 12, 8, 3, true>, 2, 7>(
      "neox_f64", o, "output", 1e-12, 1e-13);
  check_dynamic(mha::dynamic::multi_head_attention<double>(12, 12, 8, 3, true), "neox_f64", o,
                {2, 7, 12}, "output", 1e-12, 1e-13);
}

TEST_CASE("a NeoX checkpoint never loads with an assumed layout", "[io][neox]") {
  using model = mha::multi_head_attention<float, 12, 12, 8, 3, true>;
  using mha::io::load_errc;
  using mha::io::qkv_layout;
  const std::string bare = without_metadata("neox_f32");
  // Neither recorded nor given: an error naming the tensor and both choices.
  auto r = try_load<model>(bare, neox_opts());
  INFO(r.message);
  CHECK(r.code == load_errc::layout);
  CHECK(r.tensor == "gpt_neox.layers.0.attention.query_key_value.weight");
  CHECK(contains(r.message, "qkv_layout::interleaved_per_head"));
  CHECK(contains(r.message, "qkv_layout::contiguous"));
  CHECK(try_load<mha::fused_multi_head_attention<float, 12, 12, 8, 3, true>>(bare, neox_opts()).code ==
        load_errc::layout);
  // Given: loads and reproduces PyTorch.
  const auto expected = read_tensor<float>(data_file("neox_f32.io.safetensors"), "output");
  check_close(fixed_output<model, 2, 7>(bare, "neox_f32", neox_opts(qkv_layout::interleaved_per_head)),
              expected, 2e-6, 1e-7);
  // The wrong layout, given explicitly, loads (the user asked for it) and is
  // wrong: what a silently assumed layout would give.
  const auto wrong = fixed_output<model, 2, 7>(bare, "neox_f32", neox_opts(qkv_layout::contiguous));
  double worst = 0;
  for (std::size_t i = 0; i < wrong.size(); ++i)
    worst = std::max(worst, std::abs(wrong[i] - expected[i]) / (std::abs(expected[i]) + 1e-3));
  CHECK(worst > 0.1);
  // Given and recorded, but different: an error naming both.
  r = try_load<model>(file_bytes_string(data_file("neox_f32.safetensors")),
                      neox_opts(qkv_layout::contiguous));
  CHECK(r.code == load_errc::hyperparameter);
  CHECK(contains(r.message, "'qkv_layout' is interleaved_per_head in the file, expected contiguous "
                            "(load_options::layout)"));
  // Not a packed model, or a format without a fused weight.
  CHECK(try_load<mha::multi_head_attention_wrapper<float, 12, 4, 8, 3, true>>(bare, neox_opts()).code ==
        load_errc::model);
  load_options book;
  book.layout = qkv_layout::interleaved_per_head;
  CHECK(try_load<mha::multi_head_attention<float, 6, 8, 9, 4, true>>(
            file_bytes_string(data_file("book_mha_f32.safetensors")), book).code == load_errc::layout);
}

TEST_CASE("rotary embeddings in a NeoX checkpoint are an error", "[io][neox]") {
  // The NeoX attention tensors plus a rotary_emb.inv_freq tensor (GPT-NeoX with rotary_pct > 0 saves it).
  const std::string p = "gpt_neox.layers.0.attention.";
  std::vector<f_tensor> ts;
  for (const char* n : {"query_key_value.weight", "query_key_value.bias", "dense.weight", "dense.bias"}) {
    const auto v = read_tensor<double>(data_file("neox_f32.safetensors"), p + n);
    const bool w = std::string(n).find("weight") != std::string::npos;
    const std::size_t rows = std::string(n).find("query") != std::string::npos ? 36 : 12;
    ts.push_back({p + n, w ? std::vector<std::size_t>{rows, 12} : std::vector<std::size_t>{rows}, v});
  }
  ts.push_back({p + "rotary_emb.inv_freq", {2}, {1.0, 0.01}});
  load_options o = neox_opts(mha::io::qkv_layout::interleaved_per_head);
  o.allow_extra_tensors = true;
  const auto r = try_load<mha::multi_head_attention<float, 12, 12, 8, 3, true>>(
      make_safetensors(ts, "F32"), o);
  INFO(r.message);
  CHECK(r.code == mha::io::load_errc::unexpected_tensor);
  CHECK(r.tensor == p + "rotary_emb.inv_freq");
  CHECK(contains(r.message, "rotary position embeddings"));
  ts.pop_back();
  CHECK(try_load<mha::multi_head_attention<float, 12, 12, 8, 3, true>>(make_safetensors(ts, "F32"), o)
            .ok());
}

TEST_CASE("interleaved_per_head in the other fused formats (transposed Conv1D too)", "[io][neox]") {
  // The NeoX weights renamed: in_proj_weight (nn.Linear layout) and GPT-2's
  // c_attn (Conv1D, transposed), with the per-head interleaved order, reproduce
  // the NeoX output when the layout is given.
  const auto f = data_file("neox_f32.safetensors");
  const std::string p = "gpt_neox.layers.0.attention.";
  const auto qkv_w = read_tensor<double>(f, p + "query_key_value.weight");  // [36][12]
  const auto qkv_b = read_tensor<double>(f, p + "query_key_value.bias");
  const auto dense_w = read_tensor<double>(f, p + "dense.weight");  // [12][12]
  const auto dense_b = read_tensor<double>(f, p + "dense.bias");
  const auto transpose = [](const std::vector<double>& v, std::size_t rows, std::size_t cols) {
    std::vector<double> t(v.size());
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) t[c * rows + r] = v[r * cols + c];
    return t;
  };
  const auto expected = read_tensor<float>(data_file("neox_f32.io.safetensors"), "output");
  using split = mha::multi_head_attention<float, 12, 12, 8, 3, true>;
  using fused = mha::fused_multi_head_attention<float, 12, 12, 8, 3, true>;
  load_options o;
  o.layout = mha::io::qkv_layout::interleaved_per_head;
  o.format = checkpoint_format::pytorch_multihead;
  const auto torch_file = make_safetensors({{"in_proj_weight", {36, 12}, qkv_w},
                                            {"in_proj_bias", {36}, qkv_b},
                                            {"out_proj.weight", {12, 12}, dense_w},
                                            {"out_proj.bias", {12}, dense_b}},
                                           "F32");
  check_close(fixed_output<split, 2, 7>(torch_file, "neox_f32", o), expected, 2e-6, 1e-7);
  check_close(fixed_output<fused, 2, 7>(torch_file, "neox_f32", o), expected, 2e-6, 1e-7);
  o.format = checkpoint_format::gpt2;
  const auto gpt2_file = make_safetensors({{"c_attn.weight", {12, 36}, transpose(qkv_w, 36, 12)},
                                           {"c_attn.bias", {36}, qkv_b},
                                           {"c_proj.weight", {12, 12}, transpose(dense_w, 12, 12)},
                                           {"c_proj.bias", {12}, dense_b}},
                                          "F32");
  check_close(fixed_output<split, 2, 7>(gpt2_file, "neox_f32", o), expected, 2e-6, 1e-7);
  check_close(fixed_output<fused, 2, 7>(gpt2_file, "neox_f32", o), expected, 2e-6, 1e-7);
  mha::dynamic::multi_head_attention<float> dyn(12, 12, 8, 3, true);
  REQUIRE(mha::io::try_load_safetensors_memory(gpt2_file.data(), gpt2_file.size(), dyn, o).ok());
  const auto x = read_tensor<float>(data_file("neox_f32.io.safetensors"), "input");
  mha::dynamic::tensor<float> xt({2, 7, 12});
  std::copy(x.begin(), x.end(), xt.begin());
  check_close(dyn.forward(xt), expected, 2e-6, 1e-7);
}

namespace {
/// A module the loader has never heard of: the book's MultiHeadAttention
/// written as four mha::linear members and a description.
template <std::size_t DIn, std::size_t DOut, std::size_t Ctx, std::size_t Heads>
struct user_attention {
  using value_type = float;
  static constexpr std::size_t d_in = DIn, d_out = DOut, context_length = Ctx, num_heads = Heads;
  static constexpr bool qkv_bias = true;
  mha::linear<float, DIn, DOut> q, k, v;
  mha::linear<float, DOut, DOut> o;
  static constexpr auto parameter_description() noexcept {
    using mha::detail::member;
    return mha::detail::describe(BOOST_HANA_STRING("user_attention"),
                                 member(BOOST_HANA_STRING("W_query"), &user_attention::q),
                                 member(BOOST_HANA_STRING("W_key"), &user_attention::k),
                                 member(BOOST_HANA_STRING("W_value"), &user_attention::v),
                                 member(BOOST_HANA_STRING("out_proj"), &user_attention::o),
                                 mha::detail::buffer(BOOST_HANA_STRING("mask")));
  }
};

/// Loads `file` into U and into the library module M; their walks must agree value for value.
template <class U, class M>
void check_user_module(const char* file, mha::io::checkpoint_format format) {
  const auto path = data_file(file);
  mha::io::load_options o;
  o.format = format;
  o.expected_num_heads = U::num_heads;
  auto u = std::make_unique<U>();
  auto m = std::make_unique<M>();
  const auto ru = mha::io::try_load_safetensors(path, *u, o);
  INFO(ru.message);
  REQUIRE(ru.ok());
  REQUIRE(mha::io::try_load_safetensors(path, *m, o).ok());
  std::vector<float> a, b;
  mha::for_each_parameter(*u, [&](std::string_view, const auto& t) { a.insert(a.end(), t.begin(), t.end()); });
  mha::for_each_parameter(*m, [&](std::string_view, const auto& t) { b.insert(b.end(), t.begin(), t.end()); });
  CHECK(a.size() == M::parameter_count);
  CHECK(a == b);
  // Its errors name it like the library's modules.
  mha::io::load_options wrong = o;
  wrong.expected_num_heads = U::num_heads + 1;
  const auto r = mha::io::try_load_safetensors(path, *u, wrong);
  CHECK(r.message.find("user_attention") != std::string::npos);
}
}  // namespace

TEST_CASE("a module with a description loads from safetensors without a loader change",
          "[io][parameters]") {
  check_user_module<user_attention<6, 8, 9, 4>, mha::multi_head_attention<float, 6, 8, 9, 4, true>>(
      "book_mha_f32.safetensors", mha::io::checkpoint_format::book);
}

TEST_CASE("checkpoint_format::detect, the default, takes the format from the metadata or the names",
          "[io][detect]") {
  using model = mha::multi_head_attention<float, 8, 8, 6, 2, true>;
  using mha::io::load_errc;
  const load_options detect{};  // the default options
  REQUIRE(detect.format == checkpoint_format::detect);
  // nn.MultiheadAttention: recorded in __metadata__, and without it from in_proj_weight.
  check_fixed<model, 2, 6>("torch_mha_f32", detect);
  const auto expected = read_tensor<float>(data_file("torch_mha_f32.io.safetensors"), "output");
  check_close(fixed_output<model, 2, 6>(without_metadata("torch_mha_f32"), "torch_mha_f32", detect),
              expected, 1e-5, 1e-6);
  // GPT-2 under a prefix (c_attn.weight), GPT-NeoX (query_key_value.weight), the book's names.
  check_fixed<mha::multi_head_attention<float, 12, 12, 10, 3, true>, 2, 8>(
      "gpt2_f32", opts(checkpoint_format::detect, "h.0.attn."));
  {
    mha::multi_head_attention<float, 12, 12, 10, 3, true> m{};
    REQUIRE_NOTHROW(mha::io::load_safetensors(data_file("gpt2_f32.safetensors"), m,
                                              checkpoint_format::detect, "h.0.attn."));
  }
  load_options neox = neox_opts(mha::io::qkv_layout::interleaved_per_head);
  neox.format = checkpoint_format::detect;
  check_close(fixed_output<mha::multi_head_attention<float, 12, 12, 8, 3, true>, 2, 7>(
                  without_metadata("neox_f32"), "neox_f32", neox),
              read_tensor<float>(data_file("neox_f32.io.safetensors"), "output"), 2e-6, 1e-7);
  check_fixed<mha::multi_head_attention<float, 6, 8, 9, 4, true>, 3, 7>("book_mha_f32", detect);
  // A format given that the file's names do not fit: the error says which one does.
  const auto r = try_load<model>(without_metadata("torch_mha_f32"), opts(checkpoint_format::book));
  INFO(r.message);
  CHECK(r.code == load_errc::missing_tensor);
  CHECK(r.tensor == "W_query.weight");
  CHECK(contains(r.message, "missing from the file (checkpoint_format book, no prefix); the file's "
                            "tensor names fit checkpoint_format pytorch_multihead ('in_proj_weight')"));
  const auto g = try_load<mha::multi_head_attention<float, 12, 12, 10, 3, true>>(
      without_metadata("gpt2_f32"), opts(checkpoint_format::pytorch_multihead, "h.0.attn."));
  CHECK(contains(g.message, "fit checkpoint_format gpt2 ('h.0.attn.c_attn.weight')"));
  // Where a detected format came from, and an unknown recorded format.
  const auto book_bytes = file_bytes(data_file("book_mha_f32.safetensors"));
  using book_model = mha::multi_head_attention<float, 6, 8, 9, 4, true>;
  const auto lying = try_load<book_model>(with_metadata(book_bytes, {{"checkpoint_format", "gpt2"}}));
  CHECK(lying.code == load_errc::missing_tensor);
  CHECK(contains(lying.message, "(checkpoint_format gpt2 from the file's __metadata__, no prefix)"));
  CHECK(contains(lying.message, "fit checkpoint_format book ('W_query.weight')"));
  for (const char* bad : {"GPT2", "detect"}) {
    const auto u = try_load<book_model>(with_metadata(book_bytes, {{"checkpoint_format", bad}}));
    INFO(u.message);
    CHECK(u.code == load_errc::hyperparameter);
    CHECK(contains(u.message, "not book, pytorch_multihead, gpt2, neox or llama"));
    CHECK(!contains(u.message, "load_options::format"));
  }
  using gpt2_model = mha::multi_head_attention<float, 12, 12, 10, 3, true>;
  const auto no_dot = try_load<gpt2_model>(without_metadata("gpt2_f32"),
                                           opts(checkpoint_format::detect, "h.0.attn"));
  INFO(no_dot.message);
  CHECK(contains(no_dot.message, "(checkpoint_format book (detect's default: no format's tensor "
                                 "names under the prefix), prefix 'h.0.attn')"));
  CHECK(contains(no_dot.message, "the prefix 'h.0.attn' does not end with '.'"));
  const auto only_in_proj = make_safetensors(
      {{"in_proj_weight", {24, 8}, std::vector<double>(24 * 8, 0.5)}}, "F32");
  const auto detected = try_load<mha::multi_head_attention<float, 8, 8, 6, 2>>(only_in_proj, detect);
  INFO(detected.message);
  CHECK(detected.tensor == "out_proj.weight");
  CHECK(contains(detected.message, "(checkpoint_format pytorch_multihead detected from the tensor "
                                   "names, no prefix)"));
}

#ifdef MHA_TEST_EXPORTED_HEADERS
namespace {
/// (name, bytes) of every parameter of a model, in walk order.
using flat_parameters = std::vector<std::pair<std::string, std::string>>;

template <class M>
flat_parameters flatten(const M& m) {
  flat_parameters out;
  mha::for_each_parameter(m, [&](std::string_view name, const auto& t) {
    out.emplace_back(name, std::string(reinterpret_cast<const char*>(t.begin()), sizeof t));
  });
  return out;
}

/// The exported constexpr model equals the model the loader reads from the
/// file it was exported from: same names, bit-equal values, default dropout.
template <class M>
void check_equals_loaded(const M& exported, const std::string& file, std::string prefix = "") {
  auto loaded = std::make_unique<M>();
  const auto r = mha::io::try_load_safetensors(data_file(file), *loaded,
                                               opts(checkpoint_format::detect, std::move(prefix)));
  INFO(file << ": " << r.message);
  REQUIRE(r.ok());
  const auto a = flatten(exported), b = flatten(*loaded);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO(file << ": " << a[i].first);
    CHECK(a[i] == b[i]);
  }
  if constexpr (requires { exported.dropout; })
    CHECK(exported.dropout == loaded->dropout);
  else  // the wrapper: each head's
    CHECK(exported.template head<M::num_heads - 1>().dropout == loaded->template head<0>().dropout);
}
}  // namespace

TEST_CASE("the exported headers' models (mha::from_parameters) equal the loader's",
          "[io][export]") {
  check_equals_loaded(ex_book_ca_f32::model, "book_ca_f32.safetensors");
  check_equals_loaded(ex_book_wrapper_f32::model, "book_wrapper_f32.safetensors");
  check_equals_loaded(ex_book_mha_bf16::model, "book_mha_bf16.safetensors");
  check_equals_loaded(ex_book_mha_f64::model, "book_mha_f64.safetensors");
  check_equals_loaded(ex_torch_mha_f32::model, "torch_mha_f32.safetensors");
  check_equals_loaded(ex_gpt2_f32::model, "gpt2_f32.safetensors", "h.0.attn.");
}
#endif
