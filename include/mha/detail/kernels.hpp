// mha/detail/kernels.hpp -- the arithmetic of a linear layer and of one causal
// attention head, written once for both the fixed-size types (sizes passed as
// std::integral_constant, so loops have constant trip counts) and mha::dynamic
// (sizes passed as std::size_t). Same code, same operation order: the two
// implementations give bit-identical results.
#pragma once

#include <cstddef>
#include <limits>
#include <type_traits>

#include <mha/detail/dropout.hpp>
#include <mha/detail/math.hpp>

namespace mha::detail {

/// Compile-time size as a value that converts to std::size_t.
template <std::size_t N>
using size_c = std::integral_constant<std::size_t, N>;

/// y[r][o] = bias[o] + sum_i x[r][i] * weight[o][i]   (torch.nn.Linear)
///
/// x: [rows][in] row-major, weight: [out][in] (PyTorch layout), bias: [out] or
/// nullptr, y: [rows][out] row-major. The dot product runs over i in
/// increasing order, then the bias is added.
template <class T, class Rows, class In, class Out>
constexpr void linear_rows(const T* x, Rows rows, In in, const T* weight, const T* bias, Out out,
                           T* y) noexcept {
  for (std::size_t r = 0; r < rows; ++r) {
    const T* xr = x + r * in;
    T* yr = y + r * out;
    for (std::size_t o = 0; o < out; ++o) {
      const T* wo = weight + o * in;
      T acc = T(0);
      for (std::size_t i = 0; i < in; ++i) acc += xr[i] * wo[i];
      yr[o] = bias != nullptr ? acc + bias[o] : acc;
    }
  }
}

/// One causal attention head (book section 3.5, PyTorch scaled dot-product
/// attention with is_causal=True):
///
///   out[b][i] = sum_{j <= i} w[b][i][j] * v[b][j],
///   w[b][i][:] = dropout(softmax_j(q[b][i] . k[b][j] / sqrt(head_dim)))
///
/// q, k, v, out: views with `row(b, i)` returning a pointer to head_dim
/// contiguous elements (compile-time mha::block_view or a runtime view).
/// Keys after the query (j > i) are the masked -inf positions: they get weight
/// exactly 0 and are skipped. Softmax is stable (the row maximum is
/// subtracted before exp). `scores` is scratch for `tokens` elements.
/// `divisor` is sqrt(head_dim) as a T, divided (not multiplied by its
/// inverse) as in the book's `attn_scores / keys.shape[-1]**0.5`.
template <class T, class QView, class KView, class VView, class OView, class Batch, class Tokens,
          class HeadDim>
constexpr void causal_attention_head(QView q, KView k, VView v, OView out, Batch batch,
                                     Tokens tokens, HeadDim head_dim, T divisor,
                                     const dropout_state<T>& drop, std::size_t head,
                                     T* scores) noexcept {
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t i = 0; i < tokens; ++i) {
      const auto* qi = q.row(b, i);
      T row_max = -std::numeric_limits<T>::infinity();
      for (std::size_t j = 0; j <= i; ++j) {
        const auto* kj = k.row(b, j);
        T dot = T(0);
        for (std::size_t d = 0; d < head_dim; ++d) dot += qi[d] * kj[d];
        const T s = dot / divisor;
        scores[j] = s;
        row_max = s > row_max ? s : row_max;
      }
      T sum = T(0);
      for (std::size_t j = 0; j <= i; ++j) {
        const T e = detail::exp(scores[j] - row_max);
        scores[j] = e;
        sum += e;
      }
      for (std::size_t j = 0; j <= i; ++j) {
        T w = scores[j] / sum;
        if (drop.active) w = drop.keep(b, head, i, j) ? w * drop.scale : T(0);
        scores[j] = w;
      }
      auto* oi = out.row(b, i);
      for (std::size_t d = 0; d < head_dim; ++d) oi[d] = T(0);
      for (std::size_t j = 0; j <= i; ++j) {
        const T w = scores[j];
        const auto* vj = v.row(b, j);
        for (std::size_t d = 0; d < head_dim; ++d) oi[d] += w * vj[d];
      }
    }
  }
}

/// Runtime-strided view used by mha::dynamic: element (b, r, c) at
/// base[offset + b * batch_stride + r * row_stride + c].
template <class T>
struct runtime_view {
  T* base;
  std::size_t offset;
  std::size_t batch_stride;
  std::size_t row_stride;
  constexpr T* row(std::size_t b, std::size_t r) const noexcept {
    return base + offset + b * batch_stride + r * row_stride;
  }
};

}  // namespace mha::detail
