// Loading safetensors files written from real PyTorch modules
// (tools/make_safetensors_fixtures.py) reproduces PyTorch's outputs.
#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include <mha/io/safetensors.hpp>
#include <mha/mha.hpp>

#include "test_helpers.hpp"

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
