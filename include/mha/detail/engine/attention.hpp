// mha/detail/engine/attention.hpp -- the one forward orchestration behind every
// attention module, fixed-size and mha::dynamic:
//
//   for each group g of heads:   Q_g = x W_query_g^T (+ b),  K_g, V_g likewise
//                                 (K stored transposed, at the store's positions)
//   with RoPE:                    Q, K rotated by position (detail/kernels/rope.hpp)
//   for each head h:              C_h = softmax(Q_h K_g^T / sqrt(head_dim)) V_g
//                                 g = h / (num_heads / num_kv_heads), its key/value head
//                                 (queries at positions offset.., the keys of the
//                                 spec's score policy: 0..position when causal,
//                                 every key otherwise; kernels/score_policy.hpp)
//   out = C out_proj^T + b        (or out = C when the module has no out_proj)
//
// A module describes itself by an attention_spec: its sizes (each a size_c or
// a std::size_t, see kernels/sizes.hpp), its heads' Q/K/V weights by group (the book's
// MultiHeadAttention and the fused module: one group whose weight rows are all
// heads, so one product serves all heads; the wrapper: one group per head),
// its out_proj or none, the score divisor and the dropout probability. The
// orchestration then takes one of the paths below; every path performs, per
// output element, the same operations in the same order, so they give the
// same bits (the decode path excepted, see kernels/gemv.hpp):
//
//  * simple: constant evaluation, and small constant shapes at run time
//    (project_rows' loops, attention_head_simple);
//  * token-major: causal float inference with compile-time sizes on at most
//    token_major::tokens_limit tokens (kernels/token_major.hpp; at most max_tokens);
//  * blocked: everything else (kernels/gemm.hpp tiles, attention_head_blocked), one
//    sequence at a time;
//  * decode: a KV-cache call of at most decode_rows new tokens per sequence:
//    matrix-vector projections that read every weight once (kernels/gemv.hpp), then
//    the blocked heads over the cache.
//
// The steps are written once: project_qkv (Q/K/V and RoPE), for_each_head (each
// query head with its key/value head) and project_out, over a schedule of rows
// that says where each row's data lives and which products serve it
// (sequence_rows: the simple and blocked paths; decode_row_set: the decode
// path; transposed_rows: the token-major path, whose heads are
// kernels/token_major.hpp's over the transposed tiles, with the same
// key/value-head mapping, attention_spec::kv_head).
//
// Keys and values live in a store: the workspace for a whole-sequence forward,
// a KV cache for a cached one. Per sequence, K^T is [kv_width][ldk] (key j's
// component f at kt[f * ldk + j]: scores are vectorised along keys; key/value
// head g's keys are rows [g*head_dim, (g+1)*head_dim)) and V is
// [num_kv_heads][ldk][head_dim] (head g's value of key j at v[(g * ldk + j) *
// head_dim]: the context is vectorised along head_dim, and one head's values
// are one contiguous block). kv_width = num_kv_heads * head_dim; every module
// but grouped_query_attention has num_kv_heads == num_heads.
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <mha/config.hpp>
#include <mha/detail/kernels/dropout.hpp>
#include <mha/detail/kernels/gemm.hpp>
#include <mha/detail/kernels/gemv.hpp>
#include <mha/detail/kernels/kernels.hpp>
#include <mha/detail/kernels/rope.hpp>
#include <mha/detail/kernels/score_policy.hpp>
#include <mha/detail/kernels/sizes.hpp>
#include <mha/detail/arch/subnormals.hpp>
#include <mha/detail/kernels/token_major.hpp>
#include <mha/detail/kernels/weights.hpp>
#include <mha/detail/engine/executor.hpp>

#include <mha/detail/macros.hpp>

namespace mha::detail {
MHA_DETAIL_ISA_NAMESPACE {

/// The Q/K/V weights of one group of heads: each [group_width][d_in] in the
/// nn.Linear layout, read through the accessor Weights (dense_weights<T>:
/// contiguous rows of T; kernels/weights.hpp, made by weight_access); biases
/// as the kernels take them (present_bias, nullptr_t or const T*); the
/// group's dropout probability.
template <class T, class Bias, class Weights = dense_weights<T>>
struct qkv_weights {
  Weights query;
  Bias query_bias;
  Weights key;
  Bias key_bias;
  Weights value;
  Bias value_bias;
  T dropout;
};

/// out_proj: weight [width][width] (nn.Linear layout, through the accessor
/// Weights), bias [width].
template <class T, class Bias, class Weights = dense_weights<T>>
struct out_weights {
  Weights weight;
  Bias bias;
};
/// The module has no out_proj: the concatenated context is the output.
struct no_out_proj {};

/// One attention module as the orchestration sees it. DIn, HeadDim, NumHeads,
/// KvHeads and Groups are size_c or std::size_t; Groups divides KvHeads,
/// KvHeads divides NumHeads. `group(g)` returns the qkv_weights of query heads
/// [g * heads_per_group, ...) and of their key/value heads, which produce
/// columns [g * group_width, (g+1) * group_width) of Q and [g *
/// kv_group_width, ...) of K and V (g a size_c in the fixed-size modules'
/// fold, a std::size_t otherwise). Query head h reads key/value head h /
/// (NumHeads / KvHeads) (grouped-query attention; KvHeads == NumHeads: every
/// head its own). `rope`: rope_tables (queries and keys rotated by position,
/// detail/kernels/rope.hpp) or no_rope_tables. Scores: the type of the score
/// policy `scores` (kernels/score_policy.hpp) whose scores.over(keys) every
/// head kernel of a call takes: causal_scores (the default), all_keys_scores
/// (mha::attention_mask::none: no KV-cache forward, no token-major path), or
/// a policy with logit or sink steps (make_score_policy). `executor` runs the
/// call's sequences (engine/executor.hpp: serial_executor; with_executor).
template <class T, class DIn, class HeadDim, class NumHeads, class Groups, class GroupFn,
          class OutProj, class KvHeads = NumHeads, class Rope = no_rope_tables,
          score_policy Scores = causal_scores, class Executor = serial_executor>
struct attention_spec {
  using value_type = T;
  using scores_type = Scores;
  using executor_type = Executor;
  // (every sequence of a call uses the one scratch of the workspace)
  static_assert(Executor::workers == 1,
                "detail::attention_spec: a workspace holds the scratch of one sequence at a time");
  /// Causal (the query at position p attends to keys 0..p) or not (every key).
  static constexpr bool causal = Scores::causal;
  DIn d_in;
  HeadDim head_dim;
  NumHeads num_heads;
  Groups groups;
  GroupFn group;
  OutProj out_proj;  ///< out_weights, or no_out_proj
  T divisor;         ///< sqrt(head_dim) as a T
  KvHeads num_kv_heads;
  Rope rope;
  Scores scores;
  Executor executor;
  static constexpr bool has_out_proj = !std::is_same_v<OutProj, no_out_proj>;
  static constexpr bool has_rope = !std::is_same_v<Rope, no_rope_tables>;
  /// num_heads * head_dim: the width of Q, the context and the output.
  constexpr auto width() const noexcept { return size_mul(head_dim, num_heads); }
  constexpr auto group_width() const noexcept { return size_div(width(), groups); }
  /// num_kv_heads * head_dim: the width of K and V.
  constexpr auto kv_width() const noexcept { return size_mul(head_dim, num_kv_heads); }
  constexpr auto kv_group_width() const noexcept { return size_div(kv_width(), groups); }
  /// Query heads per key/value head.
  constexpr auto heads_per_kv() const noexcept { return size_div(num_heads, num_kv_heads); }
  /// The key/value head query head h reads: h / heads_per_kv() (a size_c for a
  /// size_c h and constant head counts).
  template <class H>
  constexpr auto kv_head(H h) const noexcept { return size_div(h, heads_per_kv()); }
};

/// The spec of a module with score options Scores (mha::attention_scores; its
/// policy make_score_policy<T, Scores>(num_heads, params), kernels/score_policy.hpp,
/// with the options' learned parameters `params`: the module's score_params, or
/// none).
template <class T, attention_scores Scores = attention_scores{}, class DIn, class HeadDim,
          class NumHeads, class Groups, class GroupFn, class OutProj,
          class Params = no_score_parameters>
constexpr auto make_spec(DIn d_in, HeadDim head_dim, NumHeads num_heads, Groups groups,
                         GroupFn group, OutProj out_proj, T divisor,
                         const Params& params = {}) noexcept {
  const auto scores = make_score_policy<T, Scores>(num_heads, params);
  return attention_spec<T, DIn, HeadDim, NumHeads, Groups, GroupFn, OutProj, NumHeads,
                        no_rope_tables, std::remove_cv_t<decltype(scores)>>{
      d_in, head_dim, num_heads, groups, group, out_proj, divisor, num_heads, no_rope_tables{},
      scores, serial_executor{}};
}
/// A grouped-query spec: one group holding every head (group(0)'s key and
/// value weights are [num_kv_heads * head_dim][d_in]), num_kv_heads key/value
/// heads, the rope tables or none; the score policy as make_spec's.
template <class T, attention_scores Scores = attention_scores{}, class DIn, class HeadDim,
          class NumHeads, class KvHeads, class GroupFn, class OutProj, class Rope,
          class Params = no_score_parameters>
constexpr auto make_grouped_spec(DIn d_in, HeadDim head_dim, NumHeads num_heads,
                                 KvHeads num_kv_heads, GroupFn group, OutProj out_proj, T divisor,
                                 Rope rope, const Params& params = {}) noexcept {
  const auto one = [] {
    if constexpr (is_size_c<NumHeads>)
      return size_c<1>{};
    else
      return std::size_t{1};
  }();
  using Groups = std::remove_cv_t<decltype(one)>;
  static_assert(is_size_c<NumHeads> == is_size_c<Groups>);  // (a size_c with compile-time heads)
  const auto scores = make_score_policy<T, Scores>(num_heads, params);
  return attention_spec<T, DIn, HeadDim, NumHeads, Groups, GroupFn, OutProj, KvHeads, Rope,
                        std::remove_cv_t<decltype(scores)>>{
      d_in, head_dim, num_heads, one, group, out_proj, divisor, num_kv_heads, rope, scores,
      serial_executor{}};
}

/// Spec s run by executor e instead of its own.
template <class T, class DIn, class HeadDim, class NumHeads, class Groups, class GroupFn,
          class OutProj, class KvHeads, class Rope, class Scores, class OldExecutor, class Executor>
constexpr auto with_executor(const attention_spec<T, DIn, HeadDim, NumHeads, Groups, GroupFn,
                                                  OutProj, KvHeads, Rope, Scores, OldExecutor>& s,
                             Executor e) noexcept {
  return attention_spec<T, DIn, HeadDim, NumHeads, Groups, GroupFn, OutProj, KvHeads, Rope, Scores,
                        Executor>{s.d_in,    s.head_dim,     s.num_heads, s.groups,
                                  s.group,   s.out_proj,     s.divisor,   s.num_kv_heads,
                                  s.rope,    s.scores,       e};
}

/// True when the spec's module rotates queries and keys (RoPE: its tables end
/// at context_length, which then bounds the positions of a stream).
template <class Spec>
constexpr bool rotates(const Spec& s) noexcept {
  if constexpr (Spec::has_rope)
    return s.rope.enabled;
  else
    return false;
}

/// Most new tokens per sequence of a cached call that take the matrix-vector
/// decode path; more take the blocked kernels.
inline constexpr std::size_t decode_rows = 8;

/// Keys and values of `batch` sequences: sequence b's K^T at key_t + b *
/// batch_stride ([kv_width][ldk]) and its V at value + b * batch_stride
/// ([num_kv_heads][ldk][head_dim]).
template <class T>
struct kv_store {
  T* key_t;
  T* value;
  std::size_t ldk;           ///< positions per sequence (capacity)
  std::size_t batch_stride;  ///< elements per sequence (kv_width * ldk)
};

/// The tokens a rolling KV cache keeps beyond its window (kv_slots): any
/// truncate() that drops at most this many of the last tokens is honoured
/// (a speculative decoder's rejected draft tokens).
inline constexpr std::size_t kv_rollback = 8;
/// The columns (tokens) per sequence of a rolling KV cache of window W:
/// 2W - 1 + kv_rollback (the W - 1 tokens the next query needs, kv_rollback
/// more, and room for W new ones).
constexpr std::size_t kv_rolling_slots(std::size_t window) noexcept {
  return 2 * window - 1 + kv_rollback;
}
/// True when a KV cache of a module with context_length positions and a
/// sliding window (attention_scores::sliding_window; 0: none) rolls: when
/// kv_rolling_slots(window) < context_length. It then holds the last tokens
/// only (kv_slots of them), not every position.
constexpr bool kv_rolls(std::size_t context_length, std::size_t window) noexcept {
  return window > 0 && kv_rolling_slots(window) < context_length;
}
/// The columns (tokens) per sequence of such a cache: context_length, or for
/// a rolling one kv_rolling_slots(window).
constexpr std::size_t kv_slots(std::size_t context_length, std::size_t window) noexcept {
  return kv_rolls(context_length, window) ? kv_rolling_slots(window) : context_length;
}

/// Which positions a KV store holds: positions first .. size-1 at columns 0 ..
/// size-first-1 of `slots` per sequence; window > 0 for a rolling store
/// (kv_rolls), which may drop its oldest tokens.
struct kv_positions {
  std::size_t size;
  std::size_t first;
  std::size_t slots;
  std::size_t window;
};

/// Appends n new tokens per sequence to `store` (kv_width = kv_heads *
/// head_dim features, `batch` sequences): run(row0, rows, column, first)
/// computes rows row0 .. row0+rows-1 of each sequence, whose keys and values
/// go to columns column .. (positions first + column ..). A store that does
/// not roll takes all n at once (the caller has checked that they fit). A
/// rolling one takes them in pieces of at most `window` tokens; before a
/// piece that would not fit, it keeps its last window - 1 + kv_rollback
/// tokens (every next query's window, and kv_rollback for truncate()) as
/// columns 0 .., a copy of that many columns per sequence at most once per
/// `window` new tokens. `pos` is updated.
template <class T, class Run>
void append_to_store(const kv_store<T>& store, std::size_t batch, std::size_t kv_heads,
                     std::size_t head_dim, kv_positions& pos, std::size_t n, Run run) noexcept {
  if (pos.window == 0) {
    run(std::size_t{0}, n, pos.size - pos.first, pos.first);
    pos.size += n;
    return;
  }
  const std::size_t keep = pos.window - 1 + kv_rollback;
  const std::size_t piece = pos.slots - keep;  // (= window)
  const std::size_t kv_width = kv_heads * head_dim;
  for (std::size_t row0 = 0; row0 < n;) {
    const std::size_t rows = n - row0 < piece ? n - row0 : piece;
    std::size_t used = pos.size - pos.first;
    if (used + rows > pos.slots) {  // keep columns used - keep .. used - 1 as 0 .. keep - 1
      const std::size_t shift = used - keep;
      for (std::size_t b = 0; b < batch; ++b) {
        T* const kt = store.key_t + b * store.batch_stride;
        T* const v = store.value + b * store.batch_stride;
        for (std::size_t f = 0; f < kv_width; ++f)
          for (std::size_t j = 0; j < keep; ++j) kt[f * store.ldk + j] = kt[f * store.ldk + shift + j];
        for (std::size_t g = 0; g < kv_heads; ++g)
          for (std::size_t e = 0; e < keep * head_dim; ++e)
            v[g * store.ldk * head_dim + e] = v[(g * store.ldk + shift) * head_dim + e];
      }
      pos.first += shift;
      used = keep;
    }
    run(row0, rows, used, pos.first);
    pos.size += rows;
    row0 += rows;
  }
}

/// Scratch of the forward calls, all in the caller's workspace except the
/// score rows (scores: gemm::mr rows of ld_scores elements).
template <class T>
struct attention_scratch {
  T* query;    ///< [rows][width]
  T* context;  ///< [rows][width]
  T* scores;
  std::size_t ld_scores;
};

/// Where a whole-sequence forward writes the attention weights (PyTorch's
/// need_weights=True): sequence b's head h's [rows][ld] block at base + b *
/// batch_stride + h * head_stride, or with `average` the heads' mean
/// (average_attn_weights=True) in one [rows][ld] block per sequence
/// (head_stride 0). base null: no weights. The caller zeroes the blocks
/// first; a row's masked keys are then left at 0.
template <class T>
struct weights_out {
  T* base = nullptr;
  std::size_t ld = 0;            ///< elements between query rows (the keys' extent)
  std::size_t head_stride = 0;   ///< elements between heads (0 with average)
  std::size_t batch_stride = 0;  ///< elements between sequences
  bool average = false;
  /// The same for the sequence `b` places later.
  constexpr weights_out at_sequence(std::size_t b) const noexcept {
    weights_out w = *this;
    if (base != nullptr) w.base = base + b * batch_stride;
    return w;
  }
};

/// The rows keys and values are projected from: the query input itself
/// (self-attention; rows = the query rows) or another input (cross-attention:
/// `rows` tokens, key rows of `key_dim` features at `key`, value rows of
/// `value_dim` at `value`, each row after row).
template <class T, class KeyDim, class ValueDim, class Rows>
struct kv_rows {
  const T* key;
  KeyDim key_dim;
  const T* value;
  ValueDim value_dim;
  Rows rows;
};
/// Self-attention: no other input.
struct self_kv {};

/// The pipeline's rows: one pass of step 1 (Q/K/V projections and RoPE,
/// project_qkv) and step 3 (out_proj, project_out) over a set of token rows,
/// in one of two schedules. Step 2 (the heads, for_each_head) runs per
/// sequence between them. A schedule says where each row's query, key, value,
/// context and output are and which product kernels serve them:
///
/// sequence_rows: n consecutive token rows of one sequence (x, row stride
/// d_in) at store columns offset .. offset+n-1 (positions first_position +
/// offset ..: 0 but in a rolling KV cache), keys and
/// values from `src` (the same rows, or the kv_rows of a cross-attention's
/// other input, whose keys go to columns offset .. offset+src.rows-1); kernels.hpp's project_rows and
/// project_rows_t (simple loops, or blocked tiles). Q into query [n][width],
/// K^T into kt [kv_width][ldk], V into v [num_kv_heads][ldk][head_dim], the
/// context [n][width] (row stride width) into out [n][width].
template <class T, class DIn, class N, class Src>
struct sequence_rows {
  const T* x;
  DIn d_in;
  N n;
  Src src;
  T* query;
  T* kt;
  T* v;
  std::size_t ldk;
  std::size_t offset;
  const T* context;
  T* out;
  std::size_t width;
  std::size_t first_position = 0;  ///< the position of store column 0 (RoPE's positions)
  static constexpr bool values_by_group = false;  ///< (V per key/value head, project_qkv)
  constexpr auto value_dim() const noexcept { return src.value_dim; }
  template <class Weights, class Bias, class Cols>
  constexpr void query_block(Weights w, Bias bias, std::size_t first, Cols cols) const noexcept {
    project_rows(x, d_in, n, d_in, w, bias, cols, query + first, width);
  }
  template <class Weights, class Bias, class Cols>
  constexpr void key_block(Weights w, Bias bias, std::size_t first, Cols cols) const noexcept {
    project_rows_t(src.key, src.key_dim, src.rows, src.key_dim, w, bias, cols,
                   kt + first * ldk + offset, ldk);
  }
  template <class Weights, class Bias, class HeadDim>
  constexpr void value_block(Weights w, Bias bias, std::size_t kv,
                             HeadDim head_dim) const noexcept {
    project_rows(src.value, src.value_dim, src.rows, src.value_dim, w, bias, head_dim,
                 v + (kv * ldk + offset) * head_dim, head_dim);
  }
  template <class Rope, class Heads, class KvHeads, class HeadDim>
  constexpr void rotate(const Rope& rope, Heads heads, KvHeads kv_heads,
                        HeadDim head_dim) const noexcept {
    apply_rope(rope, query, n, width, 1, heads, head_dim, first_position + offset);
    apply_rope(rope, kt + offset, src.rows, 1, ldk, kv_heads, head_dim, first_position + offset);
  }
  /// (w_width: the width as the spec has it, a size_c when it is constant)
  template <class Weights, class Bias, class Width>
  constexpr void out_block(Weights w, Bias bias, Width w_width) const noexcept {
    project_rows(context, width, n, w_width, w, bias, w_width, out, width);
  }
};

/// decode_row_set: up to decode_rows token rows of a cached call, by pointer
/// (any sequences; row k at position pos[k], RoPE's); gemv::project, matrix-vector
/// products that read each weight once per gemv::max_rows rows. Row k's query
/// at qr[k] (width elements), its key in the K^T column kr[k] (stride ldk),
/// its value of key/value head kv at vr[k] + kv * ldk * head_dim, its context
/// at cr[k] and its output at orow[k].
template <class T, class DIn>
struct decode_row_set {
  std::size_t rows = 0;
  DIn d_in;
  std::size_t width = 0;
  std::size_t ldk = 0;
  const T* xr[decode_rows] = {};
  T* qr[decode_rows] = {};
  T* kr[decode_rows] = {};
  T* vr[decode_rows] = {};  // the value row of key/value head 0
  const T* cr[decode_rows] = {};
  T* orow[decode_rows] = {};
  std::size_t pos[decode_rows] = {};
  static constexpr bool values_by_group = false;  ///< (V per key/value head, project_qkv)
  constexpr auto value_dim() const noexcept { return d_in; }
  template <class Weights, class Bias, class Cols>
  void query_block(Weights w, Bias bias, std::size_t first, Cols cols) const noexcept {
    gemv::project<T>(rows, xr, d_in, w, bias_pointer<T>(bias), cols, qr, first, 1);
  }
  template <class Weights, class Bias, class Cols>
  void key_block(Weights w, Bias bias, std::size_t first, Cols cols) const noexcept {
    gemv::project<T>(rows, xr, d_in, w, bias_pointer<T>(bias), cols, kr, first, ldk);
  }
  template <class Weights, class Bias, class HeadDim>
  void value_block(Weights w, Bias bias, std::size_t kv, HeadDim head_dim) const noexcept {
    T* vh[decode_rows] = {};
    for (std::size_t k = 0; k < rows; ++k) vh[k] = vr[k] + kv * ldk * head_dim;
    gemv::project<T>(rows, xr, d_in, w, bias_pointer<T>(bias), head_dim, vh, 0, 1);
  }
  template <class Rope, class Heads, class KvHeads, class HeadDim>
  void rotate(const Rope& rope, Heads heads, KvHeads kv_heads, HeadDim head_dim) const noexcept {
    for (std::size_t k = 0; k < rows; ++k) {
      apply_rope(rope, qr[k], 1, width, 1, heads, head_dim, pos[k]);
      apply_rope(rope, kr[k], 1, 1, ldk, kv_heads, head_dim, pos[k]);
    }
  }
  template <class Weights, class Bias, class Width>
  void out_block(Weights w, Bias bias, Width w_width) const noexcept {
    gemv::project<T>(rows, cr, width, w, bias_pointer<T>(bias), w_width, orow, 0, 1);
  }
};

/// transposed_rows: the token-major path's schedule (kernels/token_major.hpp,
/// float inference with compile-time sizes): the batch's tokens are columns,
/// sequence b's token i column b * np + i of cols = batch * np (np: the tokens
/// rounded up to whole vectors of W). x^T in xt [d_in][cols] (padding columns
/// zero); Q^T into qt [width][cols], K^T into kt and V^T into vt
/// [kv_width][cols] (key/value head kv's rows kv * head_dim ..), the context
/// C^T in ct [width][cols], out^T into qt; token_major::project, which reads
/// the weights in their nn.Linear layout. Positions are 0.. per sequence.
template <class T, std::size_t W, class DIn, class Batch, class Tokens, class Padded>
struct transposed_rows {
  const T* xt;
  T* qt;
  T* kt;
  T* vt;
  const T* ct;
  Batch batch;
  Tokens tokens;
  Padded np;
  decltype(size_mul(Batch{}, Padded{})) cols;
  /// V^T is stored like K^T: projected one group's rows at a time (project_qkv).
  static constexpr bool values_by_group = true;
  template <class Weights, class Bias, class Cols>
  void query_block(Weights w, Bias bias, std::size_t first, Cols) const noexcept {
    token_major::project<T, W, Cols::value, DIn::value>(w, bias_pointer<T>(bias), xt,
                                                        qt + first * cols, cols);
  }
  template <class Weights, class Bias, class Cols>
  void key_block(Weights w, Bias bias, std::size_t first, Cols) const noexcept {
    token_major::project<T, W, Cols::value, DIn::value>(w, bias_pointer<T>(bias), xt,
                                                        kt + first * cols, cols);
  }
  template <class Weights, class Bias, class Cols>
  void value_group_block(Weights w, Bias bias, std::size_t first, Cols) const noexcept {
    token_major::project<T, W, Cols::value, DIn::value>(w, bias_pointer<T>(bias), xt,
                                                        vt + first * cols, cols);
  }
  template <class Rope, class Heads, class KvHeads, class HeadDim>
  void rotate(const Rope& rope, Heads heads, KvHeads kv_heads, HeadDim head_dim) const noexcept {
    for (std::size_t b = 0; b < batch; ++b) {
      apply_rope(rope, qt + b * np, tokens, 1, cols, heads, head_dim, 0);
      apply_rope(rope, kt + b * np, tokens, 1, cols, kv_heads, head_dim, 0);
    }
  }
  template <class Weights, class Bias, class Width>
  void out_block(Weights w, Bias bias, Width) const noexcept {
    token_major::project<T, W, Width::value, Width::value>(w, bias_pointer<T>(bias), ct, qt, cols);
  }
};

/// Step 1: the rows' Q, K and V projections, group by group (Q and K of group
/// g's heads, columns [g * group_width, ...) and [g * kv_group_width, ...)),
/// RoPE on Q and K, then V: one key/value-head block at a time where each
/// head's values are a block of their own (sequence_rows, decode_row_set:
/// [num_kv_heads][ldk][head_dim]), one group's rows at a time where V is
/// stored like K (Rows::values_by_group: transposed_rows' V^T). Each element
/// is the same sum either way.
template <class Spec, class Rows>
constexpr void project_qkv(const Spec& s, const Rows& rows) noexcept {
  const auto gw = s.group_width();
  const auto kgw = s.kv_group_width();
  const auto hpg = size_div(s.num_kv_heads, s.groups);  // key/value heads per group
  for_each_index(s.groups, [&](auto g) {
    const auto w = s.group(g);
    rows.query_block(w.query, w.query_bias, g * gw, gw);
    rows.key_block(w.key, w.key_bias, g * kgw, kgw);
  });
  if constexpr (Spec::has_rope)  // queries and keys rotated by their positions
    rows.rotate(s.rope, s.num_heads, s.num_kv_heads, s.head_dim);
  if constexpr (Rows::values_by_group) {
    for_each_index(s.groups, [&](auto g) {
      const auto w = s.group(g);
      rows.value_group_block(w.value, w.value_bias, g * kgw, kgw);
    });
  } else {
    for_each_index(s.num_kv_heads, [&](auto k) {  // V: one block per key/value head
      const auto w = s.group(size_div(k, hpg));
      const std::size_t kk = k % hpg;  // the head's index in its group
      rows.value_block(weight_rows(w.value, kk * s.head_dim, rows.value_dim()),
                       bias_offset(w.value_bias, kk * s.head_dim), k, s.head_dim);
    });
  }
}

/// Step 2, for one sequence: head(h, kv, op) for every query head h, kv = h /
/// heads_per_kv its key/value head (a size_c in the fixed-size modules'
/// fold), op its operands: its query columns of query [rows][width], its keys
/// (rows of kt [kv_width][ldk]), its values (block kv of v
/// [num_kv_heads][ldk][head_dim]) and its context columns of context
/// [rows][width].
template <class Spec, class Head>
constexpr void for_each_head(const Spec& s, const typename Spec::value_type* query,
                             const typename Spec::value_type* kt,
                             const typename Spec::value_type* v, std::size_t ldk,
                             typename Spec::value_type* context, Head head) noexcept {
  const std::size_t width = s.width();
  for_each_index(s.num_heads, [&](auto h) {
    const auto kv = s.kv_head(h);
    const std::size_t c = h * s.head_dim;
    const std::size_t ck = kv * s.head_dim;
    head(h, kv,
         head_operands<typename Spec::value_type>{query + c, width, kt + ck * ldk, ldk,
                                                  v + kv * ldk * s.head_dim, s.head_dim,
                                                  context + c, width});
  });
}

/// Step 3: out = context out_proj^T + b for the rows (nothing when the module
/// has no out_proj: the heads wrote their context into the output).
template <class Spec, class Rows>
constexpr void project_out(const Spec& s, const Rows& rows) noexcept {
  if constexpr (Spec::has_out_proj)
    rows.out_block(s.out_proj.weight, s.out_proj.bias, s.width());
}

/// The pipeline for one sequence: n token rows of x (row stride d_in) at
/// positions offset .. offset+n-1 of the store (kt: K^T [kv_width][ldk], v: V
/// [num_kv_heads][ldk][head_dim]), output rows of stride width; steps 1-3 in
/// the sequence_rows schedule. Heads: blocked kernels unless `simple`
/// (constant evaluation or small constant shapes). `weights`: where this
/// sequence's attention weights go (weights_out, already at this sequence).
/// `source`: self_kv, or the kv_rows of a cross-attention's key/value input
/// (offset 0, its keys at store positions 0..rows-1). `first`: the position
/// of store column 0 (a rolling KV cache's oldest token; RoPE rotates by
/// first + column, the heads see columns).
template <class Spec, class N, class Training, class Source = self_kv>
constexpr void sequence_forward(const Spec& s, const typename Spec::value_type* x, N n,
                                typename Spec::value_type* out, typename Spec::value_type* kt,
                                std::size_t ldk, typename Spec::value_type* v, std::size_t offset,
                                const attention_scratch<typename Spec::value_type>& scratch,
                                bool simple, Training training, std::uint64_t seed,
                                std::size_t b,
                                const weights_out<typename Spec::value_type>& weights = {},
                                const Source& source = {}, std::size_t first = 0) noexcept {
  using T = typename Spec::value_type;
  const auto src = [&] {
    if constexpr (std::is_same_v<Source, self_kv>)
      return kv_rows<T, decltype(s.d_in), decltype(s.d_in), N>{x, s.d_in, x, s.d_in, n};
    else
      return source;
  }();
  // the score policy: the cached keys and the new ones (self), or the other input's
  const auto policy = s.scores.over(offset + static_cast<std::size_t>(src.rows));
  const auto hpg = size_div(s.num_kv_heads, s.groups);  // key/value heads per group
  T* const context = Spec::has_out_proj ? scratch.context : out;
  const sequence_rows<T, decltype(s.d_in), N, decltype(src)> rows{
      x, s.d_in, n, src, scratch.query, kt, v, ldk, offset, context, out, s.width(), first};
  project_qkv(s, rows);
  for_each_head(s, scratch.query, kt, v, ldk, context,
                [&](auto h, auto k, const head_operands<T>& op) {
    // the dropout probability of the head's group (the wrapper's heads have their own)
    const auto drop = make_dropout(s.group(size_div(k, hpg)).dropout, seed, training);
    const std::size_t hh = h;
    const weights_sink<T> sink{
        weights.base == nullptr ? nullptr : weights.base + hh * weights.head_stride, weights.ld,
        weights.average && hh > 0};
    if (simple) {
      attention_head_simple<small_sizes<N, decltype(s.head_dim)>>(op, n, offset, s.head_dim,
                                                                  s.divisor, drop, b, h,
                                                                  scratch.scores, policy, sink);
    } else {
      attention_head_blocked(op, n, offset, s.head_dim, s.divisor, drop, b, h, scratch.scores,
                             scratch.ld_scores, policy, sink);
    }
  });
  if (weights.average && weights.base != nullptr) {  // the sum over heads / num_heads (mean)
    const T heads = static_cast<T>(static_cast<std::size_t>(s.num_heads));
    for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i)
      for (std::size_t j = 0; j < weights.ld; ++j)
        weights.base[i * weights.ld + j] = fp::div(weights.base[i * weights.ld + j], heads);
  }
  project_out(s, rows);
}

/// True when the token-major path serves this spec at run time (float
/// inference, every size a compile-time constant) for up to MaxTokens tokens.
template <class Spec, std::size_t MaxTokens>
consteval bool token_major_serves() {
  if constexpr (!std::is_same_v<typename Spec::value_type, float> || !Spec::causal) {
    return false;  // (non-causal modules take the blocked path)
  } else {
    // (grouped-query attention and RoPE too: token_major_forward runs the same
    // steps, project_qkv rotating and token_major::heads reading kv_head(h))
    return is_size_c<decltype(Spec::num_kv_heads)> && is_size_c<decltype(Spec::num_heads)> &&
           is_size_c<decltype(Spec::d_in)> && is_size_c<decltype(Spec::head_dim)> &&
           is_size_c<decltype(Spec::groups)>;
  }
}

/// The forward of the token-major path (kernels/token_major.hpp) for float
/// inference with token vectors of W lanes: x [batch][tokens][d_in] (sequence
/// b at x + b * x_batch) -> out [batch][tokens][width] (sequence b at out + b
/// * out_batch), the pipeline's steps in the transposed_rows schedule with
/// token_major::heads between them; np: the tokens rounded up to whole
/// vectors (a size_c where it is known at compile time, so the column strides
/// fold); tokens: a size_c or a run-time count <= MaxTokens. ws:
/// token_major::workspace_elements<T, Batch, MaxTokens, DIn, Width> elements.
template <class T, std::size_t W, std::size_t MaxTokens, class Spec, class Batch, class Tokens,
          class Padded>
inline void token_major_forward(const Spec& s, Batch batch, Tokens tokens, Padded np, const T* x,
                                std::size_t x_batch, T* out, std::size_t out_batch,
                                T* ws) noexcept {
  constexpr std::size_t DIn = decltype(s.d_in)::value;
  constexpr std::size_t Width = decltype(s.width())::value;
  constexpr std::size_t wide = DIn > Width ? DIn : Width;
  MHA_ASSERT(tokens <= MaxTokens);
  const auto cols = size_mul(batch, np);  // a size_c whenever np is one
  T* const xt = ws;  // x^T, then the context C^T
  T* const qt = ws + wide * cols;  // Q^T, then out^T
  T* const kt = qt + Width * cols;
  T* const vt = kt + Width * cols;
  // x^T, padding tokens 0
  for (std::size_t b = 0; b < batch; ++b) {
    token_major::transpose<T, W>(x + b * x_batch, DIn, xt + b * np, cols, tokens, size_c<DIn>{});
    for (std::size_t i = tokens; i < np; ++i)
      for (std::size_t f = 0; f < DIn; ++f) xt[f * cols + b * np + i] = T(0);
  }
  const transposed_rows<T, W, decltype(s.d_in), Batch, Tokens, Padded> rows{
      xt, qt, kt, vt, xt, batch, tokens, np, cols};
  project_qkv(s, rows);
  token_major::heads<T, W, MaxTokens>(s, batch, tokens, np, qt, kt, vt, xt);
  project_out(s, rows);
  const T* const result = Spec::has_out_proj ? qt : xt;
  for (std::size_t b = 0; b < batch; ++b)
    token_major::transpose<T, W>(result + b * np, cols, out + b * out_batch, Width,
                                 size_c<Width>{}, tokens);
}

/// The token-major forward for a run-time token count n <= MaxTokens (n <=
/// token_major::tokens_limit): token vectors of width_for(n) lanes.
template <std::size_t MaxTokens, class Spec, class Batch>
inline void token_major_runtime(const Spec& s, Batch batch, std::size_t n, const float* x,
                                std::size_t x_batch, float* out, std::size_t out_batch,
                                float* ws) noexcept {
  constexpr std::size_t L = simd::lanes<float>;
  // n <= W: one vector of W lanes per sequence, a constant padded count (the
  // column strides fold as in the compile-time forward); only W = L serves
  // more tokens, with a run-time padded count
  const auto run = [&](auto w) {
    constexpr std::size_t W = decltype(w)::value;
    if (n <= W)
      token_major_forward<float, W, MaxTokens>(s, batch, n, size_c<W>{}, x, x_batch, out,
                                                out_batch, ws);
    else if constexpr (W == L)
      token_major_forward<float, W, MaxTokens>(s, batch, n, (n + W - 1) / W * W, x, x_batch, out,
                                                out_batch, ws);
  };
  switch (token_major::width_for<float>(n)) {
    case 4: run(size_c<4>{}); break;
    case 8: if constexpr (L >= 8) run(size_c<8>{}); break;
    default: if constexpr (L >= 16) run(size_c<16>{}); break;
  }
}

/// Whole-sequence forward (causal unless Spec::causal is false) of `batch` sequences of n tokens: x
/// [batch][..][d_in] (sequence b at x + b * x_batch, its first n rows read),
/// out (sequence b at out + b * out_batch, its first n rows written).
/// `n` is a size_c (the compile-time forward) or a run-time count <= MaxTokens
/// (forward(x, n, out, ws)); both give the same bits for the same n. `ws`:
/// the module's workspace storage, laid out as workspace_layout says.
/// `scores`: gemm::mr * MaxTokens elements. `weights`: the attention weights
/// of sequence 0 onwards (weights_out; zeroed by the caller), none by
/// default. `first_sequence`: the index of sequence 0 in the caller's batch
/// (its dropout stream; a padded batch runs one sequence at a time).
/// `training`: a bool (chosen at run time), std::false_type for an
/// inference call without weights (inference_mode): then the path is chosen
/// at compile time, and a module the token-major kernels serve for a
/// compile-time n does not instantiate the general path for run time (it
/// stays for constant evaluation), or inference_any_path (an inference call
/// whose path depends on its arguments). With either of the last two the
/// general path compiles no dropout code (make_dropout).
template <std::size_t MaxTokens, class Spec, class Batch, class N, class Training>
constexpr void forward_sequence(const Spec& s, const typename Spec::value_type* x,
                                std::size_t x_batch, Batch batch, N n,
                                typename Spec::value_type* out, std::size_t out_batch,
                                typename Spec::value_type* ws, typename Spec::value_type* scores,
                                Training training, std::uint64_t seed,
                                const weights_out<typename Spec::value_type>& weights = {},
                                std::size_t first_sequence = 0) noexcept {
  using T = typename Spec::value_type;
  const flush_scope<T> flush;  // (subnormals as the vector code treats them, detail/arch/subnormals.hpp)
  constexpr bool inference = std::is_same_v<Training, std::false_type>;
  if constexpr (inference) MHA_ASSERT(weights.base == nullptr);
  if constexpr (token_major_serves<Spec, MaxTokens>()) {
    // (the token-major kernels keep no weights: a call that asks for them takes the others)
    if (!std::is_constant_evaluated() &&
        (inference || (!training && weights.base == nullptr))) {
      constexpr std::size_t limit =
          token_major::tokens_limit<decltype(s.d_in)::value, decltype(s.width())::value>;
      if constexpr (is_size_c<N>) {
        if constexpr (N::value <= limit) {
          constexpr std::size_t W = token_major::width<T, N::value>;
          token_major_forward<T, W, N::value>(s, batch, n, size_c<token_major::round_up<N::value, W>>{},
                                               x, x_batch, out, out_batch, ws);
          return;
        }
      } else if constexpr (limit > 0) {
        // (n <= MaxTokens: when MaxTokens <= limit this always serves, and an
        // inference call compiles no general path)
        if (MaxTokens <= limit || n <= limit) {
          constexpr std::size_t tm_max = MaxTokens < limit ? MaxTokens : limit;
          token_major_runtime<tm_max>(s, batch, n, x, x_batch, out, out_batch, ws);
          return;
        }
      }
    }
  }
  // Q [n][width], K^T [kv_width][n], V [num_kv_heads][n][head_dim], context
  // [n][width] of one sequence at a time (n * width elements each: kv_width
  // <= width).
  const std::size_t width = s.width();
  const std::size_t block = static_cast<std::size_t>(n) * width;
  const attention_scratch<T> scratch{ws, ws + 3 * block, scores, static_cast<std::size_t>(n)};
  // (not const: a const bool's initialiser would be manifestly constant-evaluated)
  bool simple = small_sizes<decltype(size_mul(batch, n)), decltype(s.d_in), decltype(s.width())>;
  if (std::is_constant_evaluated()) simple = true;
  s.executor.for_each(batch, [&](std::size_t b, std::size_t) {
    sequence_forward(s, x + b * x_batch, n, out + b * out_batch, ws + block, n, ws + 2 * block, 0,
                     scratch, simple, training, seed, first_sequence + b, weights.at_sequence(b));
  });
}

/// Whole-sequence forward of a padded batch (PyTorch's key_padding_mask):
/// sequence b holds lengths[b] <= tokens real tokens, the rest is padding.
/// Its keys at positions >= lengths[b] are masked for every query, and its
/// output rows lengths[b] .. tokens-1 are written as zeros; rows of x past
/// lengths[b] are never read. Each sequence is the forward of its first
/// lengths[b] tokens (forward_sequence with a run-time count, the same bits
/// as a batch of that one sequence), with its own dropout stream b;
/// lengths[b] == 0 gives a zero sequence. Weights as in forward_sequence
/// (zeroed by the caller: padded rows and keys stay 0).
template <std::size_t MaxTokens, class Spec, class Training>
constexpr void forward_padded(const Spec& s, const typename Spec::value_type* x,
                              std::size_t x_batch, std::size_t batch, const std::size_t* lengths,
                              std::size_t tokens, typename Spec::value_type* out,
                              std::size_t out_batch, typename Spec::value_type* ws,
                              typename Spec::value_type* scores, Training training,
                              std::uint64_t seed,
                              const weights_out<typename Spec::value_type>& weights) noexcept {
  using T = typename Spec::value_type;
  const std::size_t width = s.width();
  s.executor.for_each(batch, [&](std::size_t b, std::size_t) {
    const std::size_t len = lengths[b];
    T* const o = out + b * out_batch;
    if (len > 0)
      forward_sequence<MaxTokens>(s, x + b * x_batch, x_batch, size_c<1>{}, len, o, out_batch, ws,
                                  scores, training, seed, weights.at_sequence(b), b);
    for (std::size_t e = len * width; e < tokens * width; ++e) o[e] = T(0);
  });
}

/// Cross-attention (nn.MultiheadAttention(query, key, value)) of `batch`
/// sequences: nq query rows of d_in features (sequence b at q + b *
/// q_batch), nkv key rows of key_dim features (k + b * k_batch) and nkv
/// value rows of value_dim (v + b * v_batch); every query attends to every
/// key of its sequence (no causal mask), or, with key_lengths, to its first
/// key_lengths[b] keys (key_padding_mask on the keys; a sequence with none
/// has a zero context, so its output rows are out_proj's bias). The
/// projections, heads and out_proj are sequence_forward's, with the keys and
/// values projected from the other input. ws: 4 * max(nq, nkv) * width
/// elements; scores: gemm::mr rows of nkv.
template <class Spec, class KeyDim, class ValueDim, class Training>
constexpr void forward_cross(const Spec& s, const typename Spec::value_type* q,
                             std::size_t q_batch, std::size_t batch, std::size_t nq,
                             const typename Spec::value_type* k, std::size_t k_batch,
                             KeyDim key_dim, const typename Spec::value_type* v,
                             std::size_t v_batch, ValueDim value_dim, std::size_t nkv,
                             const std::size_t* key_lengths, typename Spec::value_type* out,
                             std::size_t out_batch, typename Spec::value_type* ws,
                             typename Spec::value_type* scores, Training training,
                             std::uint64_t seed,
                             const weights_out<typename Spec::value_type>& weights) noexcept {
  using T = typename Spec::value_type;
  static_assert(!Spec::causal, "detail::forward_cross: cross-attention has no causal mask");
  const flush_scope<T> flush;  // (subnormals as the vector code treats them, detail/arch/subnormals.hpp)
  const std::size_t width = s.width();
  const std::size_t block = (nq > nkv ? nq : nkv) * width;
  const attention_scratch<T> scratch{ws, ws + 3 * block, scores, nkv};
  bool simple = false;  // (not const: its initialiser would be manifestly constant-evaluated)
  if (std::is_constant_evaluated()) simple = true;
  s.executor.for_each(batch, [&](std::size_t b, std::size_t) {
    const std::size_t keys = key_lengths == nullptr ? nkv : key_lengths[b];
    T* const o = out + b * out_batch;
    if (keys == 0) {  // no key: a zero context
      for (std::size_t i = 0; i < nq; ++i)
        for (std::size_t c = 0; c < width; ++c) {
          if constexpr (Spec::has_out_proj)
            o[i * width + c] = bias_pointer<T>(s.out_proj.bias) == nullptr
                                   ? T(0)
                                   : bias_pointer<T>(s.out_proj.bias)[c];
          else
            o[i * width + c] = T(0);
        }
      return;
    }
    sequence_forward(s, q + b * q_batch, nq, o, ws + block, keys, ws + 2 * block, 0, scratch,
                     simple, training, seed, b, weights.at_sequence(b),
                     kv_rows<T, KeyDim, ValueDim, std::size_t>{k + b * k_batch, key_dim,
                                                               v + b * v_batch, value_dim, keys});
  });
}

/// KV-cache forward: n new tokens of each of `batch` sequences (rows as in
/// forward_sequence) appended to `store` at columns offset .. offset+n-1
/// (positions first + offset ..: `first` is the position of column 0, 0 but in
/// a rolling cache), each attending to columns 0..its own (the policy sees
/// columns: its distances are the positions'). Inference only. The path depends on
/// n alone, never on the batch, so a sequence gets the same bits in any batch:
/// n <= decode_rows takes the decode path (matrix-vector projections, see
/// kernels/gemv.hpp), larger n the blocked whole-sequence kernels. ws: at least 2 *
/// batch * n * width elements (queries and context of all rows); scores:
/// gemm::mr rows of ld_scores >= offset + n elements.
template <class Spec, class Batch>
inline void forward_cached(const Spec& s, const typename Spec::value_type* x, std::size_t x_batch,
                           Batch batch, std::size_t n, typename Spec::value_type* out,
                           std::size_t out_batch, const kv_store<typename Spec::value_type>& store,
                           std::size_t offset, typename Spec::value_type* ws,
                           typename Spec::value_type* scores, std::size_t ld_scores,
                           std::size_t first = 0) noexcept {
  using T = typename Spec::value_type;
  static_assert(Spec::causal, "detail::forward_cached: a non-causal module has no KV-cache forward");
  const flush_scope<T> flush;  // (subnormals as the vector code treats them, detail/arch/subnormals.hpp)
  const std::size_t width = s.width();
  if (n > decode_rows) {
    const attention_scratch<T> scratch{ws, ws + n * width, scores, ld_scores};
    s.executor.for_each(batch, [&](std::size_t b, std::size_t) {
      sequence_forward(s, x + b * x_batch, n, out + b * out_batch,
                       store.key_t + b * store.batch_stride, store.ldk,
                       store.value + b * store.batch_stride, offset, scratch, false, false, 0,
                       b, {}, {}, first);
    });
    return;
  }
  // Decode: the m = batch * n rows (r = b * n + i) in chunks of decode_rows,
  // each chunk's projections in one pass over each weight (per gemv::max_rows
  // rows), the decode_row_set schedule; the heads per sequence over the cache.
  const std::size_t m = batch * n;
  T* const query = ws;                // [m][width]
  T* const context = ws + m * width;  // [m][width]
  // one row set, filled for each chunk in place (its pointers are all it holds)
  decode_row_set<T, decltype(s.d_in)> rows{};
  rows.d_in = s.d_in;
  rows.width = width;
  rows.ldk = store.ldk;
  const auto select = [&](std::size_t r0) {
    rows.rows = m - r0 < decode_rows ? m - r0 : decode_rows;
    for (std::size_t k = 0; k < rows.rows; ++k) {
      const std::size_t r = r0 + k;
      const std::size_t b = r / n;
      const std::size_t pos = offset + r % n;
      rows.xr[k] = x + b * x_batch + (r % n) * s.d_in;
      rows.qr[k] = query + r * width;
      rows.kr[k] = store.key_t + b * store.batch_stride + pos;  // the row's column of K^T
      rows.vr[k] = store.value + b * store.batch_stride + pos * s.head_dim;
      rows.cr[k] = context + r * width;
      rows.orow[k] = out + b * out_batch + (r % n) * width;
      rows.pos[k] = first + pos;  // (RoPE's position; pos is the store column)
    }
  };
  for (std::size_t r0 = 0; r0 < m; r0 += decode_rows) {
    select(r0);
    project_qkv(s, rows);
  }
  // (a run-time inactive dropout_state and a bool `training` above, not the
  // compile-time no-dropout types: the KV-cache forward then shares the
  // general path's instantiations with the training forwards instead of
  // compiling a second copy of them, which made CI's fuzz and benchmark
  // builds of the dynamic API slower)
  const dropout_state<T> no_dropout{};
  const auto policy = s.scores.over(offset + n);  // the cached keys and the new ones
  s.executor.for_each(batch, [&](std::size_t b, std::size_t) {
    T* const ctx = Spec::has_out_proj ? context + b * n * width : out + b * out_batch;
    for_each_head(s, query + b * n * width, store.key_t + b * store.batch_stride,
                  store.value + b * store.batch_stride, store.ldk, ctx,
                  [&](auto h, auto, const head_operands<T>& op) {
                    if (n == 1)
                      attention_head_decode(op, offset, s.head_dim, s.divisor, scores, policy, h);
                    else
                      attention_head_blocked(op, n, offset, s.head_dim, s.divisor, no_dropout, b,
                                             h, scores, ld_scores, policy);
                  });
  });
  if constexpr (Spec::has_out_proj) {
    for (std::size_t r0 = 0; r0 < m; r0 += decode_rows) {
      select(r0);
      project_out(s, rows);
    }
  }
}

}  // namespace MHA_DETAIL_ISA
}  // namespace mha::detail

#include <mha/detail/macros_undef.hpp>
