// mha/detail/kernels.hpp -- the arithmetic of a linear layer and of one causal
// attention head, written once for both the fixed-size types (sizes passed as
// std::integral_constant, so loops have constant trip counts) and mha::dynamic
// (sizes passed as std::size_t). Same code, same operation order: the two
// implementations give bit-identical results.
//
// Two paths:
//  * the simple loops below (linear_rows in constant evaluation,
//    causal_attention_head): constexpr, used when a model is evaluated at
//    compile time;
//  * the run-time fast path (linear_rows at run time, linear_rows_kt,
//    causal_attention_head_kt): register-tiled products from gemm.hpp and a
//    blocked causal attention that never computes fully masked blocks.
// The fixed-size modules branch on std::is_constant_evaluated(); mha::dynamic
// always takes the fast path. For float inference on few tokens the fixed-size
// multi_head_attention runs a third formulation (token_major.hpp) that performs
// the same operations in the same order per output element, so every path
// gives the same bits at run time.
#pragma once

#include <cstddef>
#include <limits>
#include <type_traits>

#include <mha/detail/dropout.hpp>
#include <mha/detail/gemm.hpp>
#include <mha/detail/math.hpp>
#include <mha/detail/muladd.hpp>
#include <mha/detail/simd.hpp>

namespace mha::detail {

/// Compile-time size as a value that converts to std::size_t.
template <std::size_t N>
using size_c = std::integral_constant<std::size_t, N>;

/// Largest extent of a "small shape": when every size passed to a kernel is a
/// compile-time constant no larger than this (the fixed-size modules on tiny
/// models), the simple loops run at run time too. With constant trip counts
/// the compiler unrolls and vectorises them across outputs like fixed-size
/// Eigen code, which beats the register-tiled kernels whose tiles would be
/// mostly partial-vector edges. Same operations in the same order, so the
/// results stay bit-identical to the fast path (and to mha::dynamic, whose
/// run-time sizes never qualify). Chosen from benchmark/bench_mha.cpp.
inline constexpr std::size_t small_extent = 16;

template <class Size>
consteval bool is_small_size() {
  if constexpr (requires { Size::value; })
    return Size::value <= small_extent;
  else
    return false;
}
/// True when every size type is a compile-time constant <= small_extent.
template <class... Sizes>
inline constexpr bool small_sizes = (is_small_size<Sizes>() && ...);

/// The bias argument of the projection kernels is one of:
///  * std::nullptr_t: no bias, known at compile time;
///  * present_bias<T>: a bias, known at compile time (fixed-size layers);
///  * const T*: chosen at run time, nullptr for none (mha::dynamic).
/// The first two are never compared with nullptr: GCC cannot evaluate such a
/// comparison in a constant expression when built with -fsanitize=null.
template <class T>
struct present_bias {
  const T* data;  ///< [out]
};
constexpr bool has_bias(std::nullptr_t) noexcept { return false; }
template <class T>
constexpr bool has_bias(present_bias<T>) noexcept {
  return true;
}
template <class T>
constexpr bool has_bias(const T* bias) noexcept {
  return bias != nullptr;
}
/// The bias as a pointer (nullptr for none), for the run-time kernels.
template <class T>
constexpr const T* bias_pointer(std::nullptr_t) noexcept {
  return nullptr;
}
template <class T>
constexpr const T* bias_pointer(present_bias<T> bias) noexcept {
  return bias.data;
}
template <class T>
constexpr const T* bias_pointer(const T* bias) noexcept {
  return bias;
}
/// Element o of a bias that has_bias.
template <class T>
constexpr T bias_at(present_bias<T> bias, std::size_t o) noexcept {
  return bias.data[o];
}
template <class T>
constexpr T bias_at(const T* bias, std::size_t o) noexcept {
  return bias[o];
}
template <class T>
constexpr T bias_at(std::nullptr_t, std::size_t) noexcept {
  return T(0);
}

/// y[r][o] = bias[o] + sum_i x[r][i] * weight[o][i]   (torch.nn.Linear)
///
/// x: [rows][in] row-major, weight: [out][in] (PyTorch layout), bias: [out]
/// (see present_bias) or none, y: [rows][out] row-major. The dot product runs over i in
/// increasing order, then the bias is added. At run time the products are
/// register-tiled (gemm::gemm_abt: the same order of every sum; values can
/// differ from the constexpr loop only where the target fuses multiply-adds).
/// Stack use at run time: one packed panel (gemm::kc x gemm::nc<T> elements).
/// Small constant shapes (small_sizes) use the simple loop at run time too.
template <class T, class Rows, class In, class Out, class Bias>
constexpr void linear_rows(const T* x, Rows rows, In in, const T* weight, Bias bias, Out out,
                           T* y) noexcept {
  if (!std::is_constant_evaluated() && !small_sizes<Rows, In, Out>) {
    gemm::gemm_abt<T>(rows, out, in, x, in, weight, in, y, out, bias_pointer<T>(bias), nullptr);
    return;
  }
  for (std::size_t r = 0; r < rows; ++r) {
    const T* xr = x + r * in;
    T* yr = y + r * out;
    for (std::size_t o = 0; o < out; ++o) {
      const T* wo = weight + o * in;
      T acc = T(0);
      for (std::size_t i = 0; i < in; ++i) acc = muladd(acc, xr[i], wo[i]);
      yr[o] = has_bias(bias) ? acc + bias_at<T>(bias, o) : acc;
    }
  }
}

/// The transposed projection: kt[b][o][j] = bias[o] + sum_i x[b][j][i] * weight[o][i],
/// i.e. (x_b weight^T)^T per batch, each sum in the order of linear_rows (so
/// kt[b][o][j] equals linear_rows' y[b*tokens + j][o] bit for bit).
/// x: [batch][tokens][in], weight: [out][in], bias: as for linear_rows,
/// kt: [batch][out][tokens]. Used for the keys, whose transposed layout is
/// what the blocked attention reads.
template <class T, class Batch, class Tokens, class In, class Out, class Bias>
constexpr void linear_rows_kt(const T* x, Batch batch, Tokens tokens, In in, const T* weight,
                              Bias bias, Out out, T* kt) noexcept {
  if (!std::is_constant_evaluated()) {
    for (std::size_t b = 0; b < batch; ++b)
      gemm::gemm_abt<T>(out, tokens, in, weight, in, x + b * tokens * in, in,
                        kt + b * out * tokens, tokens, nullptr, bias_pointer<T>(bias));
    return;
  }
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t o = 0; o < out; ++o) {
      const T* wo = weight + o * in;
      for (std::size_t j = 0; j < tokens; ++j) {
        const T* xj = x + (b * tokens + j) * in;
        T acc = T(0);
        for (std::size_t i = 0; i < in; ++i) acc = muladd(acc, xj[i], wo[i]);
        kt[(b * out + o) * tokens + j] = has_bias(bias) ? acc + bias_at<T>(bias, o) : acc;
      }
    }
}

/// A fixed-size linear layer's bias as a kernel bias argument: present_bias,
/// or nullptr for a layer without bias.
template <class Linear>
constexpr auto bias_data(const Linear& l) noexcept {
  if constexpr (Linear::has_bias)
    return present_bias<typename Linear::value_type>{l.bias.data()};
  else
    return nullptr;
}

/// Row stride (elements between rows) of a view: from the layout type of a
/// compile-time mha::block_view, from the member of a runtime_view.
template <class View>
constexpr std::size_t row_stride_of(const View& v) noexcept {
  if constexpr (requires { View::layout_type::row_stride; })
    return View::layout_type::row_stride;
  else
    return v.row_stride;
}

/// Softmax of one causal row in place, fast path: s[0:len] holds the raw
/// scores q_i . k_j of keys j <= i; afterwards it holds the attention weights
/// (dropout applied when active) and s[len:width] holds zeros (the masked
/// keys of the row's block, which then add nothing to the value product).
/// Same steps as causal_attention_head: divide by `divisor`, subtract the row
/// maximum, exponentiate, divide by the sum. For float the exponential is
/// simd::exp and the sum is taken lane-wise then across lanes, in a fixed order.
/// Scalar: use the scalar mirror of the vector code at run time too (small shapes).
template <class T, bool Scalar = false>
constexpr void softmax_causal_row(T* s, std::size_t len, std::size_t width, T divisor,
                                  const dropout_state<T>& drop, std::size_t b, std::size_t head,
                                  std::size_t i) noexcept {
  T row_max = -std::numeric_limits<T>::infinity();
  T sum = T(0);
  if ((Scalar || std::is_constant_evaluated()) && std::is_same_v<T, float>) {
    // Scalar mirror of the vector code below: simd::exp on a float computes
    // one lane of simd::exp on a vector, and the sum is built lane by lane (lane l holds the keys
    // j = l (mod L), chunk after chunk, padding lanes 0), then reduced with
    // the same pairwise tree. The maximum does not depend on the order.
    constexpr std::size_t L = simd::lanes<T>;
    for (std::size_t j = 0; j < len; ++j) {
      s[j] = s[j] / divisor;
      row_max = s[j] > row_max ? s[j] : row_max;
    }
    T lane[L] = {};
    for (std::size_t j = 0; j < len; ++j) {
      const T e = static_cast<T>(simd::exp(static_cast<float>(s[j] - row_max)));
      s[j] = e;
      lane[j % L] += e;
    }
    for (std::size_t w = L / 2; w >= 1; w /= 2)
      for (std::size_t l = 0; l < w; ++l) lane[l] = lane[l] + lane[l + w];
    sum = lane[0];
    for (std::size_t j = 0; j < len; ++j) s[j] = s[j] / sum;
  } else if constexpr (std::is_same_v<T, float>) {
    // whole vectors, then one partly loaded vector for the last len % L keys
    using V = simd::vec<T>;
    constexpr std::size_t L = simd::lanes<T>;
    if (len <= L) {
      // one (partly loaded) vector kept in registers; the same values as the
      // general loop below would give for this row
      const V v = simd::load_partial(s, len, row_max) / divisor;  // padding: -inf
      row_max = simd::reduce_max<T>(v);
      const V e = simd::keep_first<T>(simd::exp(v - row_max), len);
      sum = simd::reduce_sum<T>(e);
      simd::store_partial(s, e / sum, len);
      if (drop.active)
        for (std::size_t j = 0; j < len; ++j) s[j] = drop.keep(b, head, i, j) ? s[j] * drop.scale : T(0);
      for (std::size_t j = len; j < width; ++j) s[j] = T(0);
      return;
    }
    const std::size_t full = len / L * L;
    const std::size_t tail = len - full;
    V vmax = simd::broadcast(row_max);
    for (std::size_t j = 0; j < full; j += L) {
      const V v = simd::load(s + j) / divisor;
      simd::store(s + j, v);
      vmax = simd::max<T>(vmax, v);
    }
    if (tail != 0) {
      const V v = simd::load_partial(s + full, tail, row_max) / divisor;  // padding: -inf
      simd::store_partial(s + full, v, tail);
      vmax = simd::max<T>(vmax, v);
    }
    row_max = simd::reduce_max<T>(vmax);
    V vsum{};
    for (std::size_t j = 0; j < full; j += L) {
      const V e = simd::exp(simd::load(s + j) - row_max);
      simd::store(s + j, e);
      vsum += e;
    }
    if (tail != 0) {
      const V e = simd::keep_first<T>(simd::exp(simd::load_partial(s + full, tail) - row_max), tail);
      simd::store_partial(s + full, e, tail);
      vsum += e;
    }
    sum = simd::reduce_sum<T>(vsum);
    for (std::size_t j = 0; j < full; j += L) simd::store(s + j, simd::load(s + j) / sum);
    if (tail != 0) simd::store_partial(s + full, simd::load_partial(s + full, tail) / sum, tail);
  } else {
    for (std::size_t j = 0; j < len; ++j) {
      s[j] = s[j] / divisor;
      row_max = s[j] > row_max ? s[j] : row_max;
    }
    for (std::size_t j = 0; j < len; ++j) {
      const T e = detail::exp(s[j] - row_max);
      s[j] = e;
      sum += e;
    }
    for (std::size_t j = 0; j < len; ++j) s[j] = s[j] / sum;
  }
  if (drop.active)
    for (std::size_t j = 0; j < len; ++j) s[j] = drop.keep(b, head, i, j) ? s[j] * drop.scale : T(0);
  for (std::size_t j = len; j < width; ++j) s[j] = T(0);
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
/// subtracted before exp), computed by softmax_causal_row. `scores` is scratch
/// for `tokens` elements. This is the simple (constexpr) formulation; it
/// performs the same operations in the same order as the fast path
/// (linear_rows_kt + causal_attention_head_kt), so without fused multiply-adds
/// the two give identical results, also between constant evaluation and run
/// time. Small constant shapes (small_sizes<Tokens, HeadDim>) use the scalar
/// softmax mirror at run time as well: the fixed-size modules run this
/// function at run time for them.
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
      for (std::size_t j = 0; j <= i; ++j) {
        const auto* kj = k.row(b, j);
        T dot = T(0);
        for (std::size_t d = 0; d < head_dim; ++d) dot = muladd(dot, qi[d], kj[d]);
        scores[j] = dot;
      }
      softmax_causal_row<T, small_sizes<Tokens, HeadDim>>(scores, i + 1, i + 1, divisor, drop, b,
                                                          head, i);
      auto* oi = out.row(b, i);
      for (std::size_t d = 0; d < head_dim; ++d) oi[d] = T(0);
      for (std::size_t j = 0; j <= i; ++j) {
        const T w = scores[j];
        const auto* vj = v.row(b, j);
        for (std::size_t d = 0; d < head_dim; ++d) oi[d] = muladd(oi[d], w, vj[d]);
      }
    }
  }
}

/// One causal attention head, run-time fast path (same result definition as
/// causal_attention_head, within float rounding of it):
///
///   for each block of gemm::mr queries i0..i0+R-1 (keys 0..i0+R-1 only: the
///   fully masked blocks to the right are never computed):
///     S = Q_block K^T                  [R][keys]      (gemm::gemm_ab)
///     each row: softmax_causal_row     (masked tail of the block set to 0)
///     out_block = S V                  [R][head_dim]  (gemm::gemm_ab)
///
/// q, v, out: views with row(b, i) -> head_dim contiguous elements; kt: the
/// keys transposed, row(b, d) -> `tokens` contiguous elements (key j's d-th
/// component at [j]), as written by linear_rows_kt. Every view needs a
/// constant row stride (row_stride_of). `scores`: scratch for
/// gemm::mr * tokens elements (one block of score rows, never N x N).
/// `first_batch`: batch index of the views' first sequence, for the dropout
/// stream (a caller that runs one sequence at a time passes its index).
/// Not constexpr; the fixed-size modules call it only at run time.
template <class T, class QView, class KtView, class VView, class OView, class Batch,
          class Tokens, class HeadDim>
inline void causal_attention_head_kt(QView q, KtView kt, VView v, OView out, Batch batch,
                                     Tokens tokens, HeadDim head_dim, T divisor,
                                     const dropout_state<T>& drop, std::size_t head,
                                     T* scores, std::size_t first_batch = 0) noexcept {
  constexpr std::size_t L = simd::lanes<T>;
  const std::size_t ldq = row_stride_of(q);
  const std::size_t ldk = row_stride_of(kt);
  const std::size_t ldv = row_stride_of(v);
  const std::size_t ldo = row_stride_of(out);
  const std::size_t n = tokens;
  for (std::size_t b = 0; b < batch; ++b) {
    const T* kb = kt.row(b, 0);
    const T* vb = v.row(b, 0);
    for (std::size_t i0 = 0; i0 < n; i0 += gemm::mr) {
      const std::size_t rows = n - i0 < gemm::mr ? n - i0 : gemm::mr;
      const std::size_t keys = i0 + rows;
      // score columns rounded up to whole vectors while they stay inside the row
      const std::size_t rounded = (keys + L - 1) / L * L;
      const std::size_t cols = rounded < n ? rounded : n;
      gemm::gemm_ab<T>(rows, cols, head_dim, q.row(b, i0), ldq, kb, ldk, scores, n, false);
      for (std::size_t r = 0; r < rows; ++r)
        softmax_causal_row<T>(scores + r * n, i0 + r + 1, keys, divisor, drop, first_batch + b, head,
                              i0 + r);
      gemm::gemm_ab<T>(rows, head_dim, keys, scores, n, vb, ldv, out.row(b, i0), ldo, false);
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
