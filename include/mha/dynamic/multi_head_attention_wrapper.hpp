// mha/dynamic/multi_head_attention_wrapper.hpp -- MultiHeadAttentionWrapper with run-time sizes.
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
#include <type_traits>
#include <vector>

#include <mha/attention_scores.hpp>
#include <mha/detail/api/dynamic_checks.hpp>
#include <mha/detail/api/dynamic_module.hpp>
#include <mha/dynamic/causal_attention.hpp>
#include <mha/dynamic/tensor.hpp>
#include <mha/dynamic/workspace.hpp>

#include <mha/detail/macros.hpp>

namespace mha::dynamic {

/// The runtime-sized twin of mha::multi_head_attention_wrapper (book section
/// 3.6.1): `num_heads` causal_attention heads in the std::vector member
/// `heads`, outputs concatenated in head order, width num_heads * d_out. Each
/// head writes its column block of the output directly.
///
/// Errors (std::invalid_argument): num_heads == 0, the causal_attention
/// errors, and `heads` resized or holding heads of other sizes; messages name
/// the member, e.g. "mha::dynamic::multi_head_attention_wrapper:
/// heads[1].w_key.weight is [3][2], expected [2][3]". A T other than float or
/// double is a compile-time error ("mha::dynamic::multi_head_attention_wrapper:
/// T must be float or double"), and so is anything but a bool as qkv_bias (a
/// deleted constructor: an integer dropout in the book's order).
template <class T, auto Scores = attention_mask::causal>
class multi_head_attention_wrapper : public detail::dynamic_module<multi_head_attention_wrapper<T, Scores>, T> {
  friend class detail::dynamic_module<multi_head_attention_wrapper<T, Scores>, T>;
  static_assert(detail::float_or_double<T>,
                "mha::dynamic::multi_head_attention_wrapper: T must be float or double");

 public:
  using value_type = T;
  static_assert(detail::scores_argument<decltype(Scores)>,
                "mha::dynamic::multi_head_attention_wrapper: Scores must be an mha::attention_mask or an mha::attention_scores");
  /// The score options (template parameter Scores; an attention_mask m means
  /// attention_scores{.mask = m}). See mha::attention_scores.
  static constexpr attention_scores scores = detail::checked_scores<Scores>;
  static_assert(!detail::scores_have_parameters(scores),
                "mha::dynamic::multi_head_attention_wrapper: score options with learned parameters need multi_head_attention, "
                "fused_multi_head_attention or grouped_query_attention");
  static_assert(!scores.alibi,
                "mha::dynamic::multi_head_attention_wrapper: alibi's slopes depend on the head count, which its heads "
                "(separate causal_attention modules) do not share; use multi_head_attention");
  /// Which keys a query attends to: causal, the default, or none (every key;
  /// no KV-cache forward). See mha::attention_mask.
  static constexpr attention_mask mask = scores.mask;
  /// mask == attention_mask::causal (PyTorch's is_causal).
  static constexpr bool is_causal = mask == attention_mask::causal;
  /// Type of one head: causal_attention<T> (causal_attention<float> when T
  /// is not float or double: the one error is the static_assert above).
  using head_type = causal_attention<detail::element_or_float<T>, Scores>;

  /// num_heads causal_attention heads of d_in input and d_out output
  /// features each (output num_heads * d_out wide), sequences of up to
  /// context_length tokens, with query/key/value biases when qkv_bias;
  /// weights zero, dropout 0. Throws std::invalid_argument for a zero size or
  /// num_heads == 0.
  MHA_DETAIL_ISA_TAG
  multi_head_attention_wrapper(std::size_t d_in, std::size_t d_out, std::size_t context_length,
                               std::size_t num_heads, bool qkv_bias = false)
      : heads(make_heads(d_in, d_out, context_length, num_heads, qkv_bias)),
        d_in_(d_in),
        d_out_(d_out),
        context_length_(context_length),
        num_heads_(num_heads),
        qkv_bias_(qkv_bias) {}
  /// The book's argument order, MultiHeadAttentionWrapper(d_in, d_out,
  /// context_length, dropout, num_heads, qkv_bias=False) (section 3.6.1): as
  /// above, with every head's `dropout` set to dropout_p. (Without this overload
  /// the book's call would convert the dropout to num_heads.) Throws as above
  /// and, as torch.nn.Dropout, for a dropout_p outside [0, 1].
  template <std::floating_point D>
  MHA_DETAIL_ISA_TAG multi_head_attention_wrapper(std::size_t d_in, std::size_t d_out,
                                                  std::size_t context_length, D dropout_p,
                                                  std::size_t num_heads, bool qkv_bias = false)
      : multi_head_attention_wrapper(d_in, d_out, context_length, num_heads, qkv_bias) {
    detail::check_dynamic_dropout(api, dropout_p);
    set_dropout(static_cast<T>(dropout_p));
  }
  /// Anything but a bool where qkv_bias goes (an integer, a floating-point
  /// number, a pointer) would convert to bool silently: deleted. The book's
  /// MultiHeadAttentionWrapper(3, 2, 6, 0, 2) with an integer dropout 0 would
  /// otherwise be num_heads 0 and qkv_bias true; write the dropout as 0.0, or
  /// pass num_heads and then true or false.
  template <class NumHeadsOrIntegerDropout, class QkvBiasMustBeBool>
    requires(!std::floating_point<NumHeadsOrIntegerDropout> &&
             detail::converts_to_bool_silently<QkvBiasMustBeBool>)
  multi_head_attention_wrapper(std::size_t, std::size_t, std::size_t, NumHeadsOrIntegerDropout,
                               QkvBiasMustBeBool) = delete;
  /// The same for the book's order (after dropout and num_heads): qkv_bias
  /// must be a bool.
  template <std::floating_point D, class QkvBiasMustBeBool>
    requires detail::converts_to_bool_silently<QkvBiasMustBeBool>
  multi_head_attention_wrapper(std::size_t, std::size_t, std::size_t, D, std::size_t,
                               QkvBiasMustBeBool) = delete;

  std::vector<head_type> heads;  ///< head 0 first

  /// Head h (bounds-checked: std::out_of_range if h >= heads.size()).
  head_type& head(std::size_t h) { return heads.at(h); }
  /// Head h, read-only (bounds-checked: std::out_of_range).
  const head_type& head(std::size_t h) const { return heads.at(h); }
  /// Visits the heads, head 0 first: `f(head)` for each head (a
  /// head_type&), or, when f does not take one argument,
  /// `f(index, head)` with `index` a std::size_t; the same calls as the
  /// fixed-size twin's for_each_head. Visits `heads` as it is (the head count
  /// is checked at forward).
  template <class F>
  void for_each_head(F&& f) {
    for_each_head_(*this, f);
  }
  /// Same as for_each_head(f), read-only: f gets a const head_type&.
  template <class F>
  void for_each_head(F&& f) const {
    for_each_head_(*this, f);
  }
  /// Sets every head's dropout probability (checked in [0, 1] at forward_training).
  MHA_DETAIL_ISA_TAG void set_dropout(T p) {
    for (auto& h : heads) h.dropout = p;
  }

  std::size_t d_in() const noexcept { return d_in_; }
  std::size_t d_out() const noexcept { return d_out_; }
  std::size_t context_length() const noexcept { return context_length_; }
  std::size_t num_heads() const noexcept { return num_heads_; }
  std::size_t head_dim() const noexcept { return d_out_; }
  std::size_t output_width() const noexcept { return num_heads_ * d_out_; }
  bool qkv_bias() const noexcept { return qkv_bias_; }
  /// The members for mha::for_each_parameter, as the book's
  /// MultiHeadAttentionWrapper's named_parameters(): `heads` (an nn.ModuleList;
  /// names heads.0.W_query.weight, ..., one per element of the vector).
  static constexpr auto parameter_description() noexcept {
    return detail::describe(
        BOOST_HANA_STRING("mha::dynamic::multi_head_attention_wrapper"),
        detail::member(BOOST_HANA_STRING("heads"), &multi_head_attention_wrapper::heads));
  }

  // forward(x), operator()(x), forward(x, out), forward(x, out, ws),
  // forward_training(x, seed), forward_training(x, out, seed),
  // forward_training(x, out, ws, seed) and parameter_count() (the walk's sum
  // over every element of `heads`) come from detail::dynamic_module.

  // Copies, moves and destruction as the compiler would generate them,
  // declared only to carry the ISA's ABI tag (their code moves T values;
  // docs/design.md, "ISA namespaces").
  MHA_DETAIL_ISA_TAG multi_head_attention_wrapper(const multi_head_attention_wrapper&) = default;
  MHA_DETAIL_ISA_TAG multi_head_attention_wrapper(multi_head_attention_wrapper&&) = default;
  MHA_DETAIL_ISA_TAG
  multi_head_attention_wrapper& operator=(const multi_head_attention_wrapper&) = default;
  MHA_DETAIL_ISA_TAG
  multi_head_attention_wrapper& operator=(multi_head_attention_wrapper&&) = default;
  MHA_DETAIL_ISA_TAG ~multi_head_attention_wrapper() = default;

 private:
  static constexpr const char* api = "mha::dynamic::multi_head_attention_wrapper";

  /// for_each_head for a const or non-const wrapper `self`.
  template <class Self, class F>
  static void for_each_head_(Self& self, F& f) {
    for (std::size_t h = 0; h < self.heads.size(); ++h) {
      if constexpr (std::is_invocable_v<F&, decltype(self.heads[h])>)
        f(self.heads[h]);
      else
        f(h, self.heads[h]);
    }
  }

  MHA_DETAIL_ISA_TAG
  static std::vector<head_type> make_heads(std::size_t d_in, std::size_t d_out,
                                                     std::size_t context_length,
                                                     std::size_t num_heads, bool qkv_bias) {
    detail::check_dynamic_sizes(api, d_in, d_out, context_length);
    if (num_heads == 0)
      throw std::invalid_argument(std::string(api) + ": num_heads must be greater than 0");
    return std::vector<head_type>(
        num_heads, head_type(d_in, d_out, context_length, qkv_bias));
  }
  /// std::invalid_argument for a resized `heads`, heads of other sizes, their
  /// member layers of other sizes or, in training, a dropout outside [0, 1].
  MHA_DETAIL_ISA_TAG void check_parameters_(bool training) const {
    if (heads.size() != num_heads_)
      throw std::invalid_argument(std::string(api) + ": heads holds " +
                                  std::to_string(heads.size()) + " heads, expected num_heads = " +
                                  std::to_string(num_heads_));
    for (std::size_t i = 0; i < heads.size(); ++i) {
      const auto& h = heads[i];
      if (h.d_in() != d_in_ || h.d_out() != d_out_ || h.context_length() != context_length_ ||
          h.qkv_bias() != qkv_bias_)
        throw std::invalid_argument(std::string(api) + ": a head (heads[" + std::to_string(i) +
                                    "]) has other sizes than the wrapper");
      h.check_parameters_(training, api, i);
    }
  }
  /// The module for the orchestration (detail/engine/attention.hpp): num_heads groups
  /// of one head each, no out_proj (the concatenated context is the output).
  auto spec_() const noexcept {
    return detail::make_spec<T, scores>(d_in_, d_out_, num_heads_, num_heads_,
                                [this](std::size_t g) { return heads[g].weights_(); },
                                detail::no_out_proj{},
                                static_cast<T>(std::sqrt(static_cast<T>(d_out_))));
  }

  std::size_t d_in_, d_out_, context_length_, num_heads_;
  bool qkv_bias_;
};

}  // namespace mha::dynamic

#include <mha/detail/macros_undef.hpp>

#endif  // MHA_DETAIL_NO_CXX20
