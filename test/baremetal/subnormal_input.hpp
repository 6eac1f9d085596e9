// subnormal_input.hpp -- inputs that drive the book's chapter-3 models into
// the subnormal range, shared by test/test_subnormals.cpp (host and Linux
// targets) and test/baremetal/book.cpp (Cortex-M), and the compile-time
// forward with the attention weights to compare the run-time paths with.
#pragma once

#include <cstddef>

#include <book_weights.hpp>
#include <mha/mha.hpp>

namespace subnormal_input {

/// Sequence 0: token 0 is zero (its key and value are 0, so its score is 0
/// for every query), tokens j = 1..5 are scale * (1 + 0.06 (j - 1)) * u along
/// a direction u for which every head's q_i . k_j is negative (found by a
/// grid search over the unit sphere for the book's seed-123 weights: the
/// query and key rows of each head have opposite signs along u), so each
/// query's largest score is token 0's 0 and its other weights are e^(q . k)
/// of scores from -60 to -200: subnormal from -87.34 to -103.97, 0 below. The
/// context of a query is then the sum of those tiny weights times values of
/// about 50: small normal and subnormal numbers, which exist only because of
/// the subnormal weights (a path that flushed one would give 0).
/// Sequence 1: the book's input times 33 (scores spread by up to about 100),
/// with element (1, 2, 0) replaced by the subnormal 3e-39 (a subnormal input).
constexpr mha::tensor<float, 2, 6, 3> crafted_input(float scale) {
  constexpr float u[3] = {-0.705f, -0.078f, 0.705f};
  mha::tensor<float, 2, 6, 3> x{};
  for (std::size_t j = 1; j < 6; ++j)
    for (std::size_t d = 0; d < 3; ++d)
      x(0, j, d) = scale * (1.0f + 0.06f * static_cast<float>(j - 1)) * u[d];
  for (std::size_t j = 0; j < 6; ++j)
    for (std::size_t d = 0; d < 3; ++d) x(1, j, d) = 33.0f * mha_book::batch(1, j, d);
  x(1, 2, 0) = 3e-39f;
  return x;
}

template <class Model, std::size_t W, std::size_t H>
struct outputs {
  mha::tensor<float, 2, 6, W> out{};
  mha::tensor<float, 2, H, 6, 6> weights{};  // per head (average_attn_weights=False)
};

/// forward_with_weights, usable in constant expressions.
template <std::size_t W, std::size_t H, class Model>
constexpr outputs<Model, W, H> with_weights(const Model& m, const mha::tensor<float, 2, 6, 3>& x) {
  outputs<Model, W, H> r{};
  typename Model::template workspace<2, 6> ws{};
  m.forward_with_weights(x, r.out, r.weights, ws);
  return r;
}

}  // namespace subnormal_input
