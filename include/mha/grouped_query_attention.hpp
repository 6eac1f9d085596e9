// mha/grouped_query_attention.hpp -- grouped-query (and multi-query)
// attention with optional rotary position embeddings, the book's Llama
// GroupedQueryAttention.
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
#include <mha/detail/kernels/rope.hpp>
#include <mha/linear.hpp>
#include <mha/rope.hpp>
#include <mha/tensor.hpp>

#include <mha/detail/macros.hpp>

namespace mha {

namespace detail {
/// The rope theta of a valid choice (0 otherwise: its own error came first).
template <class R>
inline constexpr std::size_t rope_theta_of = 0;
template <std::size_t Theta>
inline constexpr std::size_t rope_theta_of<rope<Theta>> = Theta;
/// R is an mha::rope<Theta> (any Theta, also the invalid 0 and 1).
template <class R>
inline constexpr bool is_rope = false;
template <std::size_t Theta>
inline constexpr bool is_rope<rope<Theta>> = true;
/// RoPE rotates pairs (f, f + head_dim/2): head_dim must be even.
template <std::size_t HeadDim>
inline constexpr bool even_head_dim = HeadDim % 2 == 0;
/// RoPE's base must exceed 1.
template <std::size_t Theta>
inline constexpr bool rope_theta_above_1 = Theta > 1;
/// RoPE's angles stay within constexpr_sin_cos's range: at most 2^20 positions.
template <std::size_t ContextLength>
inline constexpr bool rope_positions_within_range = ContextLength <= (std::size_t{1} << 20);
}  // namespace detail

/// Grouped-query causal self-attention (Ainslie et al., "GQA", 2023): the
/// book's Llama `GroupedQueryAttention` (Raschka, LLMs from scratch,
/// ch05/07_gpt_to_llama), with every shape a template parameter.
///
///   Q = x W_query^T [B][N][DOut],  K = x W_key^T, V = x W_value^T  [B][N][NumKvHeads*head_dim]
///   RoPE (Rope = mha::rope<Theta>): Q and K rotated per head by position
///   query head h reads key/value head g = h / (NumHeads / NumKvHeads)
///   context_h = dropout(softmax(mask(Q_h K_g^T) / sqrt(head_dim))) V_g  -> columns of C
///   forward(x) = C out_proj.weight^T + out_proj.bias          [B][N][DOut]
///
/// head_dim = DOut / NumHeads. NumKvHeads == 1 is multi-query attention
/// (Shazeer 2019), NumKvHeads == NumHeads equals multi_head_attention (with
/// RoPE off, bit for bit). Query head h's keys and values are those of its
/// group, reached by a compile-time offset (key_offset<h>): K and V are stored
/// once per key/value head, never repeated (no repeat_interleave copy), and
/// the KV cache (kv_cache<B>) holds NumKvHeads heads, NumHeads / NumKvHeads
/// times less than multi_head_attention's. The forward is the one
/// orchestration of every module (detail/engine/attention.hpp) and takes its paths
/// (token-major for causal float inference, blocked, decode);
/// forward(x, n, out, ws) and forward(x, n, out, cache, ws) as in
/// multi_head_attention (docs/streaming.md, docs/grouped_query_attention.md).
/// RoPE's cos/sin tables (ContextLength * head_dim / 2 each) are computed at
/// compile time into static read-only storage when they hold at most
/// detail::rope_compile_time_pairs (1024) pairs, else once, on the first
/// forward, into static storage (thread-safe; such a model's forward is not
/// usable in constant expressions); the same bits either way.
///
/// Members: `w_query` (linear<T, DIn, DOut, QkvBias>), `w_key`, `w_value`
/// (linear<T, DIn, NumKvHeads * head_dim, QkvBias>), `out_proj`
/// (linear<T, DOut, DOut, true>; Llama's o_proj has no bias: leave it zero),
/// `dropout` (probability, training only). An aggregate; value-initialisation
/// gives all-zero weights.
///
/// Compile-time errors ("mha::grouped_query_attention: ..."): T not float or
/// double; DIn, DOut, ContextLength, NumHeads or NumKvHeads zero; DOut not
/// divisible by NumHeads; NumHeads not divisible by NumKvHeads; Rope not
/// mha::no_rope or mha::rope<Theta>; with RoPE an odd head_dim, Theta <= 1 or
/// ContextLength above 2^20; and those of forward (detail/api/forward_overloads.inc).
template <class T, std::size_t DIn, std::size_t DOut, std::size_t ContextLength,
          std::size_t NumHeads, std::size_t NumKvHeads, bool QkvBias = false,
          class Rope = no_rope, auto Scores = attention_mask::causal>
struct grouped_query_attention {
  static_assert(detail::float_or_double<T>,
                "mha::grouped_query_attention: T must be float or double");
  static_assert(detail::greater_than_zero<DIn>,
                "mha::grouped_query_attention: DIn must be greater than 0");
  static_assert(detail::greater_than_zero<DOut>,
                "mha::grouped_query_attention: DOut must be greater than 0");
  static_assert(detail::greater_than_zero<ContextLength>,
                "mha::grouped_query_attention: ContextLength must be greater than 0");
  static_assert(detail::greater_than_zero<NumHeads>,
                "mha::grouped_query_attention: NumHeads must be greater than 0");
  static_assert(detail::greater_than_zero<NumKvHeads>,
                "mha::grouped_query_attention: NumKvHeads must be greater than 0");
  static_assert(detail::divisible_by<DOut, detail::at_least_1<NumHeads>>,
                "mha::grouped_query_attention: DOut must be divisible by NumHeads");
  static_assert(detail::divisible_by<NumHeads, detail::at_least_1<NumKvHeads>>,
                "mha::grouped_query_attention: NumHeads must be divisible by NumKvHeads");
  static_assert(rope_choice<Rope>,
                "mha::grouped_query_attention: Rope must be mha::no_rope or mha::rope<ThetaBase>");

  using value_type = T;
  using rope_type = Rope;  ///< mha::no_rope or mha::rope<theta_base>
  static constexpr std::size_t d_in = DIn;
  static constexpr std::size_t d_out = DOut;
  static constexpr std::size_t context_length = ContextLength;
  static constexpr std::size_t num_heads = NumHeads;
  static constexpr std::size_t num_kv_heads = NumKvHeads;  ///< key/value heads (groups)
  static constexpr std::size_t head_dim = DOut / (NumHeads == 0 ? 1 : NumHeads);  ///< DOut / NumHeads
  /// Query heads per key/value head (the book's group_size).
  static constexpr std::size_t group_size = NumHeads / (NumKvHeads == 0 ? 1 : NumKvHeads);
  /// Width of K and V: NumKvHeads * head_dim (W_key's and W_value's out_features).
  static constexpr std::size_t kv_width = NumKvHeads * head_dim;
  static constexpr std::size_t output_width = DOut;
  static constexpr bool qkv_bias = QkvBias;
  /// Features of a key and of a value input row of cross-attention (=
  /// DIn: only multi_head_attention takes another kdim / vdim).
  static constexpr std::size_t key_dim = DIn;
  static constexpr std::size_t value_dim = DIn;
  static_assert(detail::scores_argument<decltype(Scores)>,
                "mha::grouped_query_attention: Scores must be an mha::attention_mask or an mha::attention_scores");
  /// The score options (template parameter Scores; an attention_mask m means
  /// attention_scores{.mask = m}). See mha::attention_scores.
  static constexpr attention_scores scores = detail::checked_scores<Scores>;
  /// Which keys a query attends to: causal, the default, or none (every key;
  /// no KV-cache forward). See mha::attention_mask.
  static constexpr attention_mask mask = scores.mask;
  /// mask == attention_mask::causal (PyTorch's is_causal).
  static constexpr bool is_causal = mask == attention_mask::causal;
  static constexpr bool has_rope = detail::is_rope<Rope>;  ///< Rope is an mha::rope<Theta>
  /// RoPE's base (0 without RoPE).
  static constexpr std::size_t rope_theta_base = detail::rope_theta_of<Rope>;
  static_assert(!has_rope || detail::even_head_dim<head_dim>,
                "mha::grouped_query_attention: RoPE needs an even head_dim (DOut / NumHeads)");
  static_assert(!has_rope || detail::rope_theta_above_1<detail::rope_theta_of<Rope>>,
                "mha::grouped_query_attention: RoPE's ThetaBase must be greater than 1");
  static_assert(!has_rope || detail::rope_positions_within_range<ContextLength>,
                "mha::grouped_query_attention: with RoPE, ContextLength must be at most 2^20");

 private:
  // Sizes for the member types that stay valid when a contract above failed
  // (so that only that static_assert is reported).
  static constexpr std::size_t layout_head_dim_ = detail::quotient_or_1<DOut, NumHeads>;
  static constexpr std::size_t layout_num_heads_ = detail::at_least_1<NumHeads>;
  static constexpr std::size_t layout_kv_heads_ =
      detail::divisible_by<layout_num_heads_, detail::at_least_1<NumKvHeads>>
          ? detail::at_least_1<NumKvHeads>
          : 1;
  static constexpr std::size_t layout_d_out_ = layout_head_dim_ * layout_num_heads_;
  static constexpr std::size_t layout_kv_width_ = layout_head_dim_ * layout_kv_heads_;
  static constexpr bool rope_valid_ = has_rope && layout_head_dim_ % 2 == 0 &&
                                      rope_theta_base > 1 &&
                                      detail::rope_positions_within_range<ContextLength>;

  template <std::size_t H>
  static consteval std::size_t query_column_offset_() noexcept {
    static_assert(detail::index_below<H, NumHeads>,
                  "mha::grouped_query_attention: head index H must be less than NumHeads");
    return detail::clamp_index<H, NumHeads> * layout_head_dim_;
  }
  template <std::size_t H>
  static consteval std::size_t kv_column_offset_() noexcept {
    static_assert(detail::index_below<H, NumHeads>,
                  "mha::grouped_query_attention: head index H must be less than NumHeads");
    return detail::clamp_index<H, NumHeads> / (layout_num_heads_ / layout_kv_heads_) *
           layout_head_dim_;
  }

 public:
  /// Trainable parameters: DOut*DIn + 2*kv_width*DIn (+ DOut + 2*kv_width with
  /// qkv_bias) + DOut*DOut + DOut (the sum over the parameter walk).
  static constexpr std::size_t parameter_count = detail::params::count<grouped_query_attention>();
  /// The members for mha::for_each_parameter, as the book's
  /// GroupedQueryAttention's named_parameters() (its mask, cos and sin are
  /// the model's buffers, not the module's).
  static constexpr auto parameter_description() noexcept {
    return detail::describe(
        BOOST_HANA_STRING("mha::grouped_query_attention"),
        detail::member(BOOST_HANA_STRING("W_query"), &grouped_query_attention::w_query),
        detail::member(BOOST_HANA_STRING("W_key"), &grouped_query_attention::w_key),
        detail::member(BOOST_HANA_STRING("W_value"), &grouped_query_attention::w_value),
        detail::member(BOOST_HANA_STRING("out_proj"), &grouped_query_attention::out_proj),
        detail::member(BOOST_HANA_STRING(""), &grouped_query_attention::score_params));
  }
  /// sqrt(head_dim) as a T: the scores are divided by it.
  static constexpr T score_divisor = detail::sqrt(static_cast<T>(layout_head_dim_));

  /// The key/value head of query head H: H / group_size (error if H >= NumHeads).
  template <std::size_t H>
  static constexpr std::size_t kv_head = kv_column_offset_<H>() / layout_head_dim_;
  /// Column offset of query head H's block in a row of Q and of the context (H * head_dim).
  template <std::size_t H>
  static constexpr std::size_t query_offset = query_column_offset_<H>();
  /// Column offset of query head H's block in a row of the context C (H * head_dim).
  template <std::size_t H>
  static constexpr std::size_t context_offset = query_column_offset_<H>();
  /// Column offset of the keys query head H reads, in a row of the book's
  /// logical [Batch][Tokens][kv_width] K: kv_head<H> * head_dim (the workspace
  /// and the KV cache store K transposed, these are then rows).
  template <std::size_t H>
  static constexpr std::size_t key_offset = kv_column_offset_<H>();
  /// Column offset of the values query head H reads in a row of V (kv_head<H> * head_dim).
  template <std::size_t H>
  static constexpr std::size_t value_offset = kv_column_offset_<H>();

  linear<detail::element_or_float<T>, detail::at_least_1<DIn>, layout_d_out_, QkvBias>
      w_query;  ///< W_query: weight [DOut][DIn], rows split by head
  linear<detail::element_or_float<T>, detail::at_least_1<DIn>, layout_kv_width_, QkvBias>
      w_key;  ///< W_key: weight [kv_width][DIn], rows split by key/value head
  linear<detail::element_or_float<T>, detail::at_least_1<DIn>, layout_kv_width_, QkvBias>
      w_value;  ///< W_value: weight [kv_width][DIn], rows split by key/value head
  linear<detail::element_or_float<T>, layout_d_out_, layout_d_out_, true>
      out_proj;  ///< out_proj: weight [DOut][DOut], bias [DOut]
  /// Dropout probability of forward_training, in [0, 1] (inference ignores it);
  /// as multi_head_attention's.
  T dropout = T(0);
  /// The learned parameters of the score options (mha::score_parameters:
  /// none unless an option of `scores` has some).
  [[no_unique_address]] score_parameters<detail::element_or_float<T>, layout_num_heads_, scores>
      score_params{};
  static_assert(
      detail::within_inline_limit<sizeof(w_query) + 2 * sizeof(w_key) + sizeof(out_proj) +
                                      sizeof(T),
                                  MHA_DETAIL_MAX_INLINE_BYTES(),
                                  (sizeof(w_query) > sizeof(out_proj) ? sizeof(w_query)
                                                                      : sizeof(out_proj))>,
      "mha::grouped_query_attention: sizeof exceeds MHA_MAX_INLINE_BYTES (the numbers: sizeof, "
      "limit); keep large models in owned storage (std::make_unique) in code built without "
      "MHA_MAX_INLINE_BYTES, or use mha::dynamic");

  /// Query head H's weight split: read-only views of its rows [head_dim][DIn]
  /// of W_query and of its key/value head's rows of W_key and W_value (shared
  /// by the group_size heads of the group, not copied).
  template <std::size_t H>
  struct head_weights_type {
    static_assert(detail::index_below<H, NumHeads>,
                  "mha::grouped_query_attention::head_weights: head index H must be less than "
                  "NumHeads");
    static constexpr std::size_t h_ = detail::clamp_index<H, NumHeads>;
    static constexpr std::size_t g_ = h_ / (layout_num_heads_ / layout_kv_heads_);
    block_view<const T, weight_split_layout<h_, layout_num_heads_, layout_d_out_, DIn>> query;
    block_view<const T, weight_split_layout<g_, layout_kv_heads_, layout_kv_width_, DIn>> key,
        value;
  };
  /// Query head H's weight split (see head_weights_type). Error if H >= NumHeads.
  template <std::size_t H>
  constexpr head_weights_type<H> head_weights() const noexcept {
    constexpr std::size_t h = detail::clamp_index<H, NumHeads>;
    constexpr std::size_t g = h / (layout_num_heads_ / layout_kv_heads_);
    return {weight_split_view<h, layout_num_heads_>(w_query.weight),
            weight_split_view<g, layout_kv_heads_>(w_key.weight),
            weight_split_view<g, layout_kv_heads_>(w_value.weight)};
  }

 private:
  /// The rotation tables for the orchestration: the compile-time tables, or none.
  static constexpr auto rope_() noexcept {
    if constexpr (!rope_valid_) {
      return detail::no_rope_tables{};
    } else if constexpr (detail::rope_tables_at_compile_time<layout_head_dim_, ContextLength>) {
      constexpr const auto& t =
          detail::rope_table_v<T, layout_head_dim_, ContextLength, rope_theta_base>;
      return detail::rope_tables<T>{t.cos, t.sin, true};
    } else {
      const auto& t = detail::rope_runtime_table<T, layout_head_dim_, ContextLength, rope_theta_base>();
      return detail::rope_tables<T>{t.cos, t.sin, true};
    }
  }
  /// The module for the orchestration (detail/engine/attention.hpp): one group of
  /// NumHeads query heads and NumKvHeads key/value heads, RoPE, out_proj.
  constexpr auto spec_() const noexcept {
    return detail::make_grouped_spec<T, scores>(
        detail::size_c<DIn>{}, detail::size_c<layout_head_dim_>{},
        detail::size_c<layout_num_heads_>{}, detail::size_c<layout_kv_heads_>{},
        [this](auto) {
          return detail::qkv_weights<T, decltype(detail::bias_data(w_query))>{
              detail::weight_access(w_query.weight), detail::bias_data(w_query), detail::weight_access(w_key.weight),
              detail::bias_data(w_key), detail::weight_access(w_value.weight), detail::bias_data(w_value), dropout};
        },
        detail::out_weights<T, detail::present_bias<T>>{detail::weight_access(out_proj.weight),
                                                        detail::present_bias<T>{out_proj.bias.data()}},
        score_divisor, rope_(), score_params);
  }

 public:
#define MHA_DETAIL_MODULE_NAME "grouped_query_attention"
#include <mha/detail/api/forward_overloads.inc>
};

}  // namespace mha

#include <mha/detail/macros_undef.hpp>

#endif  // MHA_DETAIL_NO_CXX20
