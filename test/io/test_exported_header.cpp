// Headers generated at build time by tools/export_weights_header.py from the
// PyTorch-written safetensors files: they compile, the model objects are
// constexpr (built by mha::from_parameters), and their forward pass evaluated
// in a constant expression matches PyTorch's output (static_assert), in every
// checkpoint format. (test_safetensors_pytorch.cpp checks that their
// parameters equal the loader's from the same files.)
#include <catch2/catch.hpp>

#include <mha/mha.hpp>

#include "book_ca_f32.hpp"
#include "book_ca_f32_io.hpp"
#include "book_mha_bf16.hpp"
#include "book_mha_bf16_io.hpp"
#include "book_mha_f64.hpp"
#include "book_mha_f64_io.hpp"
#include "book_wrapper_f32.hpp"
#include "book_wrapper_f32_io.hpp"
#include "gpt2_f32.hpp"
#include "gpt2_f32_io.hpp"
#include "torch_mha_f32.hpp"
#include "torch_mha_f32_io.hpp"

namespace {

/// |a - b| <= rel * |b| + abs for every element, in a constant expression.
template <class A, class B>
constexpr bool all_close(const A& a, const B& b, double rel = 1e-5, double abs = 1e-6) {
  static_assert(A::size == B::size);
  for (std::size_t i = 0; i < A::size; ++i) {
    const double x = static_cast<double>(a.elements[i]), y = static_cast<double>(b.elements[i]);
    const double d = x > y ? x - y : y - x;
    if (!(d <= rel * (y < 0 ? -y : y) + abs)) return false;
  }
  return true;
}

// Evaluated by the compiler: weights in the binary, output checked against PyTorch.
constexpr auto ca_out = ex_book_ca_f32::model.forward(ex_book_ca_f32_io::input);
static_assert(all_close(ca_out, ex_book_ca_f32_io::output), "CausalAttention (book) differs from PyTorch");

constexpr auto wrapper_out = ex_book_wrapper_f32::model.forward(ex_book_wrapper_f32_io::input);
static_assert(all_close(wrapper_out, ex_book_wrapper_f32_io::output),
              "MultiHeadAttentionWrapper (book) differs from PyTorch");

constexpr auto bf16_out = ex_book_mha_bf16::model.forward(ex_book_mha_bf16_io::input);
static_assert(all_close(bf16_out, ex_book_mha_bf16_io::output),
              "MultiHeadAttention BF16 (book) differs from PyTorch on the rounded weights");

constexpr auto f64_out = ex_book_mha_f64::model.forward(ex_book_mha_f64_io::input);
static_assert(all_close(f64_out, ex_book_mha_f64_io::output, 1e-12, 1e-13),
              "MultiHeadAttention F64 (book) differs from PyTorch");

constexpr auto torch_out = ex_torch_mha_f32::model.forward(ex_torch_mha_f32_io::input);
static_assert(all_close(torch_out, ex_torch_mha_f32_io::output),
              "nn.MultiheadAttention (fused model) differs from PyTorch");

constexpr auto gpt2_out = ex_gpt2_f32::model.forward(ex_gpt2_f32_io::input);
static_assert(all_close(gpt2_out, ex_gpt2_f32_io::output), "GPT-2 attention differs from PyTorch");

// The model types are what the exporter was asked for.
static_assert(std::is_same_v<ex_torch_mha_f32::model_type,
                             mha::fused_multi_head_attention<float, 8, 8, 6, 2, true>>);
static_assert(std::is_same_v<ex_book_wrapper_f32::model_type,
                             mha::multi_head_attention_wrapper<float, 5, 3, 6, 3, false>>);

}  // namespace

TEST_CASE("exported headers: constexpr models reproduce PyTorch", "[io][export]") {
  // The static_asserts above are the test; repeat them at run time so a
  // failure message shows values, and check the BF16 export too.
  CHECK(all_close(ex_book_ca_f32::model.forward(ex_book_ca_f32_io::input), ex_book_ca_f32_io::output));
  CHECK(all_close(ex_gpt2_f32::model.forward(ex_gpt2_f32_io::input), ex_gpt2_f32_io::output));
  CHECK(all_close(bf16_out, ex_book_mha_bf16_io::output));
  CHECK(gpt2_out == ex_gpt2_f32::model.forward(ex_gpt2_f32_io::input));
}
