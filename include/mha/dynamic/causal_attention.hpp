// mha/dynamic/causal_attention.hpp -- CausalAttention with run-time sizes.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#include <mha/detail/dynamic_needs_exceptions.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <mha/attention_scores.hpp>
#include <mha/detail/kernels/dropout.hpp>
#include <mha/detail/api/dynamic_checks.hpp>
#include <mha/detail/api/dynamic_module.hpp>
#include <mha/detail/kernels/kernels.hpp>
#include <mha/dynamic/linear.hpp>
#include <mha/dynamic/tensor.hpp>
#include <mha/dynamic/workspace.hpp>

#include <mha/detail/macros.hpp>

namespace mha::dynamic {

/// The runtime-sized twin of mha::causal_attention (book section 3.5.3): same
/// members (`w_query`, `w_key`, `w_value`, `dropout`), same arithmetic in the
/// same order (shared kernels), sizes chosen at run time.
///
/// x: [B][N][d_in] or [N][d_in]; output [B][N][d_out] (or [N][d_out]).
/// Errors (std::invalid_argument, message names the sizes): zero d_in, d_out
/// or context_length ("mha::dynamic::causal_attention: d_in must be greater
/// than 0"); input rank not 2 or 3, last extent != d_in, N == 0 or
/// N > context_length, batch 0, wrong output shape, weights of a wrong shape,
/// dropout outside [0, 1] in training; messages name the member, e.g.
/// "mha::dynamic::causal_attention: w_key.weight is [3][2], expected [2][3]".
/// A T other than float or double is a compile-time error
/// ("mha::dynamic::causal_attention: T must be float or double"), and so is
/// anything but a bool as qkv_bias (a deleted constructor: an integer dropout
/// in the book's order).
template <class T, auto Scores = attention_mask::causal>
class causal_attention : public detail::dynamic_module<causal_attention<T, Scores>, T> {
  friend class detail::dynamic_module<causal_attention<T, Scores>, T>;
  static_assert(detail::float_or_double<T>,
                "mha::dynamic::causal_attention: T must be float or double");

 public:
  using value_type = T;
  static_assert(detail::scores_argument<decltype(Scores)>,
                "mha::dynamic::causal_attention: Scores must be an mha::attention_mask or an mha::attention_scores");
  /// The score options (template parameter Scores; an attention_mask m means
  /// attention_scores{.mask = m}). See mha::attention_scores.
  static constexpr attention_scores scores = detail::checked_scores<Scores>;
  static_assert(!detail::scores_have_parameters(scores),
                "mha::dynamic::causal_attention: score options with learned parameters need multi_head_attention, "
                "fused_multi_head_attention or grouped_query_attention");
  /// Which keys a query attends to: causal, the default, or none (every key;
  /// no KV-cache forward). See mha::attention_mask.
  static constexpr attention_mask mask = scores.mask;
  /// mask == attention_mask::causal (PyTorch's is_causal).
  static constexpr bool is_causal = mask == attention_mask::causal;

  /// A module of d_in input features, d_out output features, sequences of up
  /// to context_length tokens, with query/key/value biases when qkv_bias;
  /// weights zero (fill them, or load them: mha::io, mha::load_parameters),
  /// dropout 0. Throws std::invalid_argument for a zero size.
  MHA_DETAIL_ISA_TAG
  causal_attention(std::size_t d_in, std::size_t d_out, std::size_t context_length,
                   bool qkv_bias = false)
      : w_query(detail::check_dynamic_sizes(api, d_in, d_out, context_length), d_out, qkv_bias),
        w_key(d_in, d_out, qkv_bias),
        w_value(d_in, d_out, qkv_bias),
        d_in_(d_in),
        d_out_(d_out),
        context_length_(context_length),
        qkv_bias_(qkv_bias) {}
  /// The book's argument order, CausalAttention(d_in, d_out, context_length,
  /// dropout, qkv_bias=False) (section 3.5.3): as above, with `dropout` (the
  /// probability of forward_training) set to dropout_p. (Without this overload a dropout
  /// would convert to qkv_bias.) Throws std::invalid_argument for a zero size
  /// or, as torch.nn.Dropout, for a dropout_p outside [0, 1].
  template <std::floating_point D>
  MHA_DETAIL_ISA_TAG causal_attention(std::size_t d_in, std::size_t d_out,
                                      std::size_t context_length, D dropout_p, bool qkv_bias = false)
      : causal_attention(d_in, d_out, context_length, qkv_bias) {
    detail::check_dynamic_dropout(api, dropout_p);
    dropout = static_cast<T>(dropout_p);
  }
  /// Anything but a bool or a dropout where qkv_bias goes (an integer, a
  /// pointer) would convert to bool silently: deleted. The book's
  /// CausalAttention(3, 2, 6, 0) with an integer dropout 0 would otherwise be
  /// qkv_bias false (and a dropout 1 qkv_bias true); write the dropout as 0.0,
  /// or pass true or false.
  template <class DropoutOrQkvBiasMustBeBool>
    requires(!std::floating_point<DropoutOrQkvBiasMustBeBool> &&
             detail::converts_to_bool_silently<DropoutOrQkvBiasMustBeBool>)
  causal_attention(std::size_t, std::size_t, std::size_t, DropoutOrQkvBiasMustBeBool) = delete;
  /// The same for the book's order (after dropout): qkv_bias must be a bool.
  template <std::floating_point D, class QkvBiasMustBeBool>
    requires detail::converts_to_bool_silently<QkvBiasMustBeBool>
  causal_attention(std::size_t, std::size_t, std::size_t, D, QkvBiasMustBeBool) = delete;

  // linear<T> (float when T is not float or double: the one error is the
  // static_assert above)
  linear<detail::element_or_float<T>> w_query;  ///< weight [d_out][d_in]
  linear<detail::element_or_float<T>> w_key;    ///< weight [d_out][d_in]
  linear<detail::element_or_float<T>> w_value;  ///< weight [d_out][d_in]
  T dropout = T(0);   ///< dropout probability (training only)

  std::size_t d_in() const noexcept { return d_in_; }
  std::size_t d_out() const noexcept { return d_out_; }
  std::size_t context_length() const noexcept { return context_length_; }
  std::size_t num_heads() const noexcept { return 1; }
  std::size_t head_dim() const noexcept { return d_out_; }
  std::size_t output_width() const noexcept { return d_out_; }
  bool qkv_bias() const noexcept { return qkv_bias_; }
  /// The members for mha::for_each_parameter, as the book's CausalAttention's
  /// named_parameters() (`mask` is a buffer, no parameter).
  static constexpr auto parameter_description() noexcept {
    return detail::book_attention_description<causal_attention>(
        BOOST_HANA_STRING("mha::dynamic::causal_attention"));
  }

  // forward(x), operator()(x), forward(x, out), forward(x, out, ws),
  // forward_training(x, seed), forward_training(x, out, seed),
  // forward_training(x, out, ws, seed) and parameter_count() (the walk's sum)
  // come from detail::dynamic_module.

  // Copies, moves and destruction as the compiler would generate them,
  // declared only to carry the ISA's ABI tag (their code moves T values;
  // docs/design.md, "ISA namespaces").
  MHA_DETAIL_ISA_TAG causal_attention(const causal_attention&) = default;
  MHA_DETAIL_ISA_TAG causal_attention(causal_attention&&) = default;
  MHA_DETAIL_ISA_TAG causal_attention& operator=(const causal_attention&) = default;
  MHA_DETAIL_ISA_TAG causal_attention& operator=(causal_attention&&) = default;
  MHA_DETAIL_ISA_TAG ~causal_attention() = default;

 private:
  static constexpr const char* api = "mha::dynamic::causal_attention";

  /// std::invalid_argument for member layers of other sizes or, in training,
  /// a dropout outside [0, 1] (`who` names the module in the message, `head`
  /// this head's index in a wrapper: "heads[1].w_query.weight is ...").
  MHA_DETAIL_ISA_TAG void check_parameters_(bool training, const char* who = api,
                                            std::size_t head = detail::no_head) const {
    if (training) detail::check_dynamic_dropout(who, dropout, head);
    detail::check_dynamic_linear(who, "w_query", w_query, d_in_, d_out_, qkv_bias_, head);
    detail::check_dynamic_linear(who, "w_key", w_key, d_in_, d_out_, qkv_bias_, head);
    detail::check_dynamic_linear(who, "w_value", w_value, d_in_, d_out_, qkv_bias_, head);
  }
  /// The head's Q/K/V weights for the orchestration.
  detail::qkv_weights<T, const T*> weights_() const noexcept {
    const auto bias = [&](const linear<T>& l) { return qkv_bias_ ? l.bias.data() : nullptr; };
    return {detail::weight_access(w_query.weight), bias(w_query), detail::weight_access(w_key.weight), bias(w_key),
            detail::weight_access(w_value.weight), bias(w_value), dropout};
  }
  /// The module for the orchestration (detail/engine/attention.hpp): one head, no out_proj.
  auto spec_() const noexcept {
    return detail::make_spec<T, scores>(d_in_, d_out_, std::size_t{1}, std::size_t{1},
                                [this](std::size_t) { return weights_(); }, detail::no_out_proj{},
                                static_cast<T>(std::sqrt(static_cast<T>(d_out_))));
  }
  template <class, auto>
  friend class multi_head_attention_wrapper;

  std::size_t d_in_, d_out_, context_length_;
  bool qkv_bias_;
};

}  // namespace mha::dynamic

#include <mha/detail/macros_undef.hpp>

#endif  // MHA_DETAIL_NO_CXX20
