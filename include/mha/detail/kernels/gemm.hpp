// mha/detail/kernels/gemm.hpp -- register-tiled matrix products for the run-time fast
// path (projections and blocked attention), shared by the fixed-size modules
// and mha::dynamic.
//
// Every element of every product is the plain sequential sum
//
//   c[i][j] = (((c0 + a[i][0] * b[0][j]) + a[i][1] * b[1][j]) + ...)
//
// over k = 0, 1, ..., K-1, with c0 = 0 (or the value already in C when
// accumulating). Tiling only decides which elements are computed together,
// never the order of one element's sum. All multiply-adds are explicit vector
// operations (edges use partly loaded vectors), so the compiler cannot
// vectorise a scalar sum differently in the fixed-size and the runtime-sized
// instantiations, and each is a detail::muladd, fused exactly where the
// target has FMA: the two stay bit-identical. On targets without usable float
// vector arithmetic (simd::hardware_vectors false: no vector unit, or 32-bit
// Arm NEON, which GCC leaves unused for floats) the tiles are scalar
// (micro_scalar): the same muladd sequence per element, and no vector unit
// that the compiler uses for it (GCC keeps float arithmetic off ARMv7's NEON
// without -funsafe-math-optimizations). These functions take
// std::size_t sizes and are never used in constant evaluation.
//
// The micro-kernel keeps an MR x (NR vectors) tile of C in registers and, for
// each k, broadcasts MR values of A and loads NR vectors of a row of B
// (Goto & van de Geijn, "Anatomy of high-performance matrix multiplication",
// ACM TOMS 2008, the outer-product form of the BLIS micro-kernel).
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <cstddef>

#include <mha/detail/arch/muladd.hpp>
#include <mha/detail/arch/simd.hpp>
#include <mha/detail/arch/stack_bound.hpp>

#include <mha/detail/macros.hpp>

namespace mha::detail {
MHA_DETAIL_ISA_NAMESPACE {
namespace gemm {

/// Rows of the register tile (also the query block of the attention).
inline constexpr std::size_t mr = 6;
/// Vectors per row of the register tile: MR * NR accumulators fit the
/// register file (32 vector registers with AVX-512, 16 otherwise).
inline constexpr std::size_t nr = simd::vector_bytes == 64 ? 4 : 2;
/// Columns of the register tile.
template <class T>
inline constexpr std::size_t nc = nr * simd::lanes<T>;
/// Depth of one packed panel of B (panel = kc x nc elements, on the stack).
inline constexpr std::size_t kc = 128;
static_assert(kc == stack_bound::panel_depth && nr <= stack_bound::panel_vectors &&
              simd::vector_bytes <= stack_bound::vector_bytes,
              "mha: detail/arch/stack_bound.hpp's panel bound must cover this target's gemm panel");

/// c[0:MR][0:cols] (+)= a[0:MR][0:k] * b[0:k][0:cols], cols = NR*lanes, or
/// (NR-1)*lanes + `tail` when Partial (the last vector only partly loaded and
/// stored, so nothing outside the matrices is touched). Row strides lda, ldb,
/// ldc; `accumulate` continues the sums already in c. Every multiply-add is a
/// vector operation, also at the edges, so that each element's arithmetic is
/// the same wherever it lies in the matrix.
template <class T, std::size_t MR, std::size_t NR, bool Partial>
MHA_DETAIL_INLINE void micro(std::size_t k, const T* a, std::size_t lda, const T* b, std::size_t ldb, T* c,
                  std::size_t ldc, bool accumulate, std::size_t tail) noexcept {
  using V = simd::vec<T>;
  constexpr std::size_t L = simd::lanes<T>;
  const auto ld = [tail](const T* p, std::size_t n) {
    if (Partial && n == NR - 1) return simd::load_partial(p, tail);
    return simd::load(p);
  };
  V acc[MR][NR];
#pragma GCC unroll 8
  for (std::size_t m = 0; m < MR; ++m)
#pragma GCC unroll 8
    for (std::size_t n = 0; n < NR; ++n) acc[m][n] = accumulate ? ld(c + m * ldc + n * L, n) : V{};
  for (std::size_t p = 0; p < k; ++p) {
    V bv[NR];
#pragma GCC unroll 8
    for (std::size_t n = 0; n < NR; ++n) bv[n] = ld(b + p * ldb + n * L, n);
#pragma GCC unroll 8
    for (std::size_t m = 0; m < MR; ++m) {
      const T am = a[m * lda + p];
#pragma GCC unroll 8
      for (std::size_t n = 0; n < NR; ++n) acc[m][n] = muladd(acc[m][n], am, bv[n]);
    }
  }
#pragma GCC unroll 8
  for (std::size_t m = 0; m < MR; ++m)
#pragma GCC unroll 8
    for (std::size_t n = 0; n < NR; ++n) {
      if (Partial && n == NR - 1)
        simd::store_partial(c + m * ldc + n * L, acc[m][n], tail);
      else
        simd::store(c + m * ldc + n * L, acc[m][n]);
    }
}

/// The edge tile of a row block: `vectors` (1..nr) vectors, the last one
/// holding only `tail` columns when `tail` != 0.
template <class T, std::size_t R, std::size_t NV>
MHA_DETAIL_INLINE void edge_tile(std::size_t vectors, std::size_t tail, std::size_t k, const T* a,
                      std::size_t lda, const T* b, std::size_t ldb, T* c, std::size_t ldc,
                      bool accumulate) noexcept {
  if constexpr (NV >= 1) {
    if (vectors == NV) {
      if (tail != 0)
        micro<T, R, NV, true>(k, a, lda, b, ldb, c, ldc, accumulate, tail);
      else
        micro<T, R, NV, false>(k, a, lda, b, ldb, c, ldc, accumulate, 0);
      return;
    }
    edge_tile<T, R, NV - 1>(vectors, tail, k, a, lda, b, ldb, c, ldc, accumulate);
  }
}

/// c[0:R][0:NS] (+)= a[0:R][0:k] * b[0:k][0:NS] in scalar registers: micro's
/// arithmetic without vectors, for targets that have none or whose float
/// vectors GCC leaves unused (simd::hardware_vectors false: Cortex-M3/M4F/M7,
/// ARMv7 without NEON, and 32-bit Arm with NEON, whose vectors flush
/// subnormals), where GCC would lower each
/// vector operation of micro to one scalar operation per lane through the
/// stack (larger and slower code, and most of those builds' compile time).
/// Each element's sum is the same sequence of detail::muladd from the same
/// start (+0, or the value in c), so the same bits as micro. `row_bias`
/// (nullptr: none) is added to row m's finished sums before they are stored
/// (token_major::project's bias). K: std::size_t or a size_c (a depth known
/// at compile time).
template <class T, std::size_t R, std::size_t NS, class K>
MHA_DETAIL_INLINE void micro_scalar(K k, const T* a, std::size_t lda, const T* b, std::size_t ldb,
                                    T* c, std::size_t ldc, bool accumulate,
                                    const T* row_bias = nullptr) noexcept {
  T acc[R][NS];
#pragma GCC unroll 8
  for (std::size_t m = 0; m < R; ++m)
#pragma GCC unroll 8
    for (std::size_t n = 0; n < NS; ++n) acc[m][n] = accumulate ? c[m * ldc + n] : T(0);
  for (std::size_t p = 0; p < k; ++p) {
    T bv[NS];
#pragma GCC unroll 8
    for (std::size_t n = 0; n < NS; ++n) bv[n] = b[p * ldb + n];
#pragma GCC unroll 8
    for (std::size_t m = 0; m < R; ++m) {
      const T am = a[m * lda + p];
#pragma GCC unroll 8
      for (std::size_t n = 0; n < NS; ++n) acc[m][n] = muladd(acc[m][n], am, bv[n]);
    }
  }
#pragma GCC unroll 8
  for (std::size_t m = 0; m < R; ++m)
#pragma GCC unroll 8
    for (std::size_t n = 0; n < NS; ++n)
      c[m * ldc + n] = row_bias != nullptr ? acc[m][n] + row_bias[m] : acc[m][n];
}

/// One row block (R <= mr rows) of c (+)= a * b over all n columns: full
/// tiles of nr vectors, then one narrower (possibly partial) edge tile; on
/// targets without vector registers, tiles of lanes<T> scalar columns, then
/// the last n % lanes<T> columns one at a time (micro_scalar).
template <class T, std::size_t R>
MHA_DETAIL_INLINE void row_block(std::size_t n, std::size_t k, const T* a, std::size_t lda, const T* b,
                      std::size_t ldb, T* c, std::size_t ldc, bool accumulate) noexcept {
  constexpr std::size_t L = simd::lanes<T>;
  std::size_t j = 0;
  if constexpr (!simd::hardware_vectors) {
    for (; j + L <= n; j += L) micro_scalar<T, R, L>(k, a, lda, b + j, ldb, c + j, ldc, accumulate);
    for (; j < n; ++j) micro_scalar<T, R, 1>(k, a, lda, b + j, ldb, c + j, ldc, accumulate);
  } else {
    for (; j + nr * L <= n; j += nr * L)
      micro<T, R, nr, false>(k, a, lda, b + j, ldb, c + j, ldc, accumulate, 0);
    if (j < n) {
      const std::size_t rest = n - j;
      edge_tile<T, R, nr>((rest + L - 1) / L, rest % L, k, a, lda, b + j, ldb, c + j, ldc,
                          accumulate);
    }
  }
}

/// row_block<T, R> for the run-time row count r in [1, mr].
template <class T>
MHA_DETAIL_INLINE void any_row_block(std::size_t r, std::size_t n, std::size_t k, const T* a,
                                     std::size_t lda, const T* b, std::size_t ldb, T* c,
                                     std::size_t ldc, bool accumulate) noexcept {
  static_assert(mr == 6, "any_row_block handles 1..6 rows");
  switch (r) {
    case 1: row_block<T, 1>(n, k, a, lda, b, ldb, c, ldc, accumulate); break;
    case 2: row_block<T, 2>(n, k, a, lda, b, ldb, c, ldc, accumulate); break;
    case 3: row_block<T, 3>(n, k, a, lda, b, ldb, c, ldc, accumulate); break;
    case 4: row_block<T, 4>(n, k, a, lda, b, ldb, c, ldc, accumulate); break;
    case 5: row_block<T, 5>(n, k, a, lda, b, ldb, c, ldc, accumulate); break;
    default: row_block<T, 6>(n, k, a, lda, b, ldb, c, ldc, accumulate); break;
  }
}

/// c[m][n] (+)= sum_p a[m][p] * b[p][n]: A [M][K] (row stride lda), B [K][N]
/// (row stride ldb), C [M][N] (row stride ldc), all row-major, no packing.
template <class T>
MHA_DETAIL_INLINE void gemm_ab(std::size_t m, std::size_t n, std::size_t k, const T* a,
                               std::size_t lda, const T* b, std::size_t ldb, T* c,
                               std::size_t ldc, bool accumulate) noexcept {
  for (std::size_t i = 0; i < m; i += mr) {
    const std::size_t rows = m - i < mr ? m - i : mr;
    any_row_block<T>(rows, n, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc, accumulate);
  }
}

/// c[i][j] = bias_col[j] + bias_row[i] + sum_p a[i][p] * src[j][p]: the
/// product A * SRC^T of two matrices stored along K (A [M][K], SRC [N][K],
/// row strides lda, lds), e.g. x * W^T of a linear layer (A = x, SRC = W) or
/// its transpose W * x^T (A = W, SRC = x). The sum is complete before a bias
/// is added; bias_col / bias_row may be nullptr. Panels of SRC^T (kc x nc)
/// are packed on the stack (at most kc * nc * sizeof(T) bytes; less when K
/// is a compile-time constant below kc).
///
/// Not forced inline, unlike the micro-kernels it calls: one copy per (T, K)
/// instead of one inside every projection of every shape that calls it. The
/// shapes that would gain from constant m and n take the simple loops
/// (kernels.hpp, small_sizes); for the others a call per product costs
/// nothing measurable (benchmark/bench_mha.cpp: book to GPT-2 size within
/// 1.00 +- 0.05 of the forced-inline copies), and the object code of a test
/// build is much smaller (the kv-cache group, g++ -O0 with the sanitizers:
/// 240 -> 110 CPU s).
template <class T, class K>
inline void gemm_abt(std::size_t m, std::size_t n, K k, const T* a, std::size_t lda,
                     const T* src, std::size_t lds, T* c, std::size_t ldc, const T* bias_col,
                     const T* bias_row) noexcept {
  constexpr std::size_t NC = nc<T>;
  constexpr std::size_t panel_k = [] {
    if constexpr (requires { K::value; })
      return K::value < kc ? K::value : kc;
    else
      return kc;
  }();
  alignas(simd::vector_bytes) T panel[panel_k * NC];
  static_assert(sizeof(panel) <= stack_bound::gemm_panel<panel_k>);  // see detail/arch/stack_bound.hpp
  for (std::size_t j0 = 0; j0 < n; j0 += NC) {
    const std::size_t nb = n - j0 < NC ? n - j0 : NC;
    for (std::size_t p0 = 0; p0 < k; p0 += panel_k) {
      const std::size_t kb = k - p0 < panel_k ? k - p0 : panel_k;
      for (std::size_t j = 0; j < nb; ++j) {
        const T* s = src + (j0 + j) * lds + p0;
        for (std::size_t p = 0; p < kb; ++p) panel[p * NC + j] = s[p];
      }
      const bool accumulate = p0 > 0;
      for (std::size_t i = 0; i < m; i += mr) {
        const std::size_t rows = m - i < mr ? m - i : mr;
        any_row_block<T>(rows, nb, kb, a + i * lda + p0, lda, panel, NC, c + i * ldc + j0, ldc,
                         accumulate);
      }
    }
  }
  if (bias_col != nullptr || bias_row != nullptr)
    for (std::size_t i = 0; i < m; ++i) {
      T* ci = c + i * ldc;
      if (bias_col != nullptr)
        for (std::size_t j = 0; j < n; ++j) ci[j] += bias_col[j];
      if (bias_row != nullptr)
        for (std::size_t j = 0; j < n; ++j) ci[j] += bias_row[i];
    }
}

}  // namespace gemm
}  // namespace MHA_DETAIL_ISA
}  // namespace mha::detail

#include <mha/detail/macros_undef.hpp>
