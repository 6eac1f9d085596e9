// mha/dynamic/multi_head_attention.hpp -- MultiHeadAttention with run-time sizes.
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
#include <mha/dynamic/score_parameters.hpp>
#include <mha/dynamic/tensor.hpp>
#include <mha/dynamic/workspace.hpp>

#include <mha/detail/macros.hpp>

namespace mha::dynamic {

/// The key and value input widths of a cross-attention module
/// (nn.MultiheadAttention's kdim and vdim): the last constructor argument of
/// mha::dynamic::multi_head_attention.
struct kv_dims {
  std::size_t kdim;  ///< features of a key input row
  std::size_t vdim;  ///< features of a value input row
};

/// The runtime-sized twin of mha::multi_head_attention (book section 3.6.2):
/// one W_query/W_key/W_value product for all heads, head h reading columns
/// [h*head_dim, (h+1)*head_dim) through runtime-strided views (a run-time loop
/// over heads here), writing its block of the context, then out_proj. Same
/// members (`w_query`, `w_key`, `w_value`, `out_proj`, `dropout`) and the same
/// arithmetic in the same order as the fixed-size version.
///
/// Errors (std::invalid_argument, naming the sizes): num_heads == 0, d_out not
/// divisible by num_heads, zero sizes, and the input/output/weight shape
/// errors of causal_attention; messages name the member, e.g.
/// "mha::dynamic::multi_head_attention: w_query.weight is [3][2], expected
/// [2][3]". A T other than float or double is a compile-time error
/// ("mha::dynamic::multi_head_attention: T must be float or double"), and so
/// is anything but a bool as qkv_bias (a deleted constructor: an integer
/// dropout in the book's order).
template <class T, auto Scores = attention_mask::causal>
class multi_head_attention : public detail::dynamic_module<multi_head_attention<T, Scores>, T> {
  friend class detail::dynamic_module<multi_head_attention<T, Scores>, T>;
  static_assert(detail::float_or_double<T>,
                "mha::dynamic::multi_head_attention: T must be float or double");

 public:
  using value_type = T;
  static_assert(detail::scores_argument<decltype(Scores)>,
                "mha::dynamic::multi_head_attention: Scores must be an mha::attention_mask or an mha::attention_scores");
  /// The score options (template parameter Scores; an attention_mask m means
  /// attention_scores{.mask = m}). See mha::attention_scores.
  static constexpr attention_scores scores = detail::checked_scores<Scores>;
  /// Which keys a query attends to: causal, the default, or none (every key;
  /// no KV-cache forward). See mha::attention_mask.
  static constexpr attention_mask mask = scores.mask;
  /// mask == attention_mask::causal (PyTorch's is_causal).
  static constexpr bool is_causal = mask == attention_mask::causal;

  /// A module of d_in input features, d_out output features (num_heads heads
  /// of d_out / num_heads), sequences of up to context_length tokens, with
  /// query/key/value biases when qkv_bias (out_proj always has one); weights
  /// zero, dropout 0. Throws std::invalid_argument for a zero size, num_heads
  /// == 0 or d_out not divisible by num_heads.
  MHA_DETAIL_ISA_TAG
  multi_head_attention(std::size_t d_in, std::size_t d_out, std::size_t context_length,
                       std::size_t num_heads, bool qkv_bias = false)
      : multi_head_attention(d_in, d_out, context_length, num_heads, qkv_bias,
                             kv_dims{d_in, d_in}) {}
  /// The cross-attention form (nn.MultiheadAttention's kdim and vdim): as
  /// above, with W_key [d_out][dims.kdim] and W_value [d_out][dims.vdim]; its
  /// forward(query, key, value, ...) reads key rows of kdim and value rows of
  /// vdim features (needs Mask = attention_mask::none). Throws
  /// std::invalid_argument also for a zero kdim or vdim.
  MHA_DETAIL_ISA_TAG
  multi_head_attention(std::size_t d_in, std::size_t d_out, std::size_t context_length,
                       std::size_t num_heads, bool qkv_bias, kv_dims dims)
      : w_query(check(d_in, d_out, context_length, num_heads, dims), d_out, qkv_bias),
        w_key(dims.kdim, d_out, qkv_bias),
        w_value(dims.vdim, d_out, qkv_bias),
        out_proj(d_out, d_out, true),
        score_params(num_heads),
        d_in_(d_in),
        d_out_(d_out),
        context_length_(context_length),
        num_heads_(num_heads),
        key_dim_(dims.kdim),
        value_dim_(dims.vdim),
        qkv_bias_(qkv_bias) {}
  /// The book's argument order, MultiHeadAttention(d_in, d_out,
  /// context_length, dropout, num_heads, qkv_bias=False) (section 3.6.2): as
  /// above, with `dropout` (the probability of forward_training) set to dropout_p. (Without
  /// this overload the book's call would convert the dropout to num_heads.)
  /// Throws as above and, as torch.nn.Dropout, for a dropout_p outside [0, 1].
  template <std::floating_point D>
  MHA_DETAIL_ISA_TAG multi_head_attention(std::size_t d_in, std::size_t d_out,
                                          std::size_t context_length, D dropout_p,
                                          std::size_t num_heads, bool qkv_bias = false)
      : multi_head_attention(d_in, d_out, context_length, num_heads, qkv_bias) {
    detail::check_dynamic_dropout(api, dropout_p);
    dropout = static_cast<T>(dropout_p);
  }
  /// Anything but a bool where qkv_bias goes (an integer, a floating-point
  /// number, a pointer) would convert to bool silently: deleted. The book's
  /// MultiHeadAttention(3, 2, 6, 0, 2) with an integer dropout 0 would
  /// otherwise be num_heads 0 and qkv_bias true; write the dropout as 0.0, or
  /// pass num_heads and then true or false.
  template <class NumHeadsOrIntegerDropout, class QkvBiasMustBeBool>
    requires(!std::floating_point<NumHeadsOrIntegerDropout> &&
             detail::converts_to_bool_silently<QkvBiasMustBeBool>)
  multi_head_attention(std::size_t, std::size_t, std::size_t, NumHeadsOrIntegerDropout,
                       QkvBiasMustBeBool) = delete;
  /// The same for the cross-attention form: qkv_bias must be a bool.
  template <class QkvBiasMustBeBool>
    requires detail::converts_to_bool_silently<QkvBiasMustBeBool>
  multi_head_attention(std::size_t, std::size_t, std::size_t, std::size_t, QkvBiasMustBeBool,
                       kv_dims) = delete;
  /// The same for the book's order (after dropout and num_heads): qkv_bias
  /// must be a bool.
  template <std::floating_point D, class QkvBiasMustBeBool>
    requires detail::converts_to_bool_silently<QkvBiasMustBeBool>
  multi_head_attention(std::size_t, std::size_t, std::size_t, D, std::size_t,
                       QkvBiasMustBeBool) = delete;

  // linear<T> (float when T is not float or double: the one error is the
  // static_assert above)
  linear<detail::element_or_float<T>> w_query;   ///< weight [d_out][d_in]
  linear<detail::element_or_float<T>> w_key;     ///< weight [d_out][key_dim()]
  linear<detail::element_or_float<T>> w_value;   ///< weight [d_out][value_dim()]
  linear<detail::element_or_float<T>> out_proj;  ///< weight [d_out][d_out], bias [d_out]
  T dropout = T(0);    ///< dropout probability (training only)
  /// The learned parameters of the score options (mha::dynamic::score_parameters:
  /// none unless an option of `scores` has some).
  score_parameters<detail::element_or_float<T>, scores> score_params;

  std::size_t d_in() const noexcept { return d_in_; }
  /// Features of a key input row (kdim; d_in() unless constructed with kv_dims).
  std::size_t key_dim() const noexcept { return key_dim_; }
  /// Features of a value input row (vdim; d_in() unless constructed with kv_dims).
  std::size_t value_dim() const noexcept { return value_dim_; }
  std::size_t d_out() const noexcept { return d_out_; }
  std::size_t context_length() const noexcept { return context_length_; }
  std::size_t num_heads() const noexcept { return num_heads_; }
  std::size_t head_dim() const noexcept { return d_out_ / num_heads_; }
  std::size_t output_width() const noexcept { return d_out_; }
  bool qkv_bias() const noexcept { return qkv_bias_; }
  /// The members for mha::for_each_parameter, as the book's
  /// MultiHeadAttention's named_parameters() (`mask` is a buffer).
  static constexpr auto parameter_description() noexcept {
    return detail::book_attention_description<multi_head_attention>(
        BOOST_HANA_STRING("mha::dynamic::multi_head_attention"),
        detail::member(BOOST_HANA_STRING("out_proj"), &multi_head_attention::out_proj),
        detail::member(BOOST_HANA_STRING(""), &multi_head_attention::score_params));
  }

  // forward(x), operator()(x), forward(x, out), forward(x, out, ws),
  // forward_training(x, seed), forward_training(x, out, seed),
  // forward_training(x, out, ws, seed) and parameter_count() (the walk's sum)
  // come from detail::dynamic_module.

  // Copies, moves and destruction as the compiler would generate them,
  // declared only to carry the ISA's ABI tag (their code moves T values;
  // docs/design.md, "ISA namespaces").
  MHA_DETAIL_ISA_TAG multi_head_attention(const multi_head_attention&) = default;
  MHA_DETAIL_ISA_TAG multi_head_attention(multi_head_attention&&) = default;
  MHA_DETAIL_ISA_TAG multi_head_attention& operator=(const multi_head_attention&) = default;
  MHA_DETAIL_ISA_TAG multi_head_attention& operator=(multi_head_attention&&) = default;
  MHA_DETAIL_ISA_TAG ~multi_head_attention() = default;

 private:
  static constexpr const char* api = "mha::dynamic::multi_head_attention";

  /// The constructor's checks, sizes first (a defined order: they are one
  /// argument); returns d_in.
  MHA_DETAIL_ISA_TAG
  static std::size_t check(std::size_t d_in, std::size_t d_out, std::size_t context_length,
                           std::size_t num_heads, kv_dims dims) {
    detail::check_dynamic_sizes(api, d_in, d_out, context_length);
    if (dims.kdim == 0 || dims.vdim == 0)
      throw std::invalid_argument(std::string(api) + ": kdim and vdim must be greater than 0");
    if (is_causal && (dims.kdim != d_in || dims.vdim != d_in))
      throw std::invalid_argument(std::string(api) + ": kdim = " + std::to_string(dims.kdim) +
                                  " and vdim = " + std::to_string(dims.vdim) +
                                  " other than d_in = " + std::to_string(d_in) +
                                  " need Mask = attention_mask::none (only cross-attention reads "
                                  "them)");
    if (num_heads == 0)
      throw std::invalid_argument(std::string(api) + ": num_heads must be greater than 0");
    if (d_out % num_heads != 0)
      throw std::invalid_argument(std::string(api) + ": d_out (" + std::to_string(d_out) +
                                  ") must be divisible by num_heads (" + std::to_string(num_heads) +
                                  ")");
    return d_in;
  }
  /// std::invalid_argument for member layers of other sizes or, in training,
  /// a dropout outside [0, 1].
  MHA_DETAIL_ISA_TAG void check_parameters_(bool training) const {
    if (training) detail::check_dynamic_dropout(api, dropout);
    detail::check_dynamic_linear(api, "w_query", w_query, d_in_, d_out_, qkv_bias_);
    detail::check_dynamic_linear(api, "w_key", w_key, key_dim_, d_out_, qkv_bias_);
    detail::check_dynamic_linear(api, "w_value", w_value, value_dim_, d_out_, qkv_bias_);
    detail::check_dynamic_linear(api, "out_proj", out_proj, d_out_, d_out_, true);
    score_params.check(api, num_heads_);
  }
  /// The module for the orchestration (detail/engine/attention.hpp): one group of
  /// num_heads heads (the weight splits), then out_proj.
  auto spec_() const noexcept {
    const auto bias = [&](const linear<T>& l) -> const T* { return qkv_bias_ ? l.bias.data() : nullptr; };
    const detail::qkv_weights<T, const T*> w{detail::weight_access(w_query.weight), bias(w_query),
                                             detail::weight_access(w_key.weight),   bias(w_key),
                                             detail::weight_access(w_value.weight), bias(w_value), dropout};
    const std::size_t hd = head_dim();
    return detail::make_spec<T, scores>(d_in_, hd, num_heads_, std::size_t{1},
                                [w](std::size_t) { return w; },
                                detail::out_weights<T, const T*>{detail::weight_access(out_proj.weight),
                                                                 out_proj.bias.data()},
                                static_cast<T>(std::sqrt(static_cast<T>(hd))), score_params);
  }

  std::size_t d_in_, d_out_, context_length_, num_heads_, key_dim_, value_dim_;
  bool qkv_bias_;
};

}  // namespace mha::dynamic

#include <mha/detail/macros_undef.hpp>

#endif  // MHA_DETAIL_NO_CXX20
