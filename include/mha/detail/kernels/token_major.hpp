// mha/detail/kernels/token_major.hpp -- the kernels of the run-time path of the
// fixed-size modules (every module the orchestration of engine/attention.hpp
// serves with compile-time sizes) for few tokens, compile-time or run-time
// counts: every intermediate is kept transposed, [features][tokens], so that
// one vector holds one feature of W tokens and every loop over features runs
// along compile-time extents. engine/attention.hpp's token_major_forward runs
// the pipeline's steps over them (its schedule transposed_rows: transpose,
// project, rotate, heads, out_proj, transpose back).
//
// Why a second run-time path: with few tokens (N <= max_tokens) the
// row-major register tiles of gemm.hpp are mostly edges, and each call packs
// W^T panels of all four weight matrices. Here the weights are read in their
// nn.Linear layout [out][in] (one broadcast per weight, no packing); only the
// input is transposed on the way in and the output on the way out. Scores are
// S^T [keys][queries], so the softmax over keys is a lane-wise operation
// across rows and the causal mask only touches the diagonal vectors.
//
// Operation order: every value is computed by the same operations in the
// same order as the general run-time path (gemm.hpp, kernels.hpp) computes it,
// so the results are bit-identical to it and to mha::dynamic:
//  * projections: sequential sum over the input features from 0, then + bias;
//  * scores: sequential sum over the head's features, then / sqrt(head_dim);
//  * softmax: maximum over the unmasked keys, simd::exp of the difference,
//    the sum in the lane-wise order of softmax_row (keys j = l mod L in
//    lane l, chunk after chunk, then the pairwise tree of simd::reduce_sum),
//    then one division per weight;
//  * context: sequential sum over the keys from 0 (masked keys add an exact 0);
//  * out_proj: as the projections.
// Only float inference takes this path (no dropout: training uses the
// general path, whose dropout stream is defined per score row).
//
// Tiny heads (head_dim <= 2, at most 8 tokens, at least 4 sequence-head pairs,
// compile-time batch and token count: pairs_apply) take attention_pairs
// instead of attention_head: one (sequence, head) pair per lane, the same
// operations per lane as attention_head_scalar, so the same bits.
//
// Memory: the transposed intermediates live in the caller's workspace
// (workspace_elements); the stack holds the score vectors of one query vector
// (padded tokens x W floats, at most max_tokens * 64 bytes = 16 KiB).
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <bit>
#include <cstddef>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include <mha/config.hpp>
#include <mha/detail/kernels/gemm.hpp>
#include <mha/detail/kernels/kernels.hpp>
#include <mha/detail/arch/muladd.hpp>
#include <mha/detail/kernels/score_policy.hpp>
#include <mha/detail/kernels/weights.hpp>
#include <mha/detail/arch/simd.hpp>
#include <mha/detail/arch/stack_bound.hpp>

#include <mha/detail/macros.hpp>

namespace mha::detail {
MHA_DETAIL_ISA_NAMESPACE {
namespace token_major {

/// Largest token count N of the token-major path (chosen from benchmark/bench_mha.cpp).
inline constexpr std::size_t max_tokens = 256;
/// Query vectors per head up to which their loop is unrolled at compile time.
inline constexpr std::size_t unrolled_query_vectors = 4;
/// Vector registers of the target (the register tiles below are sized for
/// them): 32 with AVX-512, 8 with MVE (Q0-Q7), else 16.
#if defined(__ARM_FEATURE_MVE)
inline constexpr std::size_t vector_registers = 8;
#else
inline constexpr std::size_t vector_registers = simd::vector_bytes == 64 ? 32 : 16;
#endif

/// Narrowest power of two >= Tokens, at least 4 and at most Cap.
template <std::size_t Tokens, std::size_t Cap>
inline constexpr std::size_t pow2_width = [] {
  std::size_t w = 4;
  while (w < Tokens && w < Cap) w *= 2;
  return w < Cap ? w : Cap;
}();

/// Lanes of the token vectors for N tokens: the narrowest power of two >= N,
/// at least 4 and at most the target's vector width (narrow vectors cost the
/// same per instruction, so wasted lanes would waste throughput).
template <class T, std::size_t Tokens>
inline constexpr std::size_t width = pow2_width<Tokens, simd::lanes<T>>;

/// Tokens rounded up to a multiple of W.
template <std::size_t Tokens, std::size_t W>
inline constexpr std::size_t round_up = (Tokens + W - 1) / W * W;

/// Workspace elements of the token-major forward: x^T [DIn][cols], later
/// reused for the context C^T [DOut][cols], then Q^T (later out^T), K^T,
/// V^T [DOut][cols] each. Sized for the widest token vector any target has
/// (64 bytes), not this target's, so that the workspace type has the same
/// size in every translation unit whatever its -m flags (padding to a
/// narrower width never needs more).
template <class T, std::size_t Batch, std::size_t Tokens, std::size_t DIn, std::size_t Width>
inline constexpr std::size_t workspace_elements =
    ((DIn > Width ? DIn : Width) + 3 * Width) * Batch * round_up<Tokens, pow2_width<Tokens, 64 / sizeof(T)>>;

/// Most tokens per sequence for which this path runs, for a layer of d_in DIn
/// and Q/K/V width Width on this target: up to where it stays faster than the
/// blocked path (mha::dynamic's), measured on a grid of d 32..1024, N 8..256
/// (benchmark/bench_cutoff.cpp, docs/token-major-cutoff.md). With 64-byte vectors (AVX-512: 32 registers) the
/// projections of wide layers lose first: 256 tokens up to 256 features, 160
/// up to 384, 96 up to 768, 64 beyond. With 32-byte vectors (AVX2: 16
/// registers) it wins on few tokens only: 256 tokens up to 32 features, 192
/// up to 64, 32 beyond. With 16-byte vectors (SSE2, NEON) tokens * max(DIn, Width) below
/// 8192 (a multiple of 4 tokens, 0 for layers too wide). Never more than
/// max_tokens.
template <std::size_t DIn, std::size_t Width>
inline constexpr std::size_t tokens_limit = [] {
  constexpr std::size_t wide = DIn > Width ? DIn : Width;
  std::size_t n = 0;
  if constexpr (simd::vector_bytes >= 64)
    n = wide <= 256 ? 256 : wide <= 384 ? 160 : wide <= 768 ? 96 : 64;
  else if constexpr (simd::vector_bytes == 32)
    n = wide <= 32 ? 256 : wide <= 64 ? 192 : 32;
  else
    n = (8192 - 1) / wide / 4 * 4;
  return n < max_tokens ? n : max_tokens;
}();

/// True when the fixed-size multi_head_attention runs this path at run time
/// for inference: float and N <= tokens_limit<DIn, DOut>.
template <class T, std::size_t Batch, std::size_t Tokens, std::size_t DIn, std::size_t DOut>
inline constexpr bool applies = std::is_same_v<T, float> && Tokens <= tokens_limit<DIn, DOut>;

/// Vector of W elements of T.
template <class T, std::size_t W>
struct vec_w {
  typedef T type __attribute__((vector_size(W * sizeof(T))));
};
template <class T, std::size_t W>
using vec = typename vec_w<T, W>::type;

template <class V>
MHA_DETAIL_INLINE V load(const void* p) noexcept {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class V>
MHA_DETAIL_INLINE void store(void* p, V v) noexcept {
  std::memcpy(p, &v, sizeof v);
}

#if defined(MHA_DETAIL_HAVE_SHUFFLEVECTOR)
/// One butterfly stage of an in-register transpose: rows r and r + H of every
/// group of 2H rows exchange their off-diagonal H x H blocks (lanes with bit H
/// set in row r <-> lanes with bit H clear in row r + H). Applied for
/// H = W/2, ..., 1 it transposes the W x W block held in `rows`.
template <std::size_t H, class V, std::size_t W, std::size_t... L>
MHA_DETAIL_INLINE void butterfly(V (&rows)[W], std::index_sequence<L...>) noexcept {
#pragma GCC unroll 16
  for (std::size_t r = 0; r < W; ++r) {
    if ((r & H) != 0) continue;
    const V a = rows[r];
    const V b = rows[r + H];
    rows[r] = __builtin_shufflevector(a, b, ((L & H) != 0 ? W + L - H : L)...);
    rows[r + H] = __builtin_shufflevector(a, b, ((L & H) != 0 ? W + L : L + H)...);
  }
  if constexpr (H > 1) butterfly<H / 2>(rows, std::index_sequence<L...>{});
}
#endif

/// dst[c][r] = src[r][c] for r < rows, c < cols (src row stride lds, dst row
/// stride ldd); each of rows, cols a size_c or a std::size_t. W x W blocks go
/// through registers (butterfly) where the compiler has
/// __builtin_shufflevector, the rest element by element.
template <class T, std::size_t W, class Rows, class Cols>
MHA_DETAIL_INLINE void transpose(const T* src, std::size_t lds, T* dst, std::size_t ldd, Rows rows,
                                 Cols cols) noexcept {
  std::size_t block_rows = 0;  // rows in whole W x W blocks
#if defined(MHA_DETAIL_HAVE_SHUFFLEVECTOR)
  using V = vec<T, W>;
  block_rows = rows / W * W;
  const std::size_t block_cols = cols / W * W;
  for (std::size_t r0 = 0; r0 < block_rows; r0 += W) {
    for (std::size_t c0 = 0; c0 < block_cols; c0 += W) {
      V v[W];
#pragma GCC unroll 16
      for (std::size_t r = 0; r < W; ++r) v[r] = load<V>(src + (r0 + r) * lds + c0);
      butterfly<W / 2>(v, std::make_index_sequence<W>{});
#pragma GCC unroll 16
      for (std::size_t c = 0; c < W; ++c) store(dst + (c0 + c) * ldd + r0, v[c]);
    }
    if (block_cols < cols)
      for (std::size_t r = r0; r < r0 + W; ++r)
        for (std::size_t c = block_cols; c < cols; ++c) dst[c * ldd + r] = src[r * lds + c];
  }
#endif
  for (std::size_t r = block_rows; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) dst[c * ldd + r] = src[r * lds + c];
}

/// One register tile of a projection: y[r][c] = bias[r] + sum_k w[r][k] * x[k][c]
/// for r < R, c < CV * W. w: R rows of an [out][In] weight, x: [In][cols] (this
/// tile's first column), y: [R][cols].
template <class T, std::size_t W, std::size_t R, std::size_t CV, std::size_t In, class Cols>
MHA_DETAIL_INLINE void project_tile(const T* w, const T* bias, const T* x, T* y, Cols cols) noexcept {
  using V = vec<T, W>;
  V acc[R][CV];
#pragma GCC unroll 32
  for (std::size_t r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (std::size_t n = 0; n < CV; ++n) acc[r][n] = V{};
#pragma GCC unroll 4
  for (std::size_t k = 0; k < In; ++k) {
    V xv[CV];
#pragma GCC unroll 8
    for (std::size_t n = 0; n < CV; ++n) xv[n] = load<V>(x + k * cols + n * W);
#pragma GCC unroll 32
    for (std::size_t r = 0; r < R; ++r) {
      const T wr = w[r * In + k];
#pragma GCC unroll 8
      for (std::size_t n = 0; n < CV; ++n) acc[r][n] = muladd(acc[r][n], wr, xv[n]);
    }
  }
#pragma GCC unroll 32
  for (std::size_t r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (std::size_t n = 0; n < CV; ++n) {
      V v = acc[r][n];
      if (bias != nullptr) v += bias[r];
      store(y + r * cols + n * W, v);
    }
}

/// All row tiles of a projection for the CV column vectors starting at x, y.
template <class T, std::size_t W, std::size_t CV, std::size_t Out, std::size_t In, class Cols>
MHA_DETAIL_INLINE void project_columns(const T* w, const T* bias, const T* x, T* y, Cols cols) noexcept {
  constexpr std::size_t r_max = (vector_registers - CV - 1) / CV;
  constexpr std::size_t R = Out < r_max ? Out : r_max;
  std::size_t o = 0;
  for (; o + R <= Out; o += R)
    project_tile<T, W, R, CV, In>(w + o * In, bias != nullptr ? bias + o : nullptr, x, y + o * cols,
                                  cols);
  if constexpr (Out % R != 0)
    project_tile<T, W, Out % R, CV, In>(w + o * In, bias != nullptr ? bias + o : nullptr, x,
                                        y + o * cols, cols);
}

/// y^T = (x W^T + bias)^T: y[o][c] = bias[o] + sum_k w[o][k] * x[k][c].
/// w: [Out][In] (nn.Linear layout; its accessor, kernels/weights.hpp), bias:
/// [Out] or nullptr, x: [In][cols], y: [Out][cols]; cols (a size_c or a
/// std::size_t) a multiple of W.
template <class T, std::size_t W, std::size_t Out, std::size_t In, class Cols>
[[gnu::noinline]] void project(dense_weights<T> weights, const T* bias, const T* x, T* y,
                               Cols cols) noexcept {
  const T* const w = weights.data;
  if constexpr (!simd::hardware_vectors) {
    // scalar tiles of 4 x 4 (cols is a multiple of W >= 4): 16 accumulators,
    // 4 inputs and a weight fit the 32 single-precision registers of a
    // Cortex-M4F/M7; each element the same sum in the same order as
    // project_tile's lanes (from 0, muladd over k, then the bias): the same bits
    constexpr std::size_t R = Out < 4 ? Out : 4;
    for (std::size_t c = 0; c < cols; c += 4) {
      std::size_t o = 0;
      for (; o + R <= Out; o += R)
        gemm::micro_scalar<T, R, 4>(size_c<In>{}, w + o * In, In, x + c, cols,
                                    y + o * cols + c, cols, false,
                                    bias != nullptr ? bias + o : nullptr);
      if constexpr (Out % R != 0)
        gemm::micro_scalar<T, Out % R, 4>(size_c<In>{}, w + o * In, In, x + c, cols,
                                          y + o * cols + c, cols, false,
                                          bias != nullptr ? bias + o : nullptr);
    }
  } else {
    // column vectors per tile (2 with MVE's 8 registers: 2 x 2 accumulators)
    constexpr std::size_t cv = vector_registers >= 16 ? 4 : 2;
    std::size_t c = 0;
    for (; c + cv * W <= cols; c += cv * W)
      project_columns<T, W, cv, Out, In>(w, bias, x + c, y + c, cols);
    switch ((cols - c) / W) {  // the last 0..cv-1 column vectors
      case 3: if constexpr (cv > 3) project_columns<T, W, 3, Out, In>(w, bias, x + c, y + c, cols); break;
      case 2: if constexpr (cv > 2) project_columns<T, W, 2, Out, In>(w, bias, x + c, y + c, cols); break;
      case 1: project_columns<T, W, 1, Out, In>(w, bias, x + c, y + c, cols); break;
      default: break;
    }
  }
}

/// Scores of one block of JB keys j0.. for one query vector:
/// s[jj] = sum_d q[d][lanes] * k[d][j0 + jj], sequential over d.
template <class T, std::size_t W, std::size_t JB, std::size_t HeadDim, class Cols>
MHA_DETAIL_INLINE void score_block(const T* q, const T* k, vec<T, W>* s, Cols cols) noexcept {
  using V = vec<T, W>;
  V acc[JB];
#pragma GCC unroll 16
  for (std::size_t jj = 0; jj < JB; ++jj) acc[jj] = V{};
#pragma GCC unroll 8
  for (std::size_t d = 0; d < HeadDim; ++d) {
    const V qd = load<V>(q + d * cols);
#pragma GCC unroll 16
    for (std::size_t jj = 0; jj < JB; ++jj) acc[jj] = muladd(acc[jj], qd, k[d * cols + jj]);
  }
#pragma GCC unroll 16
  for (std::size_t jj = 0; jj < JB; ++jj) s[jj] = acc[jj];
}

/// Context of one block of DB head features d0.. for one query vector:
/// c[d][lanes] = sum_{j < keys} p[j] * v[d][j], sequential over j.
template <class T, std::size_t W, std::size_t DB, class Cols>
MHA_DETAIL_INLINE void context_block(const vec<T, W>* p, std::size_t keys, const T* v, T* c,
                                     Cols cols) noexcept {
  using V = vec<T, W>;
  V acc[DB];
#pragma GCC unroll 16
  for (std::size_t dd = 0; dd < DB; ++dd) acc[dd] = V{};
  for (std::size_t j = 0; j < keys; ++j) {
#pragma GCC unroll 16
    for (std::size_t dd = 0; dd < DB; ++dd) acc[dd] = muladd(acc[dd], p[j], v[dd * cols + j]);
  }
#pragma GCC unroll 16
  for (std::size_t dd = 0; dd < DB; ++dd) store(c + dd * cols, acc[dd]);
}

/// s / divisor for the score divisor sqrt(HeadDim) (attention_spec::divisor;
/// precondition: divisor == sqrt(HeadDim)). When HeadDim is a power of 4 the
/// divisor is a power of two, 2^k, and s * 2^-k is exactly s / 2^k (both are
/// the one correctly rounded value of the same real number), so the quotient
/// becomes a product: no division (Cortex-M: 14 cycles; MVE has no vector
/// division at all), and none at all for head_dim 1. Same bits as every
/// other path's division.
template <std::size_t HeadDim, class V, class T>
MHA_DETAIL_INLINE V divide_by_score_divisor(V s, T divisor) noexcept {
  constexpr std::size_t root = [] {
    std::size_t r = 1;
    while (r * r < HeadDim) r *= 2;  // the power of two whose square is HeadDim, if any
    return r;
  }();
  if constexpr (root * root == HeadDim) {
    static_cast<void>(divisor);
    return s * (T(1) / static_cast<T>(root));
  } else {
    return s / divisor;
  }
}

/// One attention head (index `head`) of one sequence (book section 3.5;
/// PyTorch scaled_dot_product_attention with is_causal=True), token-major:
/// c[d][i] = sum_{j <= i} softmax_j(q[.][i] . k[.][j] / divisor) * v[d][j],
/// with the logit and sink steps of the score policy (score_policy.hpp; its
/// key span must be causal's, Policy::causal: the lane mask below is the
/// causal one; the steps (b) and (c) compile to nothing for a plain policy
/// without sink). The query at token i is at position i.
/// q, k, v, c: the head's first feature row of Q^T, K^T, V^T, C^T at the
/// sequence's first column; element (d, t) at [d * cols + t], t < padded
/// tokens (a multiple of W). For each vector of W queries (first ..
/// first+W-1), only the keys up to the vector's last query are visited: the
/// scores in blocks of jb keys (rounded up, which stays inside the padded
/// row), everything after them (maximum, exponentials, weights, context) up
/// to the last real query only, since a later key is masked in every lane
/// of a real query and would add exact zeros; a key j is masked in the lanes
/// of queries i < j. Padding lanes (queries >= tokens) compute values that are never
/// stored to the output. tokens, cols: size_c (the loops fold; few query
/// vectors are unrolled) or std::size_t (one instantiation for every count).
/// s: scratch for the padded token count of score vectors. One instantiation
/// serves all heads (not inlined, so code size does not grow with NumHeads).
/// The policy is passed by value (causal_scores is empty).
template <class T, std::size_t W, std::size_t HeadDim, class Tokens, class Cols,
          score_policy Policy = causal_scores>
[[gnu::noinline]] void attention_head(const T* q, const T* k, const T* v, T* c, T divisor,
                                      vec<T, W>* s, Tokens tokens, Cols cols, Policy policy = {},
                                      std::size_t head = 0) noexcept {
  static_assert(Policy::causal, "token_major::attention_head: the lane mask is the causal span's");
  using V = vec<T, W>;
  using VI = decltype(V{} < V{});
  constexpr std::size_t jb = W < 8 ? W : 8;         // keys per score block (divides W)
  constexpr std::size_t L = simd::lanes<T>;         // lanes of the general path's softmax sum
  constexpr T inf = std::numeric_limits<T>::infinity();
  constexpr std::size_t db = HeadDim < 16 ? HeadDim : 16;
  VI lane{};
  for (std::size_t l = 0; l < W; ++l) lane[l] = static_cast<int>(l);
#if defined(__ARM_FEATURE_MVE) && defined(__GNUC__) && !defined(__clang__)
  // GCC 12 with MVE (Cortex-M55) folds the causal-mask comparisons of the
  // unrolled query vectors into constant lane predicates and loads one with an
  // unencodable immediate (`mov rN, #-4096` for VPR.P0 = 0xf000), which the
  // assembler rejects: "invalid constant (fffffffffffff000) after fixup".
  // Adding a zero the compiler cannot see through keeps the lane indices
  // opaque, so no constant predicate is formed; the indices (and so every
  // result bit) are unchanged.
  int opaque_zero = 0;
  __asm__("" : "+r"(opaque_zero));
  lane += opaque_zero;
#endif
  // one vector of queries first .. first+W-1; `first` is a size_c when the
  // vectors are few (keys and loop bounds fold), a std::size_t otherwise
  const auto query_vector = [&](auto first) MHA_DETAIL_LAMBDA_INLINE {
    const std::size_t last = first + W < tokens ? first + W : tokens;  // one past the last query
    const VI query = lane + static_cast<int>(first);
    // scores, jb keys at a time (up to last rounded up: <= padded tokens)
    for (std::size_t j = 0; j < last; j += jb)
      score_block<T, W, jb, HeadDim>(q + first, k + j, s + j, cols);
    // From here on the keys j < last only: a key j >= last is masked in
    // every lane of a real query (i < last <= j), where it would add an
    // exact +0 to the exponentials' sum (no change) and 0 * v to the context
    // (no change but for the sign of a zero sum, which attention_head_simple
    // and the scalar head, summing over j <= i only, never add either), so
    // leaving it out moves no real query's bits away from the other paths
    // (the padding lanes are never stored). On the last query vector of a
    // token count that is not a multiple of jb this saves up to jb - 1 key
    // vectors of exponentials, divisions and context.
    // (a) the keys of the last real query: span(last - 1).last == last, as
    // Policy::causal promises; per lane, key j is masked in the lanes of
    // queries i < j (the causal span's right edge)
    const std::size_t keys = last;
    // scale (and the policy's logit step (b)), mask, maximum over the unmasked keys
    V row_max = V{} - inf;
    for (std::size_t j = 0; j < keys; ++j) {
      s[j] = divide_by_score_divisor<HeadDim>(s[j], divisor);
      if constexpr (!Policy::plain)
        for (std::size_t l = 0; l < W; ++l)
          s[j][l] = static_cast<T>(policy.logit(s[j][l], head, first + l, j));
      const V m = j > first ? (query < static_cast<int>(j) ? V{} - inf : s[j]) : s[j];
      row_max = simd::softmax_max(row_max, m);  // row_max > m ? row_max : m
    }
    [[maybe_unused]] V sink{};  // (c) the sink logit, in every lane
    if constexpr (Policy::has_sink) {
      sink = V{} + static_cast<T>(policy.sink_logit(head));
      row_max = simd::softmax_max(row_max, sink);
    }
    // exponentials and their sum in the lane-wise order of softmax_row:
    // part[l] collects keys j = l (mod L), chunk after chunk, from an exact 0
    V part[L];
#pragma GCC unroll 16
    for (std::size_t l = 0; l < L; ++l) part[l] = V{};
    for (std::size_t j0 = 0; j0 < keys; j0 += L) {
#pragma GCC unroll 16
      for (std::size_t l = 0; l < L; ++l) {
        const std::size_t j = j0 + l;
        if (j >= keys) break;
        // (s - max <= 0 in every unmasked lane; a masked lane's value is replaced)
        V e = simd::exp_of_nonpositive(s[j] - row_max);
        if (j > first) e = query < static_cast<int>(j) ? V{} : e;
        s[j] = e;
        part[l] += e;
      }
    }
    V sum = pairwise_lane_sum(part);
    if constexpr (Policy::has_sink) sum += simd::exp_of_nonpositive(sink - row_max);
    for (std::size_t j = 0; j < keys; ++j) simd::divide_in_place(s[j], sum);
    // context, db features at a time
    std::size_t d = 0;
    for (; d + db <= HeadDim; d += db)
      context_block<T, W, db>(s, keys, v + d * cols, c + d * cols + first, cols);
    if constexpr (HeadDim % db != 0)
      context_block<T, W, HeadDim % db>(s, keys, v + d * cols, c + d * cols + first, cols);
  };
  if constexpr (requires { Tokens::value; }) {
    constexpr std::size_t np = round_up<Tokens::value, W>;
    static_assert(np % jb == 0);
    if constexpr (np / W <= unrolled_query_vectors) {
      [&]<std::size_t... QV>(std::index_sequence<QV...>) {
        (query_vector(std::integral_constant<std::size_t, QV * W>{}), ...);
      }(std::make_index_sequence<np / W>{});
      return;
    }
  }
  for (std::size_t first = 0; first < tokens; first += W) query_vector(first);
}

/// attention_head for targets without vector registers
/// (simd::hardware_vectors false; float): each query i < tokens in turn, its
/// scores over the keys of its span, policy.span(i) (causal: keys 0..i; sums
/// over d from 0), softmax_row's scalar mirror of the vector softmax (with
/// the policy's logit and sink steps), its context sums over j from 0:
/// attention_head_simple's arithmetic (kernels.hpp) in the token-major
/// layout, so the same bits as every other path (the vector head's masked
/// keys add exact zeros). s: at least `tokens` elements of scratch.
template <class T, std::size_t HeadDim, class Tokens, class Cols,
          score_policy Policy = causal_scores>
[[gnu::noinline]] void attention_head_scalar(const T* q, const T* k, const T* v, T* c, T divisor,
                                             T* s, Tokens tokens, Cols cols, Policy policy = {},
                                             std::size_t head = 0) noexcept {
  static_assert(Policy::causal, "token_major::attention_head_scalar: causal spans only");
  for (std::size_t i = 0; i < tokens; ++i) {
    const std::size_t keys = policy.span(i).last;  // (a) the query's keys
    // softmax_row's scalar mirror (kernels.hpp): scores / divisor (and the
    // policy's logit step), the row maximum, then softmax_mirror_finish
    T row_max = -std::numeric_limits<T>::infinity();
    for (std::size_t j = 0; j < keys; ++j) {
      // (the first term is the product itself, not muladd(0, q, k): the same
      // value but for the sign of a zero product, and a score's zero sign
      // changes no weight: e^(+0 - m) == e^(-0 - m) bit for bit)
      T dot = q[i] * k[j];
      for (std::size_t d = 1; d < HeadDim; ++d) dot = muladd(dot, q[d * cols + i], k[d * cols + j]);
      s[j] = divide_by_score_divisor<HeadDim>(dot, divisor);
      if constexpr (!Policy::plain) s[j] = static_cast<T>(policy.logit(s[j], head, i, j));
      row_max = s[j] > row_max ? s[j] : row_max;
    }
    softmax_mirror_finish(s, keys, row_max, policy, head);
    for (std::size_t d = 0; d < HeadDim; ++d) {
      T acc = T(0);
      for (std::size_t j = 0; j < keys; ++j) acc = muladd(acc, s[j], v[d * cols + j]);
      c[d * cols + i] = acc;
    }
  }
}

/// Lanes of the vectors of attention_pairs: (sequence, head) pairs per vector.
inline constexpr std::size_t pair_lanes = 4;
/// Largest head_dim and token count for which forward runs the heads with one
/// (sequence, head) pair per lane (attention_pairs) instead of one head at a
/// time with tokens in the lanes (attention_head).
inline constexpr std::size_t pairs_max_head_dim = 2;
inline constexpr std::size_t pairs_max_tokens = 8;

/// True when token_major::forward runs attention_pairs: a target with vector
/// registers, compile-time batch and token count, head_dim <= 2, at most 8
/// tokens and at least pair_lanes (sequence, head) pairs. There the
/// token-major head wastes most of its lanes (half of each diagonal block is
/// masked, and 6 tokens pad to 8), while the pairs fill every lane: for the
/// book's MultiHeadAttention (2 sequences x 2 heads of width 1, 6 tokens) 21
/// vector exponentials instead of 40 (Cortex-M55, docs/embedded.md).
template <std::size_t HeadDim, std::size_t NumHeads, class Batch, class Tokens>
inline constexpr bool pairs_apply = [] {
  if constexpr (!simd::hardware_vectors || !is_size_c<Batch> || !is_size_c<Tokens>)
    return false;
  else
    return HeadDim <= pairs_max_head_dim && Tokens::value <= pairs_max_tokens &&
           Batch::value * NumHeads >= pair_lanes;
}();

/// The attention heads of Batch sequences of Tokens tokens (book section
/// 3.5; PyTorch scaled_dot_product_attention with is_causal=True) with one
/// (sequence b, query head h) pair per lane, pair_lanes pairs at a time (pair
/// p = h * Batch + b; a last, partly filled vector repeats its first pair
/// in the other lanes, which store the same values to the same place):
/// c[h * HeadDim + d][b * Np + i] = sum_{j <= i} softmax_j(q_i . k_j / divisor) v[..][j].
/// qt, ct: Q^T, C^T [NumHeads * HeadDim][Batch * Np]; kt, vt: K^T, V^T
/// [num_kv_heads * HeadDim][Batch * Np], query head h reading key/value head
/// h / HeadsPerKv. Each lane computes what attention_head_scalar computes for
/// its pair, operation for operation (scores summed over d from 0 with
/// muladd, divided by the divisor; the maximum over j <= i; simd::exp; the
/// sum in softmax_row's lane order, keys j = l (mod L) then the
/// pairwise tree; one division per weight; the context summed over j <= i
/// from 0), so the same bits as every other path; the causal mask is the same
/// in every lane (query i of every pair sees keys 0..i: the span of a causal
/// score policy, Policy::causal), so no lane is masked. The policy's logit
/// and sink steps (score_policy.hpp; nothing for a plain policy without
/// sink) take each lane's head. Stack: where a vector is not one gather
/// (simd::gather_scatter false) copies of the pairs' queries, keys and values (3 * Tokens * HeadDim
/// vectors), one query's weights (Tokens vectors) and its features (HeadDim
/// vectors): at most 58 vectors of 4 floats, 928 bytes.
template <class T, std::size_t HeadDim, std::size_t Tokens, std::size_t Batch,
          std::size_t NumHeads, std::size_t HeadsPerKv, std::size_t Np,
          score_policy Policy = causal_scores>
[[gnu::noinline]] void attention_pairs(const T* qt, const T* kt, const T* vt, T* ct, T divisor,
                                       Policy policy = {}) noexcept {
  static_assert(Policy::causal, "token_major::attention_pairs: causal spans only");
  constexpr std::size_t P = pair_lanes;
  using V = vec<T, P>;
  constexpr std::size_t L = simd::lanes<T>;  // lanes of the general path's softmax sum
  constexpr std::size_t pairs = Batch * NumHeads;
  constexpr std::size_t cols = Batch * Np;
  for (std::size_t p0 = 0; p0 < pairs; p0 += P) {
    // element (feature d, token t) of lane l's query / context head at
    // at[l] + d * cols + t, of its key / value head at kv_at[l] + d * cols + t
    // (pairs ordered head by head: with head_dim 1 the lanes are Np apart)
    std::size_t at[P], kv_at[P];
    [[maybe_unused]] std::size_t head[P];  // each lane's head (for the policy's steps)
#pragma GCC unroll 16
    for (std::size_t l = 0; l < P; ++l) {
      const std::size_t p = p0 + l < pairs ? p0 + l : p0;
      const std::size_t h = p / Batch, b = p % Batch;
      at[l] = h * HeadDim * cols + b * Np;
      kv_at[l] = h / HeadsPerKv * HeadDim * cols + b * Np;
      if constexpr (!Policy::plain || Policy::has_sink) head[l] = h;
    }
    const simd::offsets4 q_off(at), kv_off(kv_at);
    // where a vector is not one gather (simd::gather_scatter), the queries,
    // keys and values of the P pairs are copied first, [token][feature][pair]
    constexpr std::size_t copies = simd::gather_scatter ? 1 : Tokens;
    T qp[copies][HeadDim][P], kp[copies][HeadDim][P], vp[copies][HeadDim][P];
    if constexpr (!simd::gather_scatter) {
#pragma GCC unroll 8
      for (std::size_t t = 0; t < Tokens; ++t)
#pragma GCC unroll 4
        for (std::size_t d = 0; d < HeadDim; ++d)
#pragma GCC unroll 16
          for (std::size_t l = 0; l < P; ++l) {
            qp[t][d][l] = qt[at[l] + d * cols + t];
            kp[t][d][l] = kt[kv_at[l] + d * cols + t];
            vp[t][d][l] = vt[kv_at[l] + d * cols + t];
          }
    }
    // the vector of feature d of token t of the pairs' queries, keys, values
    const auto query = [&](std::size_t t, std::size_t d) MHA_DETAIL_LAMBDA_INLINE {
      if constexpr (simd::gather_scatter)
        return std::bit_cast<V>(simd::gather4(qt + d * cols + t, q_off));
      else
        return load<V>(qp[t][d]);
    };
    const auto key = [&](std::size_t t, std::size_t d) MHA_DETAIL_LAMBDA_INLINE {
      if constexpr (simd::gather_scatter)
        return std::bit_cast<V>(simd::gather4(kt + d * cols + t, kv_off));
      else
        return load<V>(kp[t][d]);
    };
    const auto value = [&](std::size_t t, std::size_t d) MHA_DETAIL_LAMBDA_INLINE {
      if constexpr (simd::gather_scatter)
        return std::bit_cast<V>(simd::gather4(vt + d * cols + t, kv_off));
      else
        return load<V>(vp[t][d]);
    };
    V s[Tokens];
    // query i of the P pairs; i a size_c: the rows are unrolled, their key
    // counts compile-time constants
    const auto row = [&](auto i) MHA_DETAIL_LAMBDA_INLINE {
      // (a) causal: the keys 0..i (span(i).last == i + 1, a constant here)
      constexpr std::size_t keys = decltype(i)::value + 1;
      V qi[HeadDim];
#pragma GCC unroll 4
      for (std::size_t d = 0; d < HeadDim; ++d) qi[d] = query(i, d);
      // scores / divisor (the first term the product itself, as in
      // attention_head_scalar) and their maximum: with compare_float_bits
      // the running maximum of softmax_max's integer keys (the same bits)
      const auto score = [&](std::size_t j) MHA_DETAIL_LAMBDA_INLINE {
        V acc = qi[0] * key(j, 0);
#pragma GCC unroll 4
        for (std::size_t d = 1; d < HeadDim; ++d) acc = muladd(acc, qi[d], key(j, d));
        acc = divide_by_score_divisor<HeadDim>(acc, divisor);
        if constexpr (!Policy::plain)  // (b) each lane with its head
          for (std::size_t l = 0; l < P; ++l)
            acc[l] = static_cast<T>(policy.logit(acc[l], head[l], i, j));
        return s[j] = acc;
      };
      V row_max;
      if constexpr (simd::compare_float_bits) {
        auto max_key = simd::softmax_key(score(0));
        for (std::size_t j = 1; j < keys; ++j) {
          const auto k = simd::softmax_key(score(j));
          max_key = k > max_key ? k : max_key;
        }
        row_max = std::bit_cast<V>(simd::softmax_key(std::bit_cast<V>(max_key)));
      } else {
        row_max = score(0);
        for (std::size_t j = 1; j < keys; ++j) row_max = simd::softmax_max(row_max, score(j));
      }
      [[maybe_unused]] V sink{};  // (c) each lane's sink logit
      if constexpr (Policy::has_sink) {
        for (std::size_t l = 0; l < P; ++l) sink[l] = static_cast<T>(policy.sink_logit(head[l]));
        row_max = simd::softmax_max(row_max, sink);
      }
      // exponentials (s - max <= 0 in every lane; a loop of its own, whose
      // constants stay in registers), then their sum in the lane order of
      // softmax_row
      for (std::size_t j = 0; j < keys; ++j) s[j] = simd::exp_of_nonpositive(s[j] - row_max);
      // (part[l] starts as its first exponential, not +0 + it, and the parts
      // of no key, +0, are not added: the same bits, see pairwise_lane_sum_live)
      constexpr std::size_t live = keys < L ? keys : L;
      V part[live];
#pragma GCC unroll 16
      for (std::size_t l = 0; l < live; ++l) part[l] = s[l];
#pragma GCC unroll 16
      for (std::size_t j = L; j < keys; ++j) part[j % L] += s[j];
      V sum = pairwise_lane_sum_live<L, live>(part);
      if constexpr (Policy::has_sink) sum += simd::exp_of_nonpositive(sink - row_max);
      for (std::size_t j = 0; j < keys; ++j) simd::divide_in_place(s[j], sum);
      // context
#pragma GCC unroll 4
      for (std::size_t d = 0; d < HeadDim; ++d) {
        V acc{};
        for (std::size_t j = 0; j < keys; ++j) acc = muladd(acc, s[j], value(j, d));
        simd::scatter4(ct + d * cols + i, q_off, std::bit_cast<simd::float4>(acc));
      }
    };
    [&]<std::size_t... I>(std::index_sequence<I...>) MHA_DETAIL_LAMBDA_INLINE {
      (row(size_c<I>{}), ...);
    }(std::make_index_sequence<Tokens>{});
  }
}

/// Token vector width for a run-time token count n: the narrowest power of
/// two >= n, at least 4 and at most the target's vector width (as width<T, N>).
template <class T>
constexpr std::size_t width_for(std::size_t n) noexcept {
  std::size_t w = 4;
  while (w < n && w < simd::lanes<T>) w *= 2;
  return w < simd::lanes<T> ? w : simd::lanes<T>;
}

/// The attention heads of the token-major path (engine/attention.hpp's
/// token_major_forward, the transposed_rows schedule, runs the projections
/// around them), for float inference with token vectors of W lanes: from Q^T
/// (qt [Width][cols]), K^T and V^T (kt, vt [KvWidth][cols]: key/value head
/// kv's rows kv * HeadDim ..) the context C^T into ct [Width][cols]; sequence
/// b's token i in column b * np + i (np: the tokens rounded up to whole
/// vectors, a size_c where it is known at compile time, so the column strides
/// fold). Query head h reads key/value head spec.kv_head(h) (grouped-query
/// attention; h itself otherwise); the score policy spec.scores.over(tokens)
/// (causal: each sequence's tokens its keys). tokens: a size_c or a run-time
/// count <= MaxTokens. Stack: the padded MaxTokens score vectors (at most
/// max_tokens * 64 bytes).
template <class T, std::size_t W, std::size_t MaxTokens, class Spec, class Batch, class Tokens,
          class Padded>
inline void heads(const Spec& spec, Batch batch, Tokens tokens, Padded np, const T* qt,
                  const T* kt, const T* vt, T* ct) noexcept {
  constexpr std::size_t HeadDim = decltype(spec.head_dim)::value;
  constexpr std::size_t HeadsPerKv = decltype(spec.heads_per_kv())::value;
  constexpr std::size_t NumHeads = decltype(spec.num_heads)::value;
  const auto cols = size_mul(batch, np);  // a size_c whenever np is one
  const auto policy = spec.scores.over(tokens);
  if constexpr (pairs_apply<HeadDim, NumHeads, Batch, Tokens>) {
    // (its stack within the score vectors' bound: detail/arch/stack_bound.hpp)
    // (the copies of queries, keys and values where there is no gather, one
    // query's weights and its query features, in vectors of pair_lanes)
    static_assert(((simd::gather_scatter ? 3 * HeadDim : 3 * HeadDim * Tokens::value) +
                   Tokens::value + HeadDim) * sizeof(vec<T, pair_lanes>) <=
                  stack_bound::score_vectors<T, MaxTokens>);
    attention_pairs<T, HeadDim, Tokens::value, Batch::value, NumHeads, HeadsPerKv, Padded::value>(
        qt, kt, vt, ct, spec.divisor, policy);
  } else {
    vec<T, W> s[round_up<MaxTokens, W>];
    static_assert(sizeof(s) <= stack_bound::score_vectors<T, MaxTokens>);  // detail/arch/stack_bound.hpp
    for (std::size_t b = 0; b < batch; ++b)
      for_each_index(spec.num_heads, [&](auto h) {
        const std::size_t at = h * HeadDim * cols + b * np;
        const std::size_t kv_at = spec.kv_head(h) * HeadDim * cols + b * np;
        if constexpr (simd::hardware_vectors)
          attention_head<T, W, HeadDim>(qt + at, kt + kv_at, vt + kv_at, ct + at, spec.divisor, s,
                                        tokens, cols, policy, h);
        else
          attention_head_scalar<T, HeadDim>(qt + at, kt + kv_at, vt + kv_at, ct + at, spec.divisor,
                                            reinterpret_cast<T*>(s), tokens, cols, policy, h);
      });
  }
}

}  // namespace token_major
}  // namespace MHA_DETAIL_ISA
}  // namespace mha::detail

#include <mha/detail/macros_undef.hpp>
