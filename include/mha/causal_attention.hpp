// mha/causal_attention.hpp -- the book's single-head CausalAttention.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <mha/attention_scores.hpp>
#include <mha/block_layout.hpp>
#include <mha/block_view.hpp>
#include <mha/detail/api/contracts.hpp>
#include <mha/detail/engine/attention.hpp>
#include <mha/detail/kernels/kernels.hpp>
#include <mha/detail/arch/math.hpp>
#include <mha/detail/api/module_interface.hpp>
#include <mha/detail/params/parameter_walk.hpp>
#include <mha/linear.hpp>
#include <mha/tensor.hpp>

#include <mha/detail/macros.hpp>

namespace mha {

/// Single-head causal self-attention: the book's `CausalAttention` (Raschka,
/// "Build a Large Language Model From Scratch", section 3.5.3), with every
/// shape a template parameter.
///
///   Q = x W_query^T (+ b), K = x W_key^T (+ b), V = x W_value^T (+ b)   [B][N][DOut]
///   A = softmax_over_keys(mask(Q K^T) / sqrt(DOut))                      [B][N][N]
///   forward(x) = dropout(A) V                                            [B][N][DOut]
///
/// mask sets key index j > query index i to -inf (the N x N top-left block of
/// the ContextLength x ContextLength upper-triangular mask); dropout applies
/// only in forward_training.
///
/// Members: `w_query`, `w_key`, `w_value` (linear<T, DIn, DOut, QkvBias>,
/// weights [DOut][DIn]) and `dropout` (probability in [0, 1], training only).
/// An aggregate: `causal_attention<float, 3, 2, 6> ca{};` has all-zero weights
/// and can live in static storage, in std::make_unique, or be `constexpr`.
/// The forward overloads are noexcept, allocate nothing and are constexpr.
///
/// Compile-time errors (static_assert, "mha::causal_attention: ..."): T not
/// float/double, DIn, DOut or ContextLength zero; for forward, see
/// detail/api/forward_overloads.inc (input rank/extents/type, N > ContextLength,
/// output shape, workspace shape, stack workspace limit).
template <class T, std::size_t DIn, std::size_t DOut, std::size_t ContextLength,
          bool QkvBias = false, auto Scores = attention_mask::causal>
struct causal_attention {
  static_assert(detail::float_or_double<T>,
                "mha::causal_attention: T must be float or double");
  static_assert(detail::greater_than_zero<DIn>, "mha::causal_attention: DIn must be greater than 0");
  static_assert(detail::greater_than_zero<DOut>,
                "mha::causal_attention: DOut must be greater than 0");
  static_assert(detail::greater_than_zero<ContextLength>,
                "mha::causal_attention: ContextLength must be greater than 0");

  using value_type = T;
  static constexpr std::size_t d_in = DIn;                     ///< input features
  static constexpr std::size_t d_out = DOut;                   ///< output features
  static constexpr std::size_t context_length = ContextLength; ///< largest N
  static constexpr std::size_t num_heads = 1;                  ///< a single head
  /// Key/value heads (= num_heads: every head has its own; fewer only in
  /// grouped_query_attention). The KV cache stores this many.
  static constexpr std::size_t num_kv_heads = num_heads;
  static constexpr std::size_t head_dim = DOut;                ///< width of the head
  static constexpr std::size_t output_width = DOut;            ///< last extent of the output
  static constexpr bool qkv_bias = QkvBias;                    ///< Q/K/V projections have bias
  /// Features of a key and of a value input row of cross-attention (=
  /// DIn: only multi_head_attention takes another kdim / vdim).
  static constexpr std::size_t key_dim = DIn;
  static constexpr std::size_t value_dim = DIn;
  static_assert(detail::scores_argument<decltype(Scores)>,
                "mha::causal_attention: Scores must be an mha::attention_mask or an mha::attention_scores");
  /// The score options (template parameter Scores; an attention_mask m means
  /// attention_scores{.mask = m}). See mha::attention_scores.
  static constexpr attention_scores scores = detail::checked_scores<Scores>;
  static_assert(!detail::scores_have_parameters(scores),
                "mha::causal_attention: score options with learned parameters need multi_head_attention, "
                "fused_multi_head_attention or grouped_query_attention");
  /// Which keys a query attends to: causal, the default, or none (every key;
  /// no KV-cache forward). See mha::attention_mask.
  static constexpr attention_mask mask = scores.mask;
  /// mask == attention_mask::causal (PyTorch's is_causal).
  static constexpr bool is_causal = mask == attention_mask::causal;
  /// The members for mha::for_each_parameter, as the book's CausalAttention's
  /// named_parameters() (`mask` is a buffer, no parameter).
  static constexpr auto parameter_description() noexcept {
    return detail::book_attention_description<causal_attention>(
        BOOST_HANA_STRING("mha::causal_attention"));
  }
  /// Trainable parameters: 3 * (DOut*DIn + (QkvBias ? DOut : 0)), the sum
  /// over the parameter walk (mha/parameters.hpp).
  static constexpr std::size_t parameter_count = detail::params::count<causal_attention>();
  /// sqrt(head_dim) as a T: the scores are divided by it.
  static constexpr T score_divisor = detail::sqrt(static_cast<T>(detail::at_least_1<DOut>));

  // Head layout introspection (the single head, H = 0): the layout of Q and V
  // as [Batch][Tokens][DOut] rows, the book's view. (At run time the
  // workspace holds K transposed, [DOut][Tokens] per sequence, and the paths
  // of docs/design.md their own layouts; the head's context is the output.)
  /// Elements between consecutive token rows of Q, K and V.
  static constexpr std::size_t qkv_row_stride = DOut;
  /// Elements between consecutive token rows of the output (the context).
  static constexpr std::size_t context_row_stride = DOut;

 private:
  /// Column offset (0) of head H's block, after checking that H is 0.
  template <std::size_t H>
  static consteval std::size_t head_column_offset_() noexcept {
    static_assert(detail::index_below<H, 1>,
                  "mha::causal_attention: head index H must be 0 (a single head)");
    return 0;
  }

 public:
  /// Column offset of head H's block in a row of Q (only H = 0 exists).
  template <std::size_t H>
  static constexpr std::size_t query_offset = head_column_offset_<H>();
  /// Column offset of head H's block in a row of the book's logical
  /// [Batch][Tokens][DOut] K (at run time the workspace stores K transposed,
  /// [Batch][DOut][Tokens]; the constant-evaluation path keeps it row-major).
  template <std::size_t H>
  static constexpr std::size_t key_offset = head_column_offset_<H>();
  /// Column offset of head H's block in a row of V.
  template <std::size_t H>
  static constexpr std::size_t value_offset = head_column_offset_<H>();
  /// Column offset of head H's block in a row of the context (= the output).
  template <std::size_t H>
  static constexpr std::size_t context_offset = head_column_offset_<H>();
  /// Layout of head H's block of Q, K or V for a [Batch][Tokens] input.
  template <std::size_t H, std::size_t Batch, std::size_t Tokens>
  using qkv_head_layout = head_layout<H, 1, Batch, Tokens, DOut>;
  /// Layout of head H's block of the context [Batch][Tokens][DOut].
  template <std::size_t H, std::size_t Batch, std::size_t Tokens>
  using context_head_layout = head_layout<H, 1, Batch, Tokens, DOut>;
  /// Layout of head H's rows of W_query, W_key or W_value [DOut][DIn].
  template <std::size_t H>
  using weight_head_layout = weight_split_layout<H, 1, DOut, DIn>;

  linear<detail::element_or_float<T>, detail::at_least_1<DIn>, detail::at_least_1<DOut>, QkvBias>
      w_query;  ///< W_query: weight [DOut][DIn]
  linear<detail::element_or_float<T>, detail::at_least_1<DIn>, detail::at_least_1<DOut>, QkvBias>
      w_key;  ///< W_key: weight [DOut][DIn]
  linear<detail::element_or_float<T>, detail::at_least_1<DIn>, detail::at_least_1<DOut>, QkvBias>
      w_value;  ///< W_value: weight [DOut][DIn]
  /// Dropout probability of forward_training, in [0, 1] (inference ignores it).
  /// Outside [0, 1]: MHA_ASSERT in debug builds; in release builds NaN or
  /// p < 0 mean no dropout and p > 1 drops every weight (mha::dynamic throws).
  T dropout = T(0);
  static_assert(detail::within_inline_limit<3 * sizeof(w_query) + sizeof(T),
                                            MHA_DETAIL_MAX_INLINE_BYTES(), sizeof(w_query)>,
                "mha::causal_attention: sizeof exceeds MHA_MAX_INLINE_BYTES (the numbers: sizeof, "
                "limit); the limit refuses the type wherever the object lives, like Eigen's stack "
                "allocation limit: keep large models in owned storage (std::make_unique) in code "
                "built without MHA_MAX_INLINE_BYTES, or use mha::dynamic");

  /// Assigning a causal_attention of another element type, shape or bias
  /// setting (e.g. to a wrapper's head<H>()) is a compile-time error with our
  /// message; same-type assignment uses the implicit copy assignment.
  template <class U, std::size_t I, std::size_t O, std::size_t C, bool B, auto M>
  constexpr causal_attention& operator=(const causal_attention<U, I, O, C, B, M>&) noexcept {
    static_assert(detail::same_module_type<causal_attention<U, I, O, C, B, M>, causal_attention>,
                  "mha::causal_attention: cannot assign a causal_attention of a different element "
                  "type, shape, qkv bias setting or attention mask");
    return *this;
  }

 private:
  /// The module for the orchestration (detail/engine/attention.hpp): one head of
  /// width DOut, no out_proj (the head's context is the output).
  constexpr auto spec_() const noexcept {
    return detail::make_spec<T, scores>(
        detail::size_c<detail::at_least_1<DIn>>{}, detail::size_c<detail::at_least_1<DOut>>{},
        detail::size_c<1>{}, detail::size_c<1>{},
        [this](auto) {
          return detail::qkv_weights<T, decltype(detail::bias_data(w_query))>{
              detail::weight_access(w_query.weight), detail::bias_data(w_query), detail::weight_access(w_key.weight),
              detail::bias_data(w_key), detail::weight_access(w_value.weight), detail::bias_data(w_value), dropout};
        },
        detail::no_out_proj{}, score_divisor);
  }

 public:
#define MHA_DETAIL_MODULE_NAME "causal_attention"
#include <mha/detail/api/forward_overloads.inc>
};

}  // namespace mha

#include <mha/detail/macros_undef.hpp>

#endif  // MHA_DETAIL_NO_CXX20
