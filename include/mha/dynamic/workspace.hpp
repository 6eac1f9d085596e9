// mha/dynamic/workspace.hpp -- reusable scratch memory of mha::dynamic forwards.
#pragma once

#include <cstddef>
#include <vector>

#include <mha/detail/gemm.hpp>

namespace mha::dynamic {

/// Intermediates of an mha::dynamic forward call: Q, K, V, the concatenated
/// context (each [B][N][width]; the keys are stored transposed,
/// [B][width][N]) and one block of score rows [mha::detail::gemm::mr][N]. Pass the same
/// workspace to repeated forward(x, out, ws) calls and they allocate only when
/// a call needs more room than an earlier one.
template <class T>
struct workspace {
  std::vector<T> query, key, value, context, scores;

  /// Grows every buffer to hold `elements` values (scores: gemm::mr * `tokens`).
  void reserve_for(std::size_t elements, std::size_t tokens) {
    for (auto* v : {&query, &key, &value, &context})
      if (v->size() < elements) v->resize(elements);
    if (scores.size() < detail::gemm::mr * tokens) scores.resize(detail::gemm::mr * tokens);
  }
};

}  // namespace mha::dynamic
