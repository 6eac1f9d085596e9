// mha/fused_multi_head_attention.hpp -- multi-head attention whose query, key
// and value weights are stored as one fused [3*DOut][DIn] matrix.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>
#include <type_traits>
#include <utility>

#include <mha/attention_scores.hpp>
#include <mha/score_parameters.hpp>
#include <mha/block_layout.hpp>
#include <mha/block_view.hpp>
#include <mha/detail/engine/attention.hpp>
#include <mha/detail/kernels/kernels.hpp>
#include <mha/detail/arch/math.hpp>
#include <mha/detail/api/module_interface.hpp>
#include <mha/detail/params/parameter_walk.hpp>
#include <mha/linear.hpp>
#include <mha/multi_head_attention.hpp>
#include <mha/tensor.hpp>

#include <mha/detail/macros.hpp>

namespace mha {

namespace detail {
/// Part (0 query, 1 key, 2 value) of fused_multi_head_attention's layouts,
/// after checking it (0 when the check failed, so that it is the one error).
template <std::size_t Part>
consteval std::size_t fused_part() noexcept {
  static_assert(detail::index_below<Part, 3>,
                "mha::fused_multi_head_attention: Part must be 0 (query), 1 (key) or 2 (value)");
  return clamp_index<Part, 3>;
}
/// Block Part * NumHeads + H of the 3 * NumHeads row (or column) blocks of the
/// fused weight (or product), after checking Part and H.
template <std::size_t Part, std::size_t H, std::size_t NumHeads>
consteval std::size_t fused_head_block() noexcept {
  static_assert(detail::index_below<H, NumHeads>,
                "mha::fused_multi_head_attention: head index H must be less than NumHeads");
  return fused_part<Part>() * at_least_1<NumHeads> + clamp_index<H, NumHeads>;
}
}  // namespace detail

/// The book's MultiHeadAttention (Raschka, section 3.6.2) with the packed QKV
/// storage of torch.nn.MultiheadAttention (`in_proj_weight`) and GPT-2
/// (`c_attn`): one Linear `w_qkv` with weight [3*DOut][DIn] whose row blocks
/// 0, 1, 2 are W_query, W_key and W_value ([DOut][DIn] each, PyTorch layout),
/// and bias [3*DOut] (query, key, value blocks) when QkvBias.
///
///   Q, K, V = x W^T (+ b) with W the row blocks 0, 1, 2 of w_qkv.weight
///   (read in place: one product each, over contiguous rows, no copy)
///   head h: columns [h*head_dim, (h+1)*head_dim) of Q, K, V; then as
///   multi_head_attention: causal softmax(Q_h K_h^T / sqrt(head_dim)) V_h,
///   concatenated and projected by out_proj.
///
/// It runs the same orchestration and kernels as multi_head_attention
/// (detail/engine/attention.hpp: the token-major and register-tiled paths, the
/// run-time-count and KV-cache calls) and gives the same bits.
///
/// W_query/W_key/W_value are views of the fused storage: w_query(), w_key(),
/// w_value() return [DOut][DIn] block_views (a weight split with 3 blocks), and
/// head_weights<H>() head H's [head_dim][DIn] rows of each. Results are
/// bit-identical to multi_head_attention with the same weights.
///
/// Members: `w_qkv` (linear<T, DIn, 3*DOut, QkvBias>), `out_proj`
/// (linear<T, DOut, DOut, true>), `dropout`. An aggregate; value-initialised
/// weights are zero. At GPT-2 size it is 9.4 MB: keep it in owned storage
/// (std::make_unique) and fill it with fuse_qkv(m, out) or the loader.
///
/// Compile-time errors ("mha::fused_multi_head_attention: ...", one per
/// mistake, the shared contracts of detail/api/contracts.hpp): T not float or
/// double; DIn, DOut, ContextLength or NumHeads zero; DOut not divisible by
/// NumHeads; head_weights<H>() or a layout with H >= NumHeads or Part > 2;
/// above MHA_MAX_INLINE_BYTES when defined; and those of forward
/// (detail/api/forward_overloads.inc).
template <class T, std::size_t DIn, std::size_t DOut, std::size_t ContextLength,
          std::size_t NumHeads, bool QkvBias = false,
          auto Scores = attention_mask::causal>
struct fused_multi_head_attention {
  static_assert(detail::float_or_double<T>,
                "mha::fused_multi_head_attention: T must be float or double");
  static_assert(detail::greater_than_zero<DIn>,
                "mha::fused_multi_head_attention: DIn must be greater than 0");
  static_assert(detail::greater_than_zero<DOut>,
                "mha::fused_multi_head_attention: DOut must be greater than 0");
  static_assert(detail::greater_than_zero<ContextLength>,
                "mha::fused_multi_head_attention: ContextLength must be greater than 0");
  static_assert(detail::greater_than_zero<NumHeads>,
                "mha::fused_multi_head_attention: NumHeads must be greater than 0");
  static_assert(detail::divisible_by<DOut, detail::at_least_1<NumHeads>>,
                "mha::fused_multi_head_attention: DOut must be divisible by NumHeads");

  using value_type = T;
  static constexpr std::size_t d_in = DIn;
  static constexpr std::size_t d_out = DOut;
  static constexpr std::size_t context_length = ContextLength;
  static constexpr std::size_t num_heads = NumHeads;
  /// Key/value heads (= num_heads: every head has its own; fewer only in
  /// grouped_query_attention). The KV cache stores this many.
  static constexpr std::size_t num_kv_heads = num_heads;
  static constexpr std::size_t head_dim = DOut / (NumHeads == 0 ? 1 : NumHeads);  ///< DOut/NumHeads

 private:
  // Sizes for the member types that stay valid when a contract above failed
  // (so that only that static_assert is reported); equal to DIn, head_dim,
  // NumHeads and DOut for every valid instantiation (as in multi_head_attention).
  static constexpr std::size_t layout_d_in_ = detail::at_least_1<DIn>;
  static constexpr std::size_t layout_head_dim_ = detail::quotient_or_1<DOut, NumHeads>;
  static constexpr std::size_t layout_num_heads_ = detail::at_least_1<NumHeads>;
  static constexpr std::size_t layout_d_out_ = layout_head_dim_ * layout_num_heads_;

 public:
  static constexpr std::size_t output_width = DOut;
  static constexpr bool qkv_bias = QkvBias;
  /// Features of a key and of a value input row of cross-attention (=
  /// DIn: only multi_head_attention takes another kdim / vdim).
  static constexpr std::size_t key_dim = DIn;
  static constexpr std::size_t value_dim = DIn;
  static_assert(detail::scores_argument<decltype(Scores)>,
                "mha::fused_multi_head_attention: Scores must be an mha::attention_mask or an mha::attention_scores");
  /// The score options (template parameter Scores; an attention_mask m means
  /// attention_scores{.mask = m}). See mha::attention_scores.
  static constexpr attention_scores scores = detail::checked_scores<Scores>;
  /// Which keys a query attends to: causal, the default, or none (every key;
  /// no KV-cache forward). See mha::attention_mask.
  static constexpr attention_mask mask = scores.mask;
  /// mask == attention_mask::causal (PyTorch's is_causal).
  static constexpr bool is_causal = mask == attention_mask::causal;
  /// Same count as multi_head_attention: 3*(DOut*DIn + (QkvBias ? DOut : 0)) + DOut*DOut + DOut.
  /// (The sum over the parameter walk, mha/parameters.hpp.)
  static constexpr std::size_t parameter_count =
      detail::params::count<fused_multi_head_attention>();
  /// The members for mha::for_each_parameter, as torch.nn.MultiheadAttention's
  /// named_parameters(): `in_proj_weight` (w_qkv.weight), `in_proj_bias`
  /// (w_qkv.bias, with QkvBias), `out_proj.weight`, `out_proj.bias`. (`mask`:
  /// the book's buffer, accepted in a checkpoint_format::book file.)
  static constexpr auto parameter_description() noexcept {
    return detail::describe(
        BOOST_HANA_STRING("mha::fused_multi_head_attention"),
        detail::member(BOOST_HANA_STRING("in_proj_weight"),
                       [](auto& m) -> auto& { return m.w_qkv.weight; }),
        detail::member(BOOST_HANA_STRING("in_proj_bias"), [](auto& m) -> auto& { return m.w_qkv.bias; }),
        detail::member(BOOST_HANA_STRING("out_proj"), &fused_multi_head_attention::out_proj),
        detail::member(BOOST_HANA_STRING(""), &fused_multi_head_attention::score_params),
        detail::buffer(BOOST_HANA_STRING("mask")));
  }
  /// sqrt(head_dim) as a T: the scores are divided by it.
  static constexpr T score_divisor = detail::sqrt(static_cast<T>(layout_head_dim_));

  /// Layout of block `Part` (0 query, 1 key, 2 value) of the fused weight: rows
  /// [Part*DOut, (Part+1)*DOut) of [3*DOut][DIn]. Error if Part > 2.
  template <std::size_t Part>
  using qkv_weight_layout =
      weight_split_layout<detail::fused_part<Part>(), 3, 3 * layout_d_out_, layout_d_in_>;
  /// Layout of head H's rows of block Part: rows [Part*DOut + H*head_dim, ... + head_dim).
  /// Error if Part > 2 or H >= NumHeads.
  template <std::size_t Part, std::size_t H>
  using head_weight_layout =
      weight_split_layout<detail::fused_head_block<Part, H, NumHeads>(), 3 * layout_num_heads_,
                          3 * layout_d_out_, layout_d_in_>;
  /// Layout of head H's queries (Part 0), keys (1) or values (2) inside the
  /// fused [Batch][Tokens][3*DOut] product: a head_layout with 3*NumHeads
  /// blocks. Error if Part > 2 or H >= NumHeads.
  template <std::size_t Part, std::size_t H, std::size_t Batch, std::size_t Tokens>
  using qkv_head_layout = head_layout<detail::fused_head_block<Part, H, NumHeads>(),
                                      3 * layout_num_heads_, Batch, Tokens, 3 * layout_d_out_>;

  linear<detail::element_or_float<T>, layout_d_in_, 3 * layout_d_out_, QkvBias>
      w_qkv;  ///< weight [3*DOut][DIn] = [W_query; W_key; W_value], bias [3*DOut] if QkvBias
  linear<detail::element_or_float<T>, layout_d_out_, layout_d_out_, true>
      out_proj;      ///< out_proj: weight [DOut][DOut], bias [DOut]
  /// Dropout probability of forward_training, in [0, 1] (inference ignores it).
  /// Outside [0, 1]: MHA_ASSERT in debug builds; in release builds NaN or
  /// p < 0 mean no dropout and p > 1 drops every weight (mha::dynamic throws).
  T dropout = T(0);
  /// The learned parameters of the score options (mha::score_parameters:
  /// none unless an option of `scores` has some).
  [[no_unique_address]] score_parameters<detail::element_or_float<T>, layout_num_heads_, scores>
      score_params{};
  static_assert(
      detail::within_inline_limit<sizeof(w_qkv) + sizeof(out_proj) + sizeof(T),
                                  MHA_DETAIL_MAX_INLINE_BYTES(),
                                  (sizeof(w_qkv) > sizeof(out_proj) ? sizeof(w_qkv)
                                                                    : sizeof(out_proj))>,
      "mha::fused_multi_head_attention: sizeof exceeds MHA_MAX_INLINE_BYTES (the numbers: sizeof, "
      "limit); the limit refuses the type wherever the object lives, like Eigen's stack allocation "
      "limit: keep large models in owned storage (std::make_unique) in code built without "
      "MHA_MAX_INLINE_BYTES, or use mha::dynamic");

  /// W_query: read-only [DOut][DIn] view of rows [0, DOut) of w_qkv.weight.
  constexpr auto w_query() const noexcept { return block_view<const T, qkv_weight_layout<0>>(w_qkv.weight); }
  /// W_key: read-only [DOut][DIn] view of rows [DOut, 2*DOut) of w_qkv.weight.
  constexpr auto w_key() const noexcept { return block_view<const T, qkv_weight_layout<1>>(w_qkv.weight); }
  /// W_value: read-only [DOut][DIn] view of rows [2*DOut, 3*DOut) of w_qkv.weight.
  constexpr auto w_value() const noexcept { return block_view<const T, qkv_weight_layout<2>>(w_qkv.weight); }
  /// W_query: writable [DOut][DIn] view of rows [0, DOut) of w_qkv.weight.
  constexpr auto w_query() noexcept { return block_view<T, qkv_weight_layout<0>>(w_qkv.weight); }
  /// W_key: writable [DOut][DIn] view of rows [DOut, 2*DOut) of w_qkv.weight.
  constexpr auto w_key() noexcept { return block_view<T, qkv_weight_layout<1>>(w_qkv.weight); }
  /// W_value: writable [DOut][DIn] view of rows [2*DOut, 3*DOut) of w_qkv.weight.
  constexpr auto w_value() noexcept { return block_view<T, qkv_weight_layout<2>>(w_qkv.weight); }

  /// Head H's weight split: read-only [head_dim][DIn] views of its rows of
  /// W_query, W_key and W_value inside the fused weight. Error if H >= NumHeads.
  template <std::size_t H>
  struct head_weights_type {
    static_assert(detail::index_below<H, NumHeads>,
                  "mha::fused_multi_head_attention::head_weights: head index H must be less than "
                  "NumHeads");
    static constexpr std::size_t h_ = detail::clamp_index<H, NumHeads>;
    block_view<const T, head_weight_layout<0, h_>> query;
    block_view<const T, head_weight_layout<1, h_>> key;
    block_view<const T, head_weight_layout<2, h_>> value;
  };
  /// Head H's weight split (see head_weights_type). Error if H >= NumHeads.
  template <std::size_t H>
  constexpr head_weights_type<H> head_weights() const noexcept {
    constexpr std::size_t h = detail::clamp_index<H, NumHeads>;
    return {block_view<const T, head_weight_layout<0, h>>(w_qkv.weight),
            block_view<const T, head_weight_layout<1, h>>(w_qkv.weight),
            block_view<const T, head_weight_layout<2, h>>(w_qkv.weight)};
  }

 private:
  /// Block `Part` (0 query, 1 key, 2 value) of the fused bias, as a kernel bias argument.
  constexpr auto part_bias_(std::size_t part) const noexcept {
    if constexpr (QkvBias)
      return detail::present_bias<T>{w_qkv.bias.data() + part * DOut};
    else
      return nullptr;
  }
  /// The module for the orchestration (detail/engine/attention.hpp): as
  /// multi_head_attention, with W_query, W_key and W_value the row blocks 0,
  /// 1, 2 of the fused weight (each [DOut][DIn], contiguous rows).
  constexpr auto spec_() const noexcept {
    return detail::make_spec<T, scores>(
        detail::size_c<DIn>{}, detail::size_c<layout_head_dim_>{},
        detail::size_c<layout_num_heads_>{},
        detail::size_c<1>{},
        [this](auto) {
          const auto w = detail::weight_access(w_qkv.weight);
          return detail::qkv_weights<T, decltype(part_bias_(0))>{
              w, part_bias_(0), detail::weight_rows(w, DOut, DIn), part_bias_(1),
              detail::weight_rows(w, 2 * DOut, DIn), part_bias_(2), dropout};
        },
        detail::out_weights<T, detail::present_bias<T>>{detail::weight_access(out_proj.weight),
                                                        detail::present_bias<T>{out_proj.bias.data()}},
        score_divisor, score_params);
  }

 public:
#define MHA_DETAIL_MODULE_NAME "fused_multi_head_attention"
#include <mha/detail/api/forward_overloads.inc>
};

/// Writes the fused twin of `m` into caller-owned `out`: out.w_qkv.weight =
/// [m.w_query.weight; m.w_key.weight; m.w_value.weight] ([3*DOut][DIn]; the
/// biases likewise when QkvBias), out.out_proj = m.out_proj, out.dropout =
/// m.dropout, out.score_params = m.score_params; every member of `out` is
/// overwritten. `out` then computes
/// bit-identical outputs to `m`. Nothing model-sized passes through the stack,
/// so this is the form for large models:
///
///   auto fused = std::make_unique<mha::fused_multi_head_attention<float, 768, 768, 1024, 12>>();
///   mha::fuse_qkv(*model, *fused);   // GPT-2 size: 9.4 MB, heap to heap
///
/// Precondition: `out` and `m` do not overlap. Usable in constant expressions.
template <class T, std::size_t DIn, std::size_t DOut, std::size_t ContextLength,
          std::size_t NumHeads, bool QkvBias, auto Scores>
MHA_DETAIL_ISA_TAG constexpr void fuse_qkv(
    const multi_head_attention<T, DIn, DOut, ContextLength, NumHeads, QkvBias, Scores>& m,
    fused_multi_head_attention<T, DIn, DOut, ContextLength, NumHeads, QkvBias, Scores>& out) noexcept {
  const linear<T, DIn, DOut, QkvBias>* parts[3] = {&m.w_query, &m.w_key, &m.w_value};
  for (std::size_t p = 0; p < 3; ++p) {
    for (std::size_t i = 0; i < DOut * DIn; ++i)
      out.w_qkv.weight.elements[p * DOut * DIn + i] = parts[p]->weight.elements[i];
    if constexpr (QkvBias)
      for (std::size_t i = 0; i < DOut; ++i)
        out.w_qkv.bias.elements[p * DOut + i] = parts[p]->bias.elements[i];
  }
  out.out_proj = m.out_proj;
  out.dropout = m.dropout;
  out.score_params = m.score_params;
}

/// The fused twin of `m` (see fuse_qkv(m, out)), returned by value: for small
/// models and constant expressions (`constexpr auto f = mha::fuse_qkv(m);`).
/// The result is a temporary on the stack (also in `std::make_unique<F>(fuse_qkv(m))`),
/// so a model larger than MHA_STACK_WORKSPACE_LIMIT bytes (4 MiB by default; GPT-2's
/// attention is 9.4 MB) is a compile-time error: "mha::fuse_qkv: the fused model
/// exceeds MHA_STACK_WORKSPACE_LIMIT bytes ..."; use fuse_qkv(m, out) with `out` in
/// owned storage.
template <class T, std::size_t DIn, std::size_t DOut, std::size_t ContextLength,
          std::size_t NumHeads, bool QkvBias, auto Scores>
MHA_DETAIL_ISA_TAG
constexpr fused_multi_head_attention<T, DIn, DOut, ContextLength, NumHeads, QkvBias, Scores>
fuse_qkv(const multi_head_attention<T, DIn, DOut, ContextLength, NumHeads, QkvBias, Scores>& m) noexcept {
  using fused = fused_multi_head_attention<T, DIn, DOut, ContextLength, NumHeads, QkvBias, Scores>;
  static_assert(detail::at_most<sizeof(fused), MHA_STACK_WORKSPACE_LIMIT>,
                "mha::fuse_qkv: the fused model exceeds MHA_STACK_WORKSPACE_LIMIT bytes, too large "
                "to return by value (a stack temporary); use fuse_qkv(m, out) with out in owned "
                "storage (std::make_unique)");
  fused f{};
  if constexpr (sizeof(fused) <= MHA_STACK_WORKSPACE_LIMIT) fuse_qkv(m, f);
  return f;
}

}  // namespace mha

#include <mha/detail/macros_undef.hpp>

#endif  // MHA_DETAIL_NO_CXX20
