// mha/detail/kernels/kernels.hpp -- the arithmetic of a linear layer and of one
// attention head (its keys and logits given by a score policy,
// score_policy.hpp), written once for both the fixed-size types
// (sizes passed as std::integral_constant, so loops have constant trip counts)
// and mha::dynamic (sizes passed as std::size_t). Same code, same operation
// order: the two implementations give bit-identical results.
//
// The pieces the orchestration (engine/attention.hpp) puts together:
//  * projections: project_rows / project_rows_t (simple loops in constant
//    evaluation and for small constant shapes, gemm.hpp tiles otherwise);
//  * one attention head of one sequence (causal or every key: the score
//    policy, a template parameter), queries at any position offset (a KV
//    cache): attention_head_simple (constexpr, one score row at a time),
//    attention_head_blocked (run time, blocks of gemm::mr queries) and
//    attention_head_decode (run time, one query over a cache), all three
//    through softmax_row.
// The first two perform the same operations in the same order, so every path
// of a whole-sequence forward gives the same bits at run time (and the
// token-major formulation of token_major.hpp too); the decode kernel sums in
// another order (see attention_head_decode).
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <cstddef>
#include <limits>
#include <type_traits>
#include <utility>

#include <mha/config.hpp>
#include <mha/detail/kernels/dropout.hpp>
#include <mha/detail/kernels/gemm.hpp>
#include <mha/detail/kernels/score_policy.hpp>
#include <mha/detail/arch/math.hpp>
#include <mha/detail/arch/muladd.hpp>
#include <mha/detail/arch/simd.hpp>
#include <mha/detail/kernels/sizes.hpp>
#include <mha/detail/kernels/weights.hpp>
#include <mha/detail/arch/subnormals.hpp>

#include <mha/detail/macros.hpp>

namespace mha::detail {
MHA_DETAIL_ISA_NAMESPACE {

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

/// The bias of outputs k, k+1, ... of a layer (the rows of one head's block).
constexpr std::nullptr_t bias_offset(std::nullptr_t, std::size_t) noexcept { return nullptr; }
template <class T>
constexpr present_bias<T> bias_offset(present_bias<T> bias, std::size_t k) noexcept {
  return {bias.data + k};
}
template <class T>
constexpr const T* bias_offset(const T* bias, std::size_t k) noexcept {
  return bias != nullptr ? bias + k : nullptr;
}

/// y[r][o] = bias[o] + sum_i x[r][i] * weight[o][i]   (torch.nn.Linear)
///
/// x: [rows][in] (row stride ldx), weight: [out][in] (PyTorch layout; its
/// accessor, kernels/weights.hpp), bias:
/// [out] (see present_bias) or none, y: [rows][out] (row stride ldy). The dot
/// product runs over i in increasing order, then the bias is added. At run
/// time the products are register-tiled (gemm::gemm_abt: the same order of
/// every sum and the same detail::muladd, so the same bits as the loop
/// below). Stack use at run time: one packed panel
/// (gemm::kc x gemm::nc<T> elements). Small constant shapes (small_sizes) use
/// the simple loop at run time too.
template <class T, class Rows, class In, class Out, class Bias>
constexpr void project_rows(const T* x, std::size_t ldx, Rows rows, In in,
                            dense_weights<T> weights, Bias bias, Out out, T* y,
                            std::size_t ldy) noexcept {
  const T* const weight = weights.data;
  if (!std::is_constant_evaluated() && !small_sizes<Rows, In, Out>) {
    gemm::gemm_abt<T>(rows, out, in, x, ldx, weight, in, y, ldy, bias_pointer<T>(bias), nullptr);
    return;
  }
  for (std::size_t r = 0; r < rows; ++r) {
    const T* xr = x + r * ldx;
    T* yr = y + r * ldy;
    for (std::size_t o = 0; o < out; ++o) {
      const T* wo = weight + o * in;
      T acc = T(0);
      for (std::size_t i = 0; i < in; ++i) acc = muladd(acc, xr[i], wo[i]);
      yr[o] = has_bias(bias) ? fp::add(acc, bias_at<T>(bias, o)) : acc;
    }
  }
}

/// project_rows for contiguous rows: x [rows][in], y [rows][out].
template <class T, class Rows, class In, class Out, class Bias>
constexpr void linear_rows(const T* x, Rows rows, In in, dense_weights<T> weight, Bias bias,
                           Out out, T* y) noexcept {
  const flush_scope<T> flush;  // (subnormals as the vector code treats them, detail/arch/subnormals.hpp)
  project_rows(x, in, rows, in, weight, bias, out, y, out);
}

/// The transposed projection: kt[o][j] = bias[o] + sum_i x[j][i] * weight[o][i]
/// for j < tokens, i.e. (x weight^T)^T, each sum in the order of project_rows
/// (so kt[o][j] equals project_rows' y[j][o] bit for bit). x: [tokens][in]
/// (row stride ldx), weight: [out][in] (its accessor), kt: [out][tokens] (row stride ldk,
/// e.g. the capacity of a KV cache). Used for the keys, stored transposed for
/// the attention kernels (scores are vectorised along keys).
template <class T, class Tokens, class In, class Out, class Bias>
constexpr void project_rows_t(const T* x, std::size_t ldx, Tokens tokens, In in,
                              dense_weights<T> weights, Bias bias, Out out, T* kt,
                              std::size_t ldk) noexcept {
  const T* const weight = weights.data;
  if (!std::is_constant_evaluated() && !small_sizes<Tokens, In, Out>) {
    gemm::gemm_abt<T>(out, tokens, in, weight, in, x, ldx, kt, ldk, nullptr, bias_pointer<T>(bias));
    return;
  }
  for (std::size_t o = 0; o < out; ++o) {
    const T* wo = weight + o * in;
    for (std::size_t j = 0; j < tokens; ++j) {
      const T* xj = x + j * ldx;
      T acc = T(0);
      for (std::size_t i = 0; i < in; ++i) acc = muladd(acc, xj[i], wo[i]);
      kt[o * ldk + j] = has_bias(bias) ? fp::add(acc, bias_at<T>(bias, o)) : acc;
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

/// The sum of part[0..L) by the vector code's pairwise tree (part[l] +=
/// part[l + w] for w = L/2, L/4, .., 1; L a power of two), in place; U a float
/// or a vector of them. The softmax mirrors sum their lanes in this order.
template <class U, std::size_t L>
MHA_DETAIL_INLINE constexpr U pairwise_lane_sum(U (&part)[L]) noexcept {
  static_assert(L != 0 && (L & (L - 1)) == 0, "pairwise_lane_sum: L must be a power of two");
#pragma GCC unroll 16
  for (std::size_t w = L / 2; w >= 1; w /= 2)
#pragma GCC unroll 16
    for (std::size_t l = 0; l < w; ++l) part[l] = fp::add(part[l], part[l + w]);
  return part[0];
}

/// pairwise_lane_sum of L parts of which only part[0..Live) may be nonzero,
/// the others +0 and not stored (part has Live elements), for parts that are
/// >= +0 or NaN (sums of exponentials): the additions of a +0 part are left
/// out, which changes no bit (x + +0 is x for such x), so the result has the
/// bits of pairwise_lane_sum over all L. W: the tree's current step (L/2 first;
/// Live shrinks with it, part keeps its size).
template <std::size_t L, std::size_t Live, std::size_t W = L / 2, class U, std::size_t N>
MHA_DETAIL_INLINE constexpr U pairwise_lane_sum_live(U (&part)[N]) noexcept {
  static_assert(L != 0 && (L & (L - 1)) == 0 && Live >= 1 && Live <= L && Live <= N);
  if constexpr (W == 0) {
    return part[0];
  } else {
    [&]<std::size_t... I>(std::index_sequence<I...>) MHA_DETAIL_LAMBDA_INLINE {
      const auto step = [&](auto l) MHA_DETAIL_LAMBDA_INLINE {
        constexpr std::size_t i = decltype(l)::value;
        if constexpr (i + W < Live) part[i] = fp::add(part[i], part[i + W]);
      };
      (step(std::integral_constant<std::size_t, I>{}), ...);
    }(std::make_index_sequence<W>{});
    return pairwise_lane_sum_live<L, (Live < W ? Live : W), W / 2>(part);
  }
}

/// The scalar mirror of softmax_row's float vector code, after the logit
/// step: s[0:len] holds the logits of one row and row_max their maximum
/// (with the sink's, when Sink); afterwards s[0:len] holds the attention
/// weights. Sink: `sink` (sink_term's exp(sink logit - row_max)) is added to
/// the denominator after the lane sums, as the vector code adds it.
/// simd::exp on a float computes one lane of simd::exp on a vector, and the
/// sum is built lane by lane (lane l holds the keys j = l (mod L), chunk after
/// chunk, padding lanes 0), then reduced with the vector code's pairwise tree,
/// so this gives the vector code's bits. Used by constant evaluation, the
/// small-shape scalar path and the token-major head of targets without vector
/// registers (token_major::attention_head_scalar).
template <bool Sink = false, class T>
MHA_DETAIL_INLINE constexpr void softmax_mirror_exp_normalize(T* s, std::size_t len, T row_max,
                                                               T sink = T(0)) noexcept {
  constexpr std::size_t L = simd::lanes<T>;
  const auto weight = [&](std::size_t j) MHA_DETAIL_LAMBDA_INLINE {
    const T e = static_cast<T>(simd::exp(static_cast<float>(fp::sub(s[j], row_max))));
    s[j] = e;
    return e;
  };
  // The first chunk starts each lane at its weight instead of adding it to 0:
  // the same value (a weight is +0, positive or NaN, never -0, so 0 + e == e).
  T lane[L];
#pragma GCC unroll 16
  for (std::size_t l = 0; l < L; ++l) lane[l] = l < len ? weight(l) : T(0);
  for (std::size_t j0 = L; j0 < len; j0 += L) {
#pragma GCC unroll 16
    for (std::size_t l = 0; l < L; ++l) {
      if (j0 + l >= len) break;
      lane[l] = fp::add(lane[l], weight(j0 + l));
    }
  }
  T sum = pairwise_lane_sum(lane);
  if constexpr (Sink) sum = fp::add(sum, sink);
  for (std::size_t j = 0; j < len; ++j) s[j] = fp::div(s[j], sum);
}

/// Step (c) of a policy with a sink (score_policy.hpp): the sink's term of
/// the softmax denominator, exp(sink - row_max) with the exponential of the
/// row's other terms (simd::exp's lane for float, detail::exp for double).
template <class T>
MHA_DETAIL_INLINE constexpr T sink_term(T sink, T row_max) noexcept {
  if constexpr (std::is_same_v<T, float>)
    return simd::exp(fp::sub(sink, row_max));
  else
    return detail::exp(sink - row_max);
}

/// softmax_mirror_exp_normalize after step (c) of a score policy (Steps: the
/// policy or its logit_steps): with a sink (Steps::has_sink) its logit joins
/// row_max (the maximum of s[0:len]) and its sink_term the denominator;
/// without, the call itself.
template <class T, class Steps>
MHA_DETAIL_INLINE constexpr void softmax_mirror_finish(T* s, std::size_t len, T row_max,
                                                       const Steps& steps,
                                                       std::size_t head) noexcept {
  if constexpr (Steps::has_sink) {
    const T sink = static_cast<T>(steps.sink_logit(head));
    row_max = sink > row_max ? sink : row_max;
    softmax_mirror_exp_normalize<true>(s, len, row_max, sink_term(sink, row_max));
  } else {
    static_cast<void>(steps);
    static_cast<void>(head);
    softmax_mirror_exp_normalize(s, len, row_max);
  }
}

/// Dropout of the weights s[0:len] of row i (batch b, head `head`), key j
/// of s at index first + j: each kept weight times drop.scale, each dropped
/// one 0, when drop.active; nothing is compiled for a no_dropout_state.
template <class T, class Drop>
MHA_DETAIL_INLINE constexpr void apply_dropout(T* s, std::size_t len, const Drop& drop,
                                               std::size_t b, std::size_t head, std::size_t i,
                                               std::size_t first = 0) noexcept {
  if constexpr (Drop::may_drop)
    if (drop.active)
      for (std::size_t j = 0; j < len; ++j)
        s[j] = drop.keep(b, head, i, first + j) ? fp::mul(s[j], drop.scale) : T(0);
}

/// Softmax of the score row of the query at position i in place, fast path:
/// s[0:len] holds the raw scores q_i . k_j of the keys j < len =
/// policy.span(i).last; afterwards it holds the attention weights (dropout
/// applied when active) and s[len:width] holds zeros (the masked keys of the
/// row's block, which then add nothing to the value product). The steps: the
/// logits (divide by `divisor`; then, for a policy that is not plain, its
/// logit step, score_policy.hpp (b)), subtract the row maximum (with the
/// policy's sink logit, (c)), exponentiate, divide by the sum (plus the
/// sink's term, (c)). For float the exponential is simd::exp and the sum is
/// taken lane-wise then across lanes, in a fixed order. Scalar: use the
/// scalar mirror of the vector code at run time too (small shapes); targets
/// without vector registers (simd::hardware_vectors false) always use it, as
/// the vector code would be lowered lane by lane there. Drop:
/// dropout_state<T>, or no_dropout_state<T> (no dropout code at all). Steps:
/// the steps (b) and (c) of the score policy, logit_steps(policy)
/// (plain_logits, an empty type passed by value, for causal_scores and
/// all_keys_scores: none of the steps compiles any code here). `first`: the
/// row starts at key first (a multiple of simd::lanes<T>: the keys before it
/// have weight 0 and are left untouched, key_span), s[first:len] its scores.
template <class T, bool Scalar = false, class Drop = dropout_state<T>,
          class Steps = plain_logits>
constexpr void softmax_row(T* s, std::size_t len, std::size_t width, T divisor, const Drop& drop,
                           std::size_t b, std::size_t head, std::size_t i,
                           Steps steps = {}, std::size_t first = 0) noexcept {
  // (the row from key `first` on, its keys counted from there; j + first is
  // key j's index for the logit step and the dropout stream)
  MHA_ASSERT(first <= len && first % simd::lanes<T> == 0);
  s += first;
  len -= first;
  width -= first;
  T row_max = -std::numeric_limits<T>::infinity();
  T sum = T(0);
  if constexpr (!Steps::plain) {
    // (b) the logit step, element by element (the same scalar calls on every
    // path); the row then holds logits, which the code below divides by 1
    // (x / 1 == x)
    for (std::size_t j = 0; j < len; ++j)
      s[j] = static_cast<T>(steps.logit(fp::div(s[j], divisor), head, i, j + first));
    divisor = T(1);
  }
  [[maybe_unused]] T sink = T(0);  // (c) the sink logit
  if constexpr (Steps::has_sink) sink = static_cast<T>(steps.sink_logit(head));
  if ((Scalar || !simd::hardware_vectors || std::is_constant_evaluated()) &&
      std::is_same_v<T, float>) {
    // Scalar mirror of the vector code below (softmax_mirror_exp_normalize).
    // The maximum does not depend on the order.
    for (std::size_t j = 0; j < len; ++j) {
      s[j] = fp::div(s[j], divisor);
      row_max = s[j] > row_max ? s[j] : row_max;
    }
    softmax_mirror_finish(s, len, row_max, steps, head);
  } else if constexpr (std::is_same_v<T, float>) {
    // whole vectors, then one partly loaded vector for the last len % L keys
    using V = simd::vec<T>;
    constexpr std::size_t L = simd::lanes<T>;
    if (len <= L) {
      // one (partly loaded) vector kept in registers; the same values as the
      // general loop below would give for this row
      V v = simd::load_partial(s, len, row_max);  // padding: -inf
      simd::divide_in_place(v, simd::broadcast(divisor));
      row_max = simd::reduce_max<T>(v);
      if constexpr (Steps::has_sink) row_max = sink > row_max ? sink : row_max;
      const V e = simd::keep_first<T>(simd::exp(v - row_max), len);
      sum = simd::reduce_sum<T>(e);
      if constexpr (Steps::has_sink) sum = fp::add(sum, sink_term(sink, row_max));
      V w = e;
      simd::divide_in_place(w, simd::broadcast(sum));
      simd::store_partial(s, w, len);
      apply_dropout(s, len, drop, b, head, i, first);
      for (std::size_t j = len; j < width; ++j) s[j] = T(0);
      return;
    }
    const std::size_t full = len / L * L;
    const std::size_t tail = len - full;
    V vmax = simd::broadcast(row_max);
    for (std::size_t j = 0; j < full; j += L) {
      V v = simd::load(s + j);
      simd::divide_in_place(v, simd::broadcast(divisor));
      simd::store(s + j, v);
      vmax = simd::max<T>(vmax, v);
    }
    if (tail != 0) {
      V v = simd::load_partial(s + full, tail, row_max);  // padding: -inf
      simd::divide_in_place(v, simd::broadcast(divisor));
      simd::store_partial(s + full, v, tail);
      vmax = simd::max<T>(vmax, v);
    }
    row_max = simd::reduce_max<T>(vmax);
    if constexpr (Steps::has_sink) row_max = sink > row_max ? sink : row_max;
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
    if constexpr (Steps::has_sink) sum = fp::add(sum, sink_term(sink, row_max));
    // (divide_in_place: lane by lane without a stack copy where there is no
    // vector division, MVE)
    const V vs = simd::broadcast(sum);
    for (std::size_t j = 0; j < full; j += L) {
      V w = simd::load(s + j);
      simd::divide_in_place(w, vs);
      simd::store(s + j, w);
    }
    if (tail != 0) {
      V w = simd::load_partial(s + full, tail);
      simd::divide_in_place(w, vs);
      simd::store_partial(s + full, w, tail);
    }
  } else {
    for (std::size_t j = 0; j < len; ++j) {
      s[j] = s[j] / divisor;
      row_max = s[j] > row_max ? s[j] : row_max;
    }
    if constexpr (Steps::has_sink) row_max = sink > row_max ? sink : row_max;
    for (std::size_t j = 0; j < len; ++j) {
      const T e = detail::exp(s[j] - row_max);
      s[j] = e;
      sum += e;
    }
    if constexpr (Steps::has_sink) sum += sink_term(sink, row_max);
    for (std::size_t j = 0; j < len; ++j) s[j] = s[j] / sum;
  }
  apply_dropout(s, len, drop, b, head, i, first);
  for (std::size_t j = len; j < width; ++j) s[j] = T(0);
}

/// Where one head reads its keys and values and writes its context, for one
/// sequence. Queries i = 0..n-1 sit at positions offset + i; key j (< offset
/// + n) is stored transposed, component d at kt[d * ldk + j] (the head's rows
/// of K^T [width][ldk], e.g. a KV cache of ldk = capacity tokens), value j at
/// v[j * ldv .. + head_dim). q: [n][head_dim] rows of stride ldq; out: [n][head_dim]
/// rows of stride ldo.
template <class T>
struct head_operands {
  const T* q;
  std::size_t ldq;
  const T* kt;
  std::size_t ldk;
  const T* v;
  std::size_t ldv;
  T* out;
  std::size_t ldo;
};

/// Where one head of one sequence writes its attention weights (PyTorch's
/// need_weights): query row i's weights over the keys at rows + i * ld, the
/// weights after dropout as the context uses them; nothing when rows is
/// null. `accumulate`: add to the row (the running sum of the head average)
/// instead of storing it. Only a row's first len entries are written: the
/// caller zeroes the rows first (masked keys have weight 0).
template <class T>
struct weights_sink {
  T* rows = nullptr;
  std::size_t ld = 0;
  bool accumulate = false;
  /// Row i's weights s[first:len] (the keys before first have weight 0).
  constexpr void put(std::size_t i, const T* s, std::size_t len,
                     std::size_t first = 0) const noexcept {
    if (rows == nullptr) return;
    T* const w = rows + i * ld;
    if (accumulate)
      for (std::size_t j = first; j < len; ++j) w[j] = fp::add(w[j], s[j]);
    else
      for (std::size_t j = first; j < len; ++j) w[j] = s[j];
  }
};

/// One attention head of one sequence (book section 3.5, PyTorch scaled
/// dot-product attention), queries at positions offset..offset+n-1 (a
/// KV-cache step when offset > 0), the keys of each and its logits given by
/// the score policy (score_policy.hpp; the default causal_scores:
/// is_causal=True over keys 0..p):
///
///   out[i] = sum_{j < keys(i)} w[i][j] * v[j],
///   w[i][:] = dropout(softmax_j(q[i] . k[j] / sqrt(head_dim)))
///   keys(i) = policy.span(offset + i).last (offset+i+1 for causal_scores,
///             every key for all_keys_scores)
///
/// This is the simple (constexpr) formulation, one score row at a time. Keys
/// after keys(i) are the masked -inf positions: they get weight exactly 0
/// and are skipped. It performs the same operations in the same order as
/// attention_head_blocked, so the two give identical results (also between
/// constant evaluation and run time): the dot products run over d from 0, the
/// softmax is softmax_row (the scalar mirror of its vector code when
/// `Scalar`), the context sums run over j from 0. `scores`: scratch for
/// keys(offset + n - 1) elements. `b` and `head` select the dropout stream;
/// the query's position is its row index i of the dropout stream. `divisor` is
/// sqrt(head_dim) as a T, divided (not multiplied by its inverse) as in the
/// book's `attn_scores / keys.shape[-1]**0.5`. `weights`: where the rows'
/// attention weights go (weights_sink; none by default).
template <bool Scalar, class T, class HeadDim, class Drop, score_policy Policy = causal_scores>
constexpr void attention_head_simple(const head_operands<T>& h, std::size_t n, std::size_t offset,
                                     HeadDim head_dim, T divisor, const Drop& drop,
                                     std::size_t b, std::size_t head, T* scores,
                                     const Policy& policy = {},
                                     const weights_sink<T>& weights = {}) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t p = offset + i;  // the query's position
    // (a) the keys it attends to: 0 .. last - 1 (those before span.first get
    // weight 0 from the logit step)
    const std::size_t keys = policy.span(p).last;
    const T* qi = h.q + i * h.ldq;
    for (std::size_t j = 0; j < keys; ++j) {
      T dot = T(0);
      for (std::size_t d = 0; d < head_dim; ++d) dot = muladd(dot, qi[d], h.kt[d * h.ldk + j]);
      scores[j] = dot;
    }
    softmax_row<T, Scalar>(scores, keys, keys, divisor, drop, b, head, p, logit_steps(policy));
    weights.put(i, scores, keys);
    T* oi = h.out + i * h.ldo;
    for (std::size_t d = 0; d < head_dim; ++d) oi[d] = T(0);
    for (std::size_t j = 0; j < keys; ++j) {
      const T w = scores[j];
      const T* vj = h.v + j * h.ldv;
      for (std::size_t d = 0; d < head_dim; ++d) oi[d] = muladd(oi[d], w, vj[d]);
    }
  }
}

/// One attention head of one sequence, run-time fast path (same operands,
/// score policy and result as attention_head_simple, bit for bit):
///
///   for each block of gemm::mr queries i0..i0+R-1 (the keys of its last
///   query only, policy.span(offset+i0+R-1).last: with causal_scores the
///   fully masked keys to the right are never computed; all_keys_scores:
///   every key):
///     S = Q_block K^T                  [R][keys]      (gemm::gemm_ab, along keys)
///     each row: softmax_row            (masked tail of the block set to 0)
///     out_block = S V                  [R][head_dim]  (gemm::gemm_ab, along head_dim)
///
/// A decode step (n == 1) reads every cached key and value once, in vectors.
/// `scores`: scratch for gemm::mr rows of ld_scores >= the key count
/// (one block of score rows, never N x N). Not constexpr.
template <class T, class HeadDim, class Drop, score_policy Policy = causal_scores>
inline void attention_head_blocked(const head_operands<T>& h, std::size_t n, std::size_t offset,
                                   HeadDim head_dim, T divisor, const Drop& drop,
                                   std::size_t b, std::size_t head, T* scores,
                                   std::size_t ld_scores, const Policy& policy = {},
                                   const weights_sink<T>& weights = {}) noexcept {
  constexpr std::size_t L = simd::lanes<T>;
  // keys that exist: those of the last query (spans are nondecreasing)
  const std::size_t total = policy.span(offset + n - 1).last;
  for (std::size_t i0 = 0; i0 < n; i0 += gemm::mr) {
    const std::size_t rows = n - i0 < gemm::mr ? n - i0 : gemm::mr;
    // (a) the block's keys: from its first query's first (rounded down to a
    // whole vector, key_span: a sliding window's keys; 0 otherwise) to its
    // last query's last
    const std::size_t first = policy.span(offset + i0).first / L * L;
    const std::size_t keys = policy.span(offset + i0 + rows - 1).last;
    // score columns rounded up to whole vectors while they stay among the existing keys
    const std::size_t rounded = (keys + L - 1) / L * L;
    const std::size_t cols = rounded < total ? rounded : total;
    gemm::gemm_ab<T>(rows, cols - first, head_dim, h.q + i0 * h.ldq, h.ldq, h.kt + first, h.ldk,
                     scores + first, ld_scores, false);
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t len = policy.span(offset + i0 + r).last;  // (a) the row's keys
      softmax_row<T>(scores + r * ld_scores, len, keys, divisor, drop, b, head, offset + i0 + r,
                     logit_steps(policy), first);
      weights.put(i0 + r, scores + r * ld_scores, len, first);
    }
    gemm::gemm_ab<T>(rows, head_dim, keys - first, scores + first, ld_scores, h.v + first * h.ldv,
                     h.ldv, h.out + i0 * h.ldo, h.ldo, false);
  }
}

/// Context of one query row over `keys` value rows, for NV (<= 4) vectors of
/// head features starting at out: out[c] = sum_j w[j] * v[j][c], the keys taken
/// P at a time into P partial sums (independent chains, so the loop is bound by
/// throughput rather than by the multiply-add latency), added pairwise at the
/// end. The last vector holds `tail` features when Partial.
template <class T, std::size_t NV, bool Partial>
MHA_DETAIL_INLINE void decode_context_tile(const T* w, std::size_t keys, const T* v, std::size_t ldv,
                                           T* out, std::size_t tail) noexcept {
  using V = simd::vec<T>;
  constexpr std::size_t L = simd::lanes<T>;
  constexpr std::size_t P = simd::vector_bytes == 64 ? 4 : 2;  // partial sums (register budget)
  const auto ld = [tail](const T* p, std::size_t c) {
    if (Partial && c == NV - 1) return simd::load_partial(p, tail);
    return simd::load(p);
  };
  V acc[P][NV];
#pragma GCC unroll 4
  for (std::size_t u = 0; u < P; ++u)
#pragma GCC unroll 4
    for (std::size_t c = 0; c < NV; ++c) acc[u][c] = V{};
  std::size_t j = 0;
  for (; j + P <= keys; j += P) {
#pragma GCC unroll 4
    for (std::size_t u = 0; u < P; ++u) {
      const T wj = w[j + u];
      const T* row = v + (j + u) * ldv;
#pragma GCC unroll 4
      for (std::size_t c = 0; c < NV; ++c) acc[u][c] = muladd(acc[u][c], wj, ld(row + c * L, c));
    }
  }
  for (; j < keys; ++j) {
    const T* row = v + j * ldv;
#pragma GCC unroll 4
    for (std::size_t c = 0; c < NV; ++c) acc[0][c] = muladd(acc[0][c], w[j], ld(row + c * L, c));
  }
#pragma GCC unroll 4
  for (std::size_t c = 0; c < NV; ++c) {
    V sum = acc[0][c];
    if constexpr (P == 4)
      sum = (acc[0][c] + acc[1][c]) + (acc[2][c] + acc[3][c]);
    else
      sum = acc[0][c] + acc[1][c];
    if (Partial && c == NV - 1)
      simd::store_partial(out + c * L, sum, tail);
    else
      simd::store(out + c * L, sum);
  }
}

/// decode_context_tile for the last `vectors` (1..4) vectors of a head, the
/// last one holding `tail` features when tail != 0.
template <class T, std::size_t NV>
MHA_DETAIL_INLINE void decode_context_edge(std::size_t vectors, std::size_t tail, const T* w,
                                           std::size_t keys, const T* v, std::size_t ldv,
                                           T* out) noexcept {
  if constexpr (NV >= 1) {
    if (vectors == NV) {
      if (tail != 0)
        decode_context_tile<T, NV, true>(w, keys, v, ldv, out, tail);
      else
        decode_context_tile<T, NV, false>(w, keys, v, ldv, out, 0);
      return;
    }
    decode_context_edge<T, NV - 1>(vectors, tail, w, keys, v, ldv, out);
  }
}

/// One attention head (index `head`) for one query at position `position`
/// attending to the keys policy.span(position) (a KV-cache decode step; the
/// default causal_scores: keys 0..position), operands as head_operands (one
/// query row). Same result definition as attention_head_blocked, computed for
/// a single row at the speed of the memory: the scores run along the keys in
/// chunks of many vectors (one K^T row segment after another, each key's sum
/// sequential over d as in the blocked kernel), and the context sums the value
/// rows into partial sums (so a decode row equals the blocked kernel's to
/// rounding, not bit for bit; the same for the fixed-size and the dynamic
/// modules). `scores`: scratch for span.last elements. Not constexpr.
template <class T, class HeadDim, score_policy Policy = causal_scores>
inline void attention_head_decode(const head_operands<T>& h, std::size_t position,
                                  HeadDim head_dim, T divisor, T* scores, const Policy& policy = {},
                                  std::size_t head = 0) noexcept {
  // (a) the query's keys: 0 .. last - 1 (those before span.first get weight 0
  // from the logit step)
  const std::size_t keys = policy.span(position).last;
  using V = simd::vec<T>;
  constexpr std::size_t L = simd::lanes<T>;
  constexpr std::size_t C = simd::vector_bytes == 64 ? 16 : 8;  // key vectors per chunk
  const std::size_t full = keys / L * L;
  for (std::size_t j0 = 0; j0 < full; j0 += C * L) {
    const std::size_t nv = (full - j0) / L < C ? (full - j0) / L : C;
    V acc[C];
#pragma GCC unroll 16
    for (std::size_t c = 0; c < C; ++c) acc[c] = V{};
    if (nv == C) {
      for (std::size_t d = 0; d < head_dim; ++d) {
        const T qd = h.q[d];
        const T* row = h.kt + d * h.ldk + j0;
#pragma GCC unroll 16
        for (std::size_t c = 0; c < C; ++c) acc[c] = muladd(acc[c], qd, simd::load(row + c * L));
      }
    } else {
      for (std::size_t d = 0; d < head_dim; ++d) {
        const T qd = h.q[d];
        const T* row = h.kt + d * h.ldk + j0;
        for (std::size_t c = 0; c < nv; ++c) acc[c] = muladd(acc[c], qd, simd::load(row + c * L));
      }
    }
    for (std::size_t c = 0; c < nv; ++c) simd::store(scores + j0 + c * L, acc[c]);
  }
  if (full < keys) {
    V acc{};
    for (std::size_t d = 0; d < head_dim; ++d)
      acc = muladd(acc, h.q[d], simd::load_partial(h.kt + d * h.ldk + full, keys - full));
    simd::store_partial(scores + full, acc, keys - full);
  }
  softmax_row<T>(scores, keys, keys, divisor, no_dropout_state<T>{}, 0, head, position,
                 logit_steps(policy));
  std::size_t d0 = 0;
  for (; d0 + 4 * L <= head_dim; d0 += 4 * L)
    decode_context_tile<T, 4, false>(scores, keys, h.v + d0, h.ldv, h.out + d0, 0);
  if (d0 < head_dim) {
    const std::size_t rest = head_dim - d0;
    decode_context_edge<T, 4>((rest + L - 1) / L, rest % L, scores, keys, h.v + d0, h.ldv,
                              h.out + d0);
  }
}

}  // namespace MHA_DETAIL_ISA
}  // namespace mha::detail

#include <mha/detail/macros_undef.hpp>
