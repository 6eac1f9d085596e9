// book.cpp -- bare-metal test of the book's chapter-3 models (Raschka, "Build
// a Large Language Model From Scratch": CausalAttention 3.5.3, the
// MultiHeadAttentionWrapper 3.6.1 and Exercise 3.2, MultiHeadAttention 3.6.2)
// with PyTorch's seed-123 weights (examples/book_weights.hpp, constants in
// ROM) on the book's input, as test/test_book.cpp checks them on the host:
//  * at compile time: each forward pass evaluated by the compiler (static_assert
//    within 1e-5 relative of PyTorch's outputs and to the book's printed 4
//    decimals, test/data/book_tables.json via the generated book_tables.hpp);
//  * at run time: forward(x, out, ws) with a static workspace and forward(x)
//    (workspace on the stack) give the compile-time bits (memcmp), the book's
//    printed numbers (|a - book| <= 0.5e-4 + 1e-6) and PyTorch's (1e-5
//    relative); the plain-loops reference (plain_reference.hpp) agrees with
//    MultiHeadAttention within 1e-5 relative;
//  * in the subnormal range (subnormal_input.hpp: inputs whose softmax
//    weights go down to e^-104, a subnormal input element): MultiHeadAttention
//    and CausalAttention at run time, forward(x) (token-major kernels) and
//    forward_with_weights (the general kernels), give the compile-time bits of
//    the outputs and the weights; subnormals kept on the IEEE targets
//    (counted), flushed on every path of the Cortex-M55 (detail/arch/subnormals.hpp).
// Prints the stack high-water marks of MultiHeadAttention's forward calls and
// marks its forward and the plain loops' for count_instructions.sh.
// mha::dynamic is not used: it allocates and reports errors by exceptions.
// Exit status: the number of failed checks.
#include "mha_baremetal.hpp"

#include <cstddef>
#include <cstring>
#include <type_traits>

#include <book_weights.hpp>

#include "book_tables.hpp"
#include "plain_reference.hpp"
#include "report.hpp"
#include "subnormal_input.hpp"

namespace {

template <std::size_t W>
using book_output = mha::tensor<float, 2, 6, W>;

// |a - b| in constant expressions.
constexpr double abs_diff(double a, double b) { return a > b ? a - b : b - a; }

// Every element within rtol * max(1, |ref|) of PyTorch's output.
template <std::size_t W>
constexpr bool near_pytorch(const book_output<W>& a, const book_output<W>& ref) {
  for (std::size_t i = 0; i < a.size; ++i) {
    const double r = static_cast<double>(ref.data()[i]);
    if (abs_diff(static_cast<double>(a.data()[i]), r) > 1e-5 * (abs_diff(r, 0) > 1 ? abs_diff(r, 0) : 1))
      return false;
  }
  return true;
}

// Both batch elements round to the book's printed 4 decimals (the first batch
// element's table; the book prints the same numbers for the second).
template <std::size_t W>
constexpr bool rounds_to_book(const book_output<W>& a, const double (&printed)[6][W]) {
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t i = 0; i < 6; ++i)
      for (std::size_t c = 0; c < W; ++c)
        if (abs_diff(static_cast<double>(a(b, i, c)), printed[i][c]) > 0.5e-4 + 1e-6) return false;
  return true;
}

// The forward passes evaluated by the compiler.
constexpr auto ct_causal = mha_book::causal_attention_model.forward(mha_book::batch);
constexpr auto ct_wrapper = mha_book::wrapper_model.forward(mha_book::batch);
constexpr auto ct_ex32 = mha_book::exercise_3_2_model.forward(mha_book::batch);
constexpr auto ct_mha = mha_book::mha_model.forward(mha_book::batch);
static_assert(near_pytorch(ct_causal, mha_book::causal_attention_expected));
static_assert(near_pytorch(ct_wrapper, mha_book::wrapper_expected));
static_assert(near_pytorch(ct_ex32, mha_book::exercise_3_2_expected));
static_assert(near_pytorch(ct_mha, mha_book::mha_expected));
static_assert(rounds_to_book(ct_causal, book_printed::causal_attention));
static_assert(rounds_to_book(ct_wrapper, book_printed::multi_head_attention_wrapper));
static_assert(rounds_to_book(ct_ex32, book_printed::exercise_3_2));
static_assert(rounds_to_book(ct_mha, book_printed::multi_head_attention));

// The run-time checks of one model: forward(x, out, ws) with a static
// workspace, then forward(x), against the compile-time bits, the book and
// PyTorch.
template <class Model, std::size_t W>
void check_model(const char* name, const Model& model, const book_output<W>& ct,
                 const book_output<W>& pytorch, const double (&printed)[6][W]) {
  static typename Model::template workspace<2, 6> ws{};
  static book_output<W> out{};
  model.forward(mha_book::batch, out, ws);
  const auto returned = model.forward(mha_book::batch);
  mha_bm::write(name);
  mha_bm::write(": checksum ");
  mha_bm::write_hex(bm_report::checksum(out.data(), out.size));
  mha_bm::write(", largest |run time - PyTorch| ");
  mha_bm::write_fixed(bm_report::max_abs_diff(out.data(), pytorch.data(), out.size), 9);
  mha_bm::write("\n");
  mha_bm::check(std::memcmp(out.data(), ct.data(), sizeof out) == 0,
                "forward(x, out, ws) == compile-time forward (bits)");
  mha_bm::check(std::memcmp(returned.data(), ct.data(), sizeof out) == 0,
                "forward(x) == compile-time forward (bits)");
  mha_bm::check(rounds_to_book(out, printed), "forward rounds to the book's printed table");
  mha_bm::check(near_pytorch(out, pytorch), "forward within 1e-5 relative of PyTorch");
}

// The subnormal range: compile-time outputs and weights (subnormal_input.hpp).
constexpr auto x_sub_mha = subnormal_input::crafted_input(164.0f);
constexpr auto x_sub_ca = subnormal_input::crafted_input(140.0f);
constexpr auto ct_sub_mha = subnormal_input::with_weights<2, 2>(mha_book::mha_model, x_sub_mha);
constexpr auto ct_sub_ca =
    subnormal_input::with_weights<2, 1>(mha_book::causal_attention_model, x_sub_ca);

template <std::size_t W, std::size_t H, class Model>
void check_subnormal_range(const char* name, const Model& model_in,
                           const mha::tensor<float, 2, 6, 3>& x_in,
                           const subnormal_input::outputs<Model, W, H>& ct) {
  // (through volatile pointers: no constant folding, which GCC does with IEEE
  // subnormals whatever FPSCR.FZ says)
  const Model* volatile model_pointer = &model_in;
  const Model& model = *model_pointer;
  const mha::tensor<float, 2, 6, 3>* volatile x_pointer = &x_in;
  const auto& x = *x_pointer;
  static typename Model::template workspace<2, 6> ws{};
  static mha::tensor<float, 2, 6, W> out{}, out_weights{};
  static mha::tensor<float, 2, H, 6, 6> weights{};
  model.forward(x, out, ws);
  model.forward_with_weights(x, out_weights, weights, ws);
  std::size_t subnormal = 0, zero = 0;
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < 6; ++i)
        for (std::size_t j = 0; j <= i; ++j) {
          const float w = ct.weights(b, h, i, j);
          subnormal += w != 0.0f && w < 1.17549435e-38f ? 1 : 0;
          zero += w == 0.0f ? 1 : 0;
        }
  mha_bm::write(name);
  mha_bm::write(" in the subnormal range: compile-time weights subnormal ");
  mha_bm::write_uint(subnormal);
  mha_bm::write(", zero ");
  mha_bm::write_uint(zero);
  mha_bm::write("\n");
  mha_bm::check(std::memcmp(out.data(), ct.out.data(), sizeof out) == 0,
                "subnormal range: forward(x, out, ws) == compile-time forward (bits)");
  mha_bm::check(std::memcmp(out_weights.data(), ct.out.data(), sizeof out) == 0,
                "subnormal range: forward_with_weights output == compile-time (bits)");
  mha_bm::check(std::memcmp(weights.data(), ct.weights.data(), sizeof weights) == 0,
                "subnormal range: attention weights == compile-time weights (bits)");
  if constexpr (!mha::detail::flushes_subnormals)
    mha_bm::check(subnormal >= 8, "subnormal range: the weights reach it (IEEE subnormals)");
  else
    mha_bm::check(subnormal == 0 && zero >= 8, "subnormal range: flushed to zero (Cortex-M55)");
}

}  // namespace

int main() {
  mha_bm::write("book: chapter 3 models on the book's input, weights in ROM\n");
  check_model("3.5.3 CausalAttention", mha_book::causal_attention_model, ct_causal,
              mha_book::causal_attention_expected, book_printed::causal_attention);
  check_model("3.6.1 MultiHeadAttentionWrapper", mha_book::wrapper_model, ct_wrapper,
              mha_book::wrapper_expected, book_printed::multi_head_attention_wrapper);
  check_model("Exercise 3.2", mha_book::exercise_3_2_model, ct_ex32,
              mha_book::exercise_3_2_expected, book_printed::exercise_3_2);
  check_model("3.6.2 MultiHeadAttention", mha_book::mha_model, ct_mha, mha_book::mha_expected,
              book_printed::multi_head_attention);

  check_subnormal_range("3.6.2 MultiHeadAttention", mha_book::mha_model, x_sub_mha, ct_sub_mha);
  check_subnormal_range("3.5.3 CausalAttention", mha_book::causal_attention_model, x_sub_ca,
                        ct_sub_ca);

  // MultiHeadAttention: stack high-water marks, plain loops, instruction counts.
  using model_type = std::remove_cvref_t<decltype(mha_book::mha_model)>;
  using workspace_type = model_type::workspace<2, 6>;
  static workspace_type ws{};
  static book_output<2> out{}, plain_out{};
  static plain::workspace<2, 6, 2> plain_ws{};
  const std::size_t stack_ws =
      mha_bm::measure_stack([] { mha_book::mha_model.forward(mha_book::batch, out, ws); });
  book_output<2> returned{};
  const std::size_t stack_returning =
      mha_bm::measure_stack([&returned] { returned = mha_book::mha_model.forward(mha_book::batch); });
  const auto run_plain = [] {
    plain::forward<2, 6>(mha_book::mha_model, mha_book::batch.data(), plain_out.data(), plain_ws);
  };
  run_plain();
  mha_bm::check(bm_report::violations(out.data(), plain_out.data(), out.size, 1e-5) == 0,
                "MultiHeadAttention == plain loops within 1e-5 relative");
  mha_bm::count_region("book MultiHeadAttention forward (mha kernels)", &out,
                       [] { mha_book::mha_model.forward(mha_book::batch, out, ws); });
  mha_bm::count_region("book MultiHeadAttention forward (plain loops)", &plain_out, run_plain);

  bm_report::line("stack high-water of MultiHeadAttention forward(x, out, ws) [bytes]", stack_ws);
  bm_report::line("workspace<2, 6>::frame_bytes (the library's bound) [bytes]",
                  workspace_type::frame_bytes);
  bm_report::line("stack high-water of MultiHeadAttention forward(x) [bytes]", stack_returning);
  bm_report::line("workspace<2, 6>::stack_bytes + output (the library's bound) [bytes]",
                  workspace_type::stack_bytes + sizeof(book_output<2>));
  mha_bm::check(stack_ws <= workspace_type::frame_bytes, "forward(x, out, ws): stack within frame_bytes");
  mha_bm::check(stack_returning <= workspace_type::stack_bytes + sizeof(book_output<2>),
                "forward(x): stack within stack_bytes + output");
  mha_bm::write(mha_bm::failures() == 0 ? "book: all checks passed\n" : "book: checks FAILED\n");
  return mha_bm::failures();
}
