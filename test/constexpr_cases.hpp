// constexpr_cases.hpp -- small models and inputs that the tests evaluate both
// in constant expressions and at run time (the two must give the same bits),
// shared by test_gqa.cpp, test_variants.cpp and conformance/test_conformance.cpp.
// Every value is a fixed arithmetic sequence: nothing here computes an
// expected result.
#pragma once

#include <array>
#include <cstddef>

#include <mha/mha.hpp>

namespace mha_test {

/// A grouped-query attention with RoPE small enough to evaluate at compile
/// time: d_in 4, d_out 8, context 6, 4 query heads, 2 key/value heads, bias.
using tiny_gqa = mha::grouped_query_attention<float, 4, 8, 6, 4, 2, true, mha::rope<10000>>;

/// A model M (value-initialised) with every parameter from one sequence: v =
/// first, -1.25 v, ..., scaled by 1/16 whenever |v| passes `limit`.
template <class M>
constexpr M sequence_model(float first, float limit) {
  M m{};
  float v = first;
  mha::for_each_parameter(m, [&](auto, auto& t) {
    for (auto& e : t) {
      e = v;
      v = v * -1.25f;
      if (v > limit || v < -limit) v = v * 0.0625f;
    }
  });
  return m;
}

/// tiny_gqa with every parameter from sequence_model(1/32, 0.75).
constexpr tiny_gqa make_tiny_gqa() { return sequence_model<tiny_gqa>(0.03125f, 0.75f); }

/// A [5][4] input for tiny_gqa (v, -0.875 v + 1/16, ...).
constexpr mha::tensor<float, 5, 4> tiny_gqa_input() {
  mha::tensor<float, 5, 4> x{};
  float v = 0.5f;
  for (auto& e : x) {
    e = v;
    v = v * -0.875f + 0.0625f;
  }
  return x;
}

/// The attention weights [1][1][4][4] of causal_attention<double, 3, 2, 4>
/// (`m`'s query, key and value weights overwritten with fixed sequences) on a
/// [1][4][3] input whose key lengths are {3}: the padded-weights case that the
/// tests evaluate at compile time and at run time.
constexpr mha::tensor<double, 1, 1, 4, 4> padded_weights_case(mha::causal_attention<double, 3, 2, 4> m) {
  for (std::size_t i = 0; i < 6; ++i) {
    m.w_query.weight.data()[i] = 0.125 * static_cast<double>(i) - 0.25;
    m.w_key.weight.data()[i] = 0.0625 * static_cast<double>(i * i % 5) - 0.125;
    m.w_value.weight.data()[i] = 0.5 - 0.1875 * static_cast<double>(i % 3);
  }
  mha::tensor<double, 1, 4, 3> x{};
  for (std::size_t i = 0; i < 12; ++i) x.data()[i] = 0.3 * static_cast<double>(i % 7) - 0.9;
  mha::tensor<double, 1, 4, 2> out{};
  mha::tensor<double, 1, 1, 4, 4> weights{};
  mha::causal_attention<double, 3, 2, 4>::workspace<1, 4> ws{};
  const std::array<std::size_t, 1> lengths{3};
  (void)m.forward_with_weights(x, lengths, out, weights, ws);
  return weights;
}

}  // namespace mha_test
