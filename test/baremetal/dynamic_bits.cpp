// dynamic_bits.cpp -- bare-metal test of mha::dynamic, the runtime-sized twin,
// on the target: the book's MultiHeadAttention (3.6.2) and CausalAttention
// (3.5.3) as mha::dynamic modules with the seed-123 weights of
// examples/book_weights.hpp give the fixed-size modules' compile-time bits,
// on the book's input and in the subnormal range (subnormal_input.hpp:
// outputs and attention weights; flushed on every path of the Cortex-M55,
// docs/design.md "Subnormals"), and a bad shape throws std::invalid_argument.
// The one test program that allocates and throws (mha::dynamic keeps its
// weights and workspaces in std::vector and reports errors by exceptions):
// built with mha_baremetal_heap_executable (cmake/baremetal/heap.cpp).
// Exit status: the number of failed checks.
#include "mha_baremetal.hpp"

#include <cstddef>
#include <stdexcept>

#include <book_weights.hpp>
#include <mha/mha.hpp>

#include "subnormal_input.hpp"
#include "test_support.hpp"

namespace {

constexpr auto ct_mha = mha_book::mha_model.forward(mha_book::batch);
constexpr auto ct_ca = mha_book::causal_attention_model.forward(mha_book::batch);
constexpr auto x_sub_mha = subnormal_input::crafted_input(164.0f);
constexpr auto x_sub_ca = subnormal_input::crafted_input(140.0f);
constexpr auto ct_sub_mha = subnormal_input::with_weights<2, 2>(mha_book::mha_model, x_sub_mha);
constexpr auto ct_sub_ca =
    subnormal_input::with_weights<2, 1>(mha_book::causal_attention_model, x_sub_ca);

using mha_test::same_bits;  // (shape and bits: test/test_support.hpp)
using mha_test::to_dynamic;  // (the mha::dynamic twin of a module or tensor)

}  // namespace

int main() {
  mha_bm::write("dynamic_bits: mha::dynamic on the target\n");
  const auto dyn_mha = to_dynamic(mha_book::mha_model);
  const auto dyn_ca = to_dynamic(mha_book::causal_attention_model);

  mha_bm::check(same_bits(ct_mha, dyn_mha.forward(to_dynamic(mha_book::batch))),
                "dynamic MultiHeadAttention == compile-time forward (bits)");
  mha_bm::check(same_bits(ct_ca, dyn_ca.forward(to_dynamic(mha_book::batch))),
                "dynamic CausalAttention == compile-time forward (bits)");

  mha::dynamic::workspace<float> ws;
  mha::dynamic::tensor<float> out({2, 6, 2});
  mha::dynamic::tensor<float> weights({2, 2, 6, 6});
  dyn_mha.forward_with_weights(to_dynamic(x_sub_mha), out, weights, ws);
  mha_bm::check(same_bits(ct_sub_mha.out, out) && same_bits(ct_sub_mha.weights, weights),
                "subnormal range: dynamic MultiHeadAttention output and weights (bits)");
  mha::dynamic::tensor<float> weights_ca({2, 1, 6, 6});
  dyn_ca.forward_with_weights(to_dynamic(x_sub_ca), out, weights_ca, ws);
  mha_bm::check(same_bits(ct_sub_ca.out, out) && same_bits(ct_sub_ca.weights, weights_ca),
                "subnormal range: dynamic CausalAttention output and weights (bits)");

  bool threw = false;
  try {
    static_cast<void>(dyn_mha.forward(mha::dynamic::tensor<float>({2, 6, 4})));
  } catch (const std::invalid_argument& e) {
    threw = true;
    mha_bm::write("bad shape: ");
    mha_bm::write(e.what());
    mha_bm::write("\n");
  }
  mha_bm::check(threw, "a bad input shape throws std::invalid_argument");
  mha_bm::write(mha_bm::failures() == 0 ? "dynamic_bits: all checks passed\n"
                                        : "dynamic_bits: checks FAILED\n");
  return mha_bm::failures();
}
