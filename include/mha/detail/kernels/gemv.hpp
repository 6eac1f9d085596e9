// mha/detail/kernels/gemv.hpp -- matrix-vector products for the KV-cache decode step.
//
// A decode step projects one token (or a few) per sequence: work bound by
// reading the weights. The general kernels (gemm.hpp) vectorise across output
// features and so need W^T panels, packed per call: every weight would be read,
// written and read again. Here each weight row is read once, in place, in its
// nn.Linear layout [out][in], vectorised along the input features: lane l of
// an accumulator sums the products of features i = l (mod lanes), chunk after
// chunk (a partly loaded vector, padded with zeros, for the last in % lanes
// features), then the lanes are added in the fixed pairwise tree of
// simd::reduce_sum, then the bias. That order differs from the sequential sums
// of the whole-sequence forward, so a cached row agrees with the plain
// forward's row to rounding (a few ulp), not bit for bit; it is the same for
// the fixed-size and the runtime-sized modules (all arithmetic is explicit
// vector operations), so those two stay bit-identical to each other.
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <cstddef>

#include <mha/detail/arch/muladd.hpp>
#include <mha/detail/arch/simd.hpp>
#include <mha/detail/kernels/weights.hpp>

#include <mha/detail/macros.hpp>

namespace mha::detail {
MHA_DETAIL_ISA_NAMESPACE {
namespace gemv {

/// Most rows (tokens) one pass over the weights serves.
inline constexpr std::size_t max_rows = 4;

/// R output features of M rows: output o + r of row m (at y[m] + (first + o
/// + r) * ystride) = bias[o + r] + sum_i x[m][i] * w[o + r][i], for r < R.
template <class T, std::size_t M, std::size_t R>
MHA_DETAIL_INLINE void tile(const T* const* x, std::size_t in, const T* w,
                                                const T* bias, std::size_t o, T* const* y,
                                                std::size_t first, std::size_t ystride) noexcept {
  using V = simd::vec<T>;
  constexpr std::size_t L = simd::lanes<T>;
  V acc[R][M];
#pragma GCC unroll 8
  for (std::size_t r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (std::size_t m = 0; m < M; ++m) acc[r][m] = V{};
  const T* wr[R];
#pragma GCC unroll 8
  for (std::size_t r = 0; r < R; ++r) wr[r] = w + (o + r) * in;
  const std::size_t full = in / L * L;
  for (std::size_t i = 0; i < full; i += L) {
    V xv[M];
#pragma GCC unroll 4
    for (std::size_t m = 0; m < M; ++m) xv[m] = simd::load(x[m] + i);
#pragma GCC unroll 8
    for (std::size_t r = 0; r < R; ++r) {
      const V wv = simd::load(wr[r] + i);
#pragma GCC unroll 4
      for (std::size_t m = 0; m < M; ++m) acc[r][m] = muladd(acc[r][m], xv[m], wv);
    }
  }
  if (full < in) {
    const std::size_t tail = in - full;
    V xv[M];
#pragma GCC unroll 4
    for (std::size_t m = 0; m < M; ++m) xv[m] = simd::load_partial(x[m] + full, tail);
#pragma GCC unroll 8
    for (std::size_t r = 0; r < R; ++r) {
      const V wv = simd::load_partial(wr[r] + full, tail);
#pragma GCC unroll 4
      for (std::size_t m = 0; m < M; ++m) acc[r][m] = muladd(acc[r][m], xv[m], wv);
    }
  }
#pragma GCC unroll 8
  for (std::size_t r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (std::size_t m = 0; m < M; ++m) {
      T s = simd::reduce_sum<T>(acc[r][m]);
      if (bias != nullptr) s = s + bias[o + r];
      y[m][(first + o + r) * ystride] = s;
    }
}

/// Output features per tile for M rows: enough independent accumulators to
/// hide the multiply-add latency, few enough to stay in registers.
template <std::size_t M>
inline constexpr std::size_t tile_outputs = M == 1 ? 8 : (M == 2 ? 4 : 2);

/// y[m][o] = bias[o] + sum_i x[m][i] * w[o][i] for m < M, o < out.
template <class T, std::size_t M>
[[gnu::noinline]] void rows(const T* const* x, std::size_t in, const T* w, const T* bias,
                            std::size_t out, T* const* y, std::size_t first,
                            std::size_t ystride) noexcept {
  constexpr std::size_t R = tile_outputs<M>;
  std::size_t o = 0;
  for (; o + R <= out; o += R) tile<T, M, R>(x, in, w, bias, o, y, first, ystride);
  for (; o < out; ++o) tile<T, M, 1>(x, in, w, bias, o, y, first, ystride);
}

/// The projection of `m` rows (any count): y[r][o] = bias[o] + sum_i x[r][i] *
/// w[o][i], with x[r] the r-th row pointer (in elements each), w [out][in]
/// (nn.Linear layout; its accessor, kernels/weights.hpp), bias [out] or nullptr, and output o of row r at
/// y[r] + (first + o) * ystride (ystride 1: a row of Q or V; ystride = K^T's
/// row stride: a column of K^T). Rows are taken max_rows at a time, so each
/// weight is read once per max_rows rows.
template <class T>
inline void project(std::size_t m, const T* const* x, std::size_t in, dense_weights<T> weights,
                    const T* bias, std::size_t out, T* const* y, std::size_t first,
                    std::size_t ystride) noexcept {
  const T* const w = weights.data;
  static_assert(max_rows == 4, "project dispatches 1..4 rows");
  for (std::size_t r = 0; r < m; r += max_rows) {
    switch (m - r < max_rows ? m - r : max_rows) {
      case 1: rows<T, 1>(x + r, in, w, bias, out, y + r, first, ystride); break;
      case 2: rows<T, 2>(x + r, in, w, bias, out, y + r, first, ystride); break;
      case 3: rows<T, 3>(x + r, in, w, bias, out, y + r, first, ystride); break;
      default: rows<T, 4>(x + r, in, w, bias, out, y + r, first, ystride); break;
    }
  }
}

}  // namespace gemv
}  // namespace MHA_DETAIL_ISA
}  // namespace mha::detail

#include <mha/detail/macros_undef.hpp>
