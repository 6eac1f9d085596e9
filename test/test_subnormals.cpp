// test_subnormals.cpp -- attention weights and products in the subnormal
// range (below 2^-126 = 1.18e-38) get the same bits on every path: the
// compile-time forward, the run-time forward (token-major kernels), the
// run-time forward with the attention weights (the general kernels) and the
// mha::dynamic twin, for the book's MultiHeadAttention (section 3.6.2,
// PyTorch's seed-123 weights, examples/book_weights.hpp) and CausalAttention
// (3.5.3) on crafted inputs (baremetal/subnormal_input.hpp): sequence 0
// along a direction whose scores are all negative, scaled (164 for
// MultiHeadAttention, 140 for CausalAttention) so that some softmax weights
// are subnormal (e^-87.34 to e^-103.97; checked below: at least 8 of them
// where the target keeps IEEE subnormals) and CausalAttention's context
// values exist only through them; sequence 1 the book's input times 33 with
// one input element itself subnormal. Where the target flushes subnormals to zero
// (detail/arch/subnormals.hpp: Cortex-M55, checked there by
// test/baremetal/book.cpp on the same inputs) the same must hold with the
// subnormals flushed on every path. The reference for the attention math is
// PyTorch (the other tests); this file checks that the paths agree where
// subnormals occur, which the book's own input never reaches.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstring>
#include <type_traits>

#include <mha/mha.hpp>

#include "baremetal/subnormal_input.hpp"
#include "test_support.hpp"

namespace subnormal_test {

using subnormal_input::crafted_input;
using subnormal_input::outputs;
using subnormal_input::with_weights;

constexpr float min_normal = 1.17549435e-38f;

// (scales chosen by the same search: 14 subnormal and 8 zero weights in
// MultiHeadAttention's sequence 0, 8 and 4 in CausalAttention's)
constexpr auto x_mha = crafted_input(164.0f);
constexpr auto x_ca = crafted_input(140.0f);
constexpr auto ct_mha = with_weights<2, 2>(mha_book::mha_model, x_mha);
constexpr auto ct_ca = with_weights<2, 1>(mha_book::causal_attention_model, x_ca);

/// The causal weights (j <= i) of w that are subnormal.
template <std::size_t H>
std::size_t subnormal_count(const mha::tensor<float, 2, H, 6, 6>& w) {
  std::size_t n = 0;
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < 6; ++i)
        for (std::size_t j = 0; j <= i; ++j) {
          const float v = w(b, h, i, j);
          n += v != 0.0f && v < min_normal && v > -min_normal ? 1 : 0;
        }
  return n;
}

/// The run-time paths of `model` on x against its compile-time outputs ct:
/// the bits of the outputs and the attention weights.
template <std::size_t W, std::size_t H, class Model>
void check_paths(const Model& model, const mha::tensor<float, 2, 6, 3>& x_in,
                 const outputs<Model, W, H>& ct) {
  const Model* volatile model_pointer = &model;  // (no constant folding)
  const Model& m = *model_pointer;
  const mha::tensor<float, 2, 6, 3>* volatile x_pointer = &x_in;
  const auto& x = *x_pointer;

  // the test reaches the subnormal range: subnormal weights (the outputs that
  // exist only through them are checked for CausalAttention below; through
  // out_proj's bias MultiHeadAttention's outputs are never 0)
  if constexpr (!mha::detail::flushes_subnormals) REQUIRE(subnormal_count(ct.weights) >= 8);

  // token-major kernels (inference without weights)
  REQUIRE(mha_test::same_bits(m.forward(x), ct.out));
  // the general kernels, with the weights
  mha::tensor<float, 2, 6, W> out{};
  mha::tensor<float, 2, H, 6, 6> weights{};
  static typename Model::template workspace<2, 6> ws{};
  m.forward_with_weights(x, out, weights, ws);
  REQUIRE(mha_test::same_bits(out, ct.out));
  REQUIRE(mha_test::same_bits(weights, ct.weights));

  // the mha::dynamic twin, both calls
  const auto dyn = mha_test::to_dynamic(m);
  const auto dx = mha_test::to_dynamic(x);
  REQUIRE(mha_test::same_bits(ct.out, dyn.forward(dx)));
  mha::dynamic::tensor<float> dout({2, 6, W});
  mha::dynamic::tensor<float> dweights({2, H, 6, 6});
  mha::dynamic::workspace<float> dws;
  dyn.forward_with_weights(dx, dout, dweights, dws);
  REQUIRE(mha_test::same_bits(ct.out, dout));
  REQUIRE(mha_test::same_bits(ct.weights, dweights));
}

}  // namespace subnormal_test

TEST_CASE("subnormal weights: compile time, run time and mha::dynamic give the same bits",
          "[subnormals]") {
  using namespace subnormal_test;
  SECTION("MultiHeadAttention (3.6.2)") { check_paths(mha_book::mha_model, x_mha, ct_mha); }
  SECTION("CausalAttention (3.5.3)") {
    check_paths(mha_book::causal_attention_model, x_ca, ct_ca);
    // no out_proj: sequence 0's context of queries 1..5 is the sum of
    // subnormal weights times values, nonzero where subnormals are kept
    if constexpr (!mha::detail::flushes_subnormals)
      for (std::size_t i = 1; i < 6; ++i) CHECK(ct_ca.out(0, i, 0) != 0.0f);
  }
}
