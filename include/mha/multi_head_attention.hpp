// mha/multi_head_attention.hpp -- the book's MultiHeadAttention with weight splits.
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
#include <mha/detail/api/contracts.hpp>
#include <mha/detail/kernels/kernels.hpp>
#include <mha/detail/arch/math.hpp>
#include <mha/detail/api/module_interface.hpp>
#include <mha/detail/params/parameter_walk.hpp>
#include <mha/linear.hpp>
#include <mha/tensor.hpp>

#include <mha/detail/macros.hpp>

namespace mha {

/// Multi-head causal self-attention with weight splits: the book's
/// `MultiHeadAttention` (Raschka, section 3.6.2), with every shape a template
/// parameter.
///
///   Q = x W_query^T, K = x W_key^T, V = x W_value^T  (+ b)   [B][N][DOut], one product each
///   head h: columns [h*head_dim, (h+1)*head_dim) of Q, K, V  (compile-time head_layout views)
///   context_h = dropout(softmax(mask(Q_h K_h^T) / sqrt(head_dim))) V_h  -> same columns of C
///   forward(x) = C out_proj.weight^T + out_proj.bias          [B][N][DOut]
///
/// head_dim = DOut / NumHeads. The forward is the one orchestration of every
/// module (detail/engine/attention.hpp): one product per projection serves all heads
/// (the weight splits), and the per-head attention is a fold expression over
/// std::index_sequence<0..NumHeads-1> whose head offsets are compile-time
/// constants, reading its block of Q/K/V and writing its block of the
/// concatenated context C in place, so neither the split nor the concatenation
/// copies anything. At run time, float inference on at most
/// detail::token_major::tokens_limit<DIn, DOut> (<= 256) tokens runs the token-major
/// formulation (detail/kernels/token_major.hpp: transposed intermediates, weights read
/// in place); everything else runs the register-tiled kernels one sequence at
/// a time. All paths give the same bits as mha::dynamic. Besides forward(x):
/// forward(x, n, out, ws) for a run-time token count and forward(x, n, out,
/// cache, ws) with a KV cache (kv_cache<B>, docs/streaming.md). See
/// docs/design.md.
///
/// Members: `w_query`, `w_key`, `w_value` (linear<T, DIn, DOut, QkvBias>),
/// `out_proj` (linear<T, DOut, DOut, true>), `dropout` (probability, training
/// only). An aggregate; value-initialisation gives all-zero weights.
///
/// Compile-time errors ("mha::multi_head_attention: ..."): T not float or
/// double; DIn, DOut, ContextLength or NumHeads zero; DOut not divisible by
/// NumHeads; and those of forward (detail/api/forward_overloads.inc).
template <class T, std::size_t DIn, std::size_t DOut, std::size_t ContextLength,
          std::size_t NumHeads, bool QkvBias = false,
          auto Scores = attention_mask::causal, std::size_t KDim = DIn,
          std::size_t VDim = DIn>
struct multi_head_attention {
  static_assert(detail::float_or_double<T>,
                "mha::multi_head_attention: T must be float or double");
  static_assert(detail::greater_than_zero<DIn>,
                "mha::multi_head_attention: DIn must be greater than 0");
  static_assert(detail::greater_than_zero<DOut>,
                "mha::multi_head_attention: DOut must be greater than 0");
  static_assert(detail::greater_than_zero<ContextLength>,
                "mha::multi_head_attention: ContextLength must be greater than 0");
  static_assert(detail::greater_than_zero<NumHeads>,
                "mha::multi_head_attention: NumHeads must be greater than 0");
  static_assert(detail::divisible_by<DOut, detail::at_least_1<NumHeads>>,
                "mha::multi_head_attention: DOut must be divisible by NumHeads");
  // (KDim and VDim default to DIn: a zero DIn is reported once, above)
  static_assert(KDim > 0 || DIn == 0, "mha::multi_head_attention: KDim must be greater than 0");
  static_assert(VDim > 0 || DIn == 0, "mha::multi_head_attention: VDim must be greater than 0");
  static_assert(detail::scores_of(Scores).mask == attention_mask::none || (KDim == DIn && VDim == DIn),
                "mha::multi_head_attention: KDim and VDim other than DIn need Mask = "
                "attention_mask::none (only cross-attention reads them)");

  using value_type = T;
  static constexpr std::size_t d_in = DIn;
  static constexpr std::size_t d_out = DOut;
  static constexpr std::size_t context_length = ContextLength;
  static constexpr std::size_t num_heads = NumHeads;
  /// Key/value heads (= num_heads: every head has its own; fewer only in
  /// grouped_query_attention). The KV cache stores this many.
  static constexpr std::size_t num_kv_heads = num_heads;
  static constexpr std::size_t head_dim = DOut / (NumHeads == 0 ? 1 : NumHeads);  ///< DOut / NumHeads

 private:
  // Sizes for the member types that stay valid when a contract above failed
  // (so that only that static_assert is reported); equal to head_dim and DOut
  // for every valid instantiation.
  static constexpr std::size_t layout_head_dim_ = detail::quotient_or_1<DOut, NumHeads>;
  static constexpr std::size_t layout_num_heads_ = detail::at_least_1<NumHeads>;
  static constexpr std::size_t layout_d_out_ = layout_head_dim_ * layout_num_heads_;

 public:
  static constexpr std::size_t output_width = DOut;
  static constexpr bool qkv_bias = QkvBias;
  /// Features of a key input row (PyTorch's kdim; = DIn unless given): W_key
  /// is [DOut][KDim]. Only cross-attention, forward(query, key, value, ...),
  /// reads key rows of another width.
  static constexpr std::size_t key_dim = KDim;
  /// Features of a value input row (PyTorch's vdim; = DIn unless given).
  static constexpr std::size_t value_dim = VDim;
  static_assert(detail::scores_argument<decltype(Scores)>,
                "mha::multi_head_attention: Scores must be an mha::attention_mask or an mha::attention_scores");
  /// The score options (template parameter Scores; an attention_mask m means
  /// attention_scores{.mask = m}). See mha::attention_scores.
  static constexpr attention_scores scores = detail::checked_scores<Scores>;
  /// Which keys a query attends to: causal, the default, or none (every key;
  /// no KV-cache forward). See mha::attention_mask.
  static constexpr attention_mask mask = scores.mask;
  /// mask == attention_mask::causal (PyTorch's is_causal).
  static constexpr bool is_causal = mask == attention_mask::causal;
  /// Trainable parameters: 3 * (DOut*DIn + (QkvBias ? DOut : 0)) + DOut*DOut + DOut.
  /// GPT-2 small (768, 768, 12 heads, no qkv bias): 2,360,064 (book Exercise 3.3).
  /// (The sum over the parameter walk, mha/parameters.hpp.)
  static constexpr std::size_t parameter_count = detail::params::count<multi_head_attention>();
  /// The members for mha::for_each_parameter, as the book's
  /// MultiHeadAttention's named_parameters() (`mask` is a buffer).
  static constexpr auto parameter_description() noexcept {
    return detail::book_attention_description<multi_head_attention>(
        BOOST_HANA_STRING("mha::multi_head_attention"),
        detail::member(BOOST_HANA_STRING("out_proj"), &multi_head_attention::out_proj),
        detail::member(BOOST_HANA_STRING(""), &multi_head_attention::score_params));
  }
  /// sqrt(head_dim) as a T: the scores are divided by it.
  static constexpr T score_divisor = detail::sqrt(static_cast<T>(layout_head_dim_));

  // Head layout introspection, in the book's logical [Batch][Tokens][DOut]
  // Q, K, V and concatenated context C: head H owns columns
  // [H*head_dim, (H+1)*head_dim) of every row of each (book section 3.6.2).
  // (At run time K is stored transposed, see key_offset.)
  /// Elements between consecutive token rows of Q, K and V (= DOut).
  static constexpr std::size_t qkv_row_stride = DOut;
  /// Elements between consecutive token rows of the context C (= DOut).
  static constexpr std::size_t context_row_stride = DOut;

 private:
  /// Column offset H * head_dim of head H's block, after checking H.
  template <std::size_t H>
  static consteval std::size_t head_column_offset_() noexcept {
    static_assert(detail::index_below<H, NumHeads>,
                  "mha::multi_head_attention: head index H must be less than NumHeads");
    return head_layout<detail::clamp_index<H, NumHeads>, layout_num_heads_, 1, 1,
                       layout_d_out_>::offset;
  }

 public:
  /// Column offset of head H's block in a row of Q, K, V and the context.
  template <std::size_t H>
  static constexpr std::size_t head_offset = head_column_offset_<H>();
  /// Column offset of head H's block in a row of Q (= H * head_dim).
  template <std::size_t H>
  static constexpr std::size_t query_offset = head_column_offset_<H>();
  /// Column offset of head H's block in a row of K (= H * head_dim) in the
  /// book's logical [Batch][Tokens][DOut] K. The workspace and the KV cache
  /// store K transposed, [DOut][positions] per sequence, where head H's keys
  /// are the rows [H*head_dim, (H+1)*head_dim) instead.
  template <std::size_t H>
  static constexpr std::size_t key_offset = head_column_offset_<H>();
  /// Column offset of head H's block in a row of V (= H * head_dim).
  template <std::size_t H>
  static constexpr std::size_t value_offset = head_column_offset_<H>();
  /// Column offset of head H's block in a row of the context C (= H * head_dim).
  template <std::size_t H>
  static constexpr std::size_t context_offset = head_column_offset_<H>();
  /// Layout of head H's block of a [Batch][Tokens][DOut] Q, K, V or context.
  template <std::size_t H, std::size_t Batch, std::size_t Tokens>
  using head_layout_type = head_layout<H, NumHeads, Batch, Tokens, DOut>;
  /// Layout of head H's block of Q, K or V for a [Batch][Tokens] input.
  template <std::size_t H, std::size_t Batch, std::size_t Tokens>
  using qkv_head_layout = head_layout<H, NumHeads, Batch, Tokens, DOut>;
  /// Layout of head H's block of the concatenated context [Batch][Tokens][DOut].
  template <std::size_t H, std::size_t Batch, std::size_t Tokens>
  using context_head_layout = head_layout<H, NumHeads, Batch, Tokens, DOut>;
  /// Layout of head H's rows [head_dim][DIn] of W_query, W_key or W_value.
  template <std::size_t H>
  using weight_head_layout = weight_split_layout<H, NumHeads, DOut, DIn>;

  linear<detail::element_or_float<T>, detail::at_least_1<DIn>, layout_d_out_, QkvBias>
      w_query;  ///< W_query: weight [DOut][DIn], rows split by head
  linear<detail::element_or_float<T>, detail::at_least_1<KDim>, layout_d_out_, QkvBias>
      w_key;  ///< W_key: weight [DOut][KDim], rows split by head
  linear<detail::element_or_float<T>, detail::at_least_1<VDim>, layout_d_out_, QkvBias>
      w_value;  ///< W_value: weight [DOut][VDim], rows split by head
  linear<detail::element_or_float<T>, layout_d_out_, layout_d_out_, true>
      out_proj;  ///< out_proj: weight [DOut][DOut], bias [DOut]
  /// Dropout probability of forward_training, in [0, 1] (inference ignores it).
  /// Outside [0, 1]: MHA_ASSERT in debug builds; in release builds NaN or
  /// p < 0 mean no dropout and p > 1 drops every weight (mha::dynamic throws).
  T dropout = T(0);
  /// The learned parameters of the score options (mha::score_parameters:
  /// none unless an option of `scores` has some).
  [[no_unique_address]] score_parameters<detail::element_or_float<T>, layout_num_heads_, scores>
      score_params{};
  static_assert(
      detail::within_inline_limit<sizeof(w_query) + sizeof(w_key) + sizeof(w_value) +
                                      sizeof(out_proj) + sizeof(T),
                                  MHA_DETAIL_MAX_INLINE_BYTES(),
                                  (sizeof(w_query) > sizeof(out_proj) ? sizeof(w_query)
                                                                      : sizeof(out_proj))>,
      "mha::multi_head_attention: sizeof exceeds MHA_MAX_INLINE_BYTES (the numbers: sizeof, "
      "limit); the limit refuses the type wherever the object lives, like Eigen's stack allocation "
      "limit: keep large models in owned storage (std::make_unique) in code built without "
      "MHA_MAX_INLINE_BYTES, or use mha::dynamic");

  /// Head H's weight split: read-only [head_dim][DIn] views of rows
  /// [H*head_dim, (H+1)*head_dim) of W_query, W_key and W_value.
  template <std::size_t H>
  struct head_weights_type {
    static_assert(detail::index_below<H, NumHeads>,
                  "mha::multi_head_attention::head_weights: head index H must be less than "
                  "NumHeads");
    static constexpr std::size_t h_ = detail::clamp_index<H, NumHeads>;
    block_view<const T, weight_split_layout<h_, NumHeads, DOut, DIn>> query;
    block_view<const T, weight_split_layout<h_, NumHeads, DOut, KDim>> key;    ///< [head_dim][KDim]
    block_view<const T, weight_split_layout<h_, NumHeads, DOut, VDim>> value;  ///< [head_dim][VDim]
  };
  /// Head H's weight split (see head_weights_type). Error if H >= NumHeads.
  template <std::size_t H>
  constexpr head_weights_type<H> head_weights() const noexcept {
    constexpr std::size_t h = detail::clamp_index<H, NumHeads>;
    return {weight_split_view<h, NumHeads>(w_query.weight),
            weight_split_view<h, NumHeads>(w_key.weight),
            weight_split_view<h, NumHeads>(w_value.weight)};
  }

 private:
  /// The module for the orchestration (detail/engine/attention.hpp): one group of
  /// NumHeads heads whose weight rows are the heads' splits, and out_proj.
  constexpr auto spec_() const noexcept {
    return detail::make_spec<T, scores>(
        detail::size_c<DIn>{}, detail::size_c<layout_head_dim_>{}, detail::size_c<layout_num_heads_>{},
        detail::size_c<1>{},
        [this](auto) {
          return detail::qkv_weights<T, decltype(detail::bias_data(w_query))>{
              detail::weight_access(w_query.weight), detail::bias_data(w_query), detail::weight_access(w_key.weight),
              detail::bias_data(w_key), detail::weight_access(w_value.weight), detail::bias_data(w_value), dropout};
        },
        detail::out_weights<T, detail::present_bias<T>>{detail::weight_access(out_proj.weight),
                                                        detail::present_bias<T>{out_proj.bias.data()}},
        score_divisor, score_params);
  }

 public:
#define MHA_DETAIL_MODULE_NAME "multi_head_attention"
#include <mha/detail/api/forward_overloads.inc>
};

}  // namespace mha

#include <mha/detail/macros_undef.hpp>

#endif  // MHA_DETAIL_NO_CXX20
