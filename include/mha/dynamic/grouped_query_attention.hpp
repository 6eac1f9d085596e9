// mha/dynamic/grouped_query_attention.hpp -- GroupedQueryAttention with run-time sizes.
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
#include <mha/detail/api/number_text.hpp>
#include <mha/detail/params/parameter_description.hpp>
#include <mha/detail/kernels/rope.hpp>
#include <mha/dynamic/linear.hpp>
#include <mha/dynamic/score_parameters.hpp>
#include <mha/dynamic/tensor.hpp>
#include <mha/dynamic/workspace.hpp>

#include <mha/detail/macros.hpp>

namespace mha::dynamic {

/// RoPE of an mha::dynamic::grouped_query_attention: rotary position
/// embeddings with base `theta_base` (Llama 2: 10000, Llama 3: 500000), or
/// none when theta_base is 0 (the default). The run-time form of mha::rope<Theta>.
struct rope_config {
  double theta_base = 0.0;  ///< 0: no RoPE; else > 1
  constexpr bool enabled() const noexcept { return theta_base != 0.0; }
};

/// The runtime-sized twin of mha::grouped_query_attention (the book's Llama
/// GroupedQueryAttention, ch05/07_gpt_to_llama): queries of num_heads heads,
/// keys and values of num_kv_heads heads (query head h reads key/value head
/// h / (num_heads / num_kv_heads), by offset, never copied), RoPE on queries
/// and keys when `rope` is enabled (its cos/sin tables, context_length *
/// head_dim / 2 each, computed once here by the same functions as the
/// fixed-size module's compile-time tables), then out_proj. Same members
/// (`w_query` [d_out][d_in], `w_key`, `w_value` [num_kv_heads*head_dim][d_in],
/// `out_proj` [d_out][d_out] with bias, `dropout`) and the same arithmetic in
/// the same order as the fixed-size version: the same bits.
///
/// Errors (std::invalid_argument, naming the numbers): a zero size,
/// num_heads or num_kv_heads 0, d_out not divisible by num_heads, num_heads
/// not divisible by num_kv_heads, with RoPE an odd head_dim, a theta_base not
/// above 1 or a context_length above 2^20; and the input/output/weight shape
/// errors of the other modules. A T other than float or double is a
/// compile-time error.
template <class T, auto Scores = attention_mask::causal>
class grouped_query_attention : public detail::dynamic_module<grouped_query_attention<T, Scores>, T> {
  friend class detail::dynamic_module<grouped_query_attention<T, Scores>, T>;
  static_assert(detail::float_or_double<T>,
                "mha::dynamic::grouped_query_attention: T must be float or double");

 public:
  using value_type = T;
  static_assert(detail::scores_argument<decltype(Scores)>,
                "mha::dynamic::grouped_query_attention: Scores must be an mha::attention_mask or an mha::attention_scores");
  /// The score options (template parameter Scores; an attention_mask m means
  /// attention_scores{.mask = m}). See mha::attention_scores.
  static constexpr attention_scores scores = detail::checked_scores<Scores>;
  /// Which keys a query attends to: causal, the default, or none (every key;
  /// no KV-cache forward). See mha::attention_mask.
  static constexpr attention_mask mask = scores.mask;
  /// mask == attention_mask::causal (PyTorch's is_causal).
  static constexpr bool is_causal = mask == attention_mask::causal;

  /// A module of d_in input features, d_out output features (num_heads query
  /// heads of d_out / num_heads), num_kv_heads key/value heads, sequences of
  /// up to context_length tokens, query/key/value biases when qkv_bias
  /// (out_proj always has one), RoPE as `rope` says; weights zero, dropout 0.
  /// Throws std::invalid_argument as the class comment says.
  MHA_DETAIL_ISA_TAG
  grouped_query_attention(std::size_t d_in, std::size_t d_out, std::size_t context_length,
                          std::size_t num_heads, std::size_t num_kv_heads, bool qkv_bias = false,
                          rope_config rope = {})
      : w_query(check(d_in, d_out, context_length, num_heads, num_kv_heads, rope), d_out,
                qkv_bias),
        w_key(d_in, d_out / num_heads * num_kv_heads, qkv_bias),
        w_value(d_in, d_out / num_heads * num_kv_heads, qkv_bias),
        out_proj(d_out, d_out, true),
        score_params(num_heads),
        d_in_(d_in),
        d_out_(d_out),
        context_length_(context_length),
        num_heads_(num_heads),
        num_kv_heads_(num_kv_heads),
        qkv_bias_(qkv_bias),
        rope_(rope) {
    if (rope.enabled()) {
      const std::size_t half = head_dim() / 2;
      rope_cos_.resize(detail::checked_product(api, "the RoPE tables", context_length, half));
      rope_sin_.resize(rope_cos_.size());
      detail::fill_rope_tables<T>(rope_cos_.data(), rope_sin_.data(), head_dim(), context_length,
                                  rope.theta_base);
    }
  }
  /// Anything but a bool where qkv_bias goes (a number: the RoPE base, as
  /// mha::rope<10000> writes it, or the book's dropout; a pointer) would
  /// convert to bool silently: deleted; pass qkv_bias, then
  /// rope_config{theta_base}.
  template <class QkvBiasMustBeBool, class... More>
    requires detail::converts_to_bool_silently<QkvBiasMustBeBool>
  grouped_query_attention(std::size_t, std::size_t, std::size_t, std::size_t, std::size_t,
                          QkvBiasMustBeBool, More...) = delete;

  linear<detail::element_or_float<T>> w_query;   ///< weight [d_out][d_in]
  linear<detail::element_or_float<T>> w_key;     ///< weight [num_kv_heads*head_dim][d_in]
  linear<detail::element_or_float<T>> w_value;   ///< weight [num_kv_heads*head_dim][d_in]
  linear<detail::element_or_float<T>> out_proj;  ///< weight [d_out][d_out], bias [d_out]
  T dropout = T(0);  ///< dropout probability (training only)
  /// The learned parameters of the score options (mha::dynamic::score_parameters:
  /// none unless an option of `scores` has some).
  score_parameters<detail::element_or_float<T>, scores> score_params;

  std::size_t d_in() const noexcept { return d_in_; }
  std::size_t d_out() const noexcept { return d_out_; }
  std::size_t context_length() const noexcept { return context_length_; }
  std::size_t num_heads() const noexcept { return num_heads_; }
  /// Key/value heads (the book's num_kv_groups); the KV cache stores this many.
  std::size_t num_kv_heads() const noexcept { return num_kv_heads_; }
  std::size_t head_dim() const noexcept { return d_out_ / num_heads_; }
  /// Query heads per key/value head (the book's group_size).
  std::size_t group_size() const noexcept { return num_heads_ / num_kv_heads_; }
  /// Width of K and V: num_kv_heads * head_dim.
  std::size_t kv_width() const noexcept { return num_kv_heads_ * head_dim(); }
  std::size_t output_width() const noexcept { return d_out_; }
  bool qkv_bias() const noexcept { return qkv_bias_; }
  /// The RoPE configuration (theta_base 0: none).
  rope_config rope() const noexcept { return rope_; }
  /// The members for mha::for_each_parameter, as the book's
  /// GroupedQueryAttention's named_parameters().
  static constexpr auto parameter_description() noexcept {
    return detail::describe(
        BOOST_HANA_STRING("mha::dynamic::grouped_query_attention"),
        detail::member(BOOST_HANA_STRING("W_query"), &grouped_query_attention::w_query),
        detail::member(BOOST_HANA_STRING("W_key"), &grouped_query_attention::w_key),
        detail::member(BOOST_HANA_STRING("W_value"), &grouped_query_attention::w_value),
        detail::member(BOOST_HANA_STRING("out_proj"), &grouped_query_attention::out_proj),
        detail::member(BOOST_HANA_STRING(""), &grouped_query_attention::score_params));
  }

  MHA_DETAIL_ISA_TAG grouped_query_attention(const grouped_query_attention&) = default;
  MHA_DETAIL_ISA_TAG grouped_query_attention(grouped_query_attention&&) = default;
  MHA_DETAIL_ISA_TAG grouped_query_attention& operator=(const grouped_query_attention&) = default;
  MHA_DETAIL_ISA_TAG grouped_query_attention& operator=(grouped_query_attention&&) = default;
  MHA_DETAIL_ISA_TAG ~grouped_query_attention() = default;

 private:
  static constexpr const char* api = "mha::dynamic::grouped_query_attention";

  /// Every constructor check, in this order (returns d_in): the sizes, the
  /// head counts, RoPE's.
  MHA_DETAIL_ISA_TAG
  static std::size_t check(std::size_t d_in, std::size_t d_out, std::size_t context_length,
                           std::size_t num_heads, std::size_t num_kv_heads, rope_config rope) {
    detail::check_dynamic_sizes(api, d_in, d_out, context_length);
    const auto fail = [](const std::string& what) {
      throw std::invalid_argument(std::string(api) + ": " + what);
    };
    if (num_heads == 0) fail("num_heads must be greater than 0");
    if (num_kv_heads == 0) fail("num_kv_heads must be greater than 0");
    if (d_out % num_heads != 0)
      fail("d_out (" + std::to_string(d_out) + ") must be divisible by num_heads (" +
           std::to_string(num_heads) + ")");
    if (num_heads % num_kv_heads != 0)
      fail("num_heads (" + std::to_string(num_heads) + ") must be divisible by num_kv_heads (" +
           std::to_string(num_kv_heads) + ")");
    if (rope.enabled()) {
      if (!(rope.theta_base > 1.0) || !std::isfinite(rope.theta_base))
        fail("RoPE's theta_base (" + detail::number_text(rope.theta_base) +
             ") must be a finite number greater than 1 (or 0: no RoPE)");
      if ((d_out / num_heads) % 2 != 0)
        fail("RoPE needs an even head_dim, got " + std::to_string(d_out / num_heads));
      if (context_length > (std::size_t{1} << 20))
        fail("with RoPE, context_length (" + std::to_string(context_length) +
             ") must be at most 2^20");
    }
    return d_in;
  }
  /// std::invalid_argument for member layers of other sizes or, in training,
  /// a dropout outside [0, 1].
  MHA_DETAIL_ISA_TAG void check_parameters_(bool training) const {
    if (training) detail::check_dynamic_dropout(api, dropout);
    detail::check_dynamic_linear(api, "w_query", w_query, d_in_, d_out_, qkv_bias_);
    detail::check_dynamic_linear(api, "w_key", w_key, d_in_, kv_width(), qkv_bias_);
    detail::check_dynamic_linear(api, "w_value", w_value, d_in_, kv_width(), qkv_bias_);
    detail::check_dynamic_linear(api, "out_proj", out_proj, d_out_, d_out_, true);
    score_params.check(api, num_heads_);
  }
  /// The module for the orchestration (detail/engine/attention.hpp).
  auto spec_() const noexcept {
    const auto bias = [&](const linear<T>& l) -> const T* { return qkv_bias_ ? l.bias.data() : nullptr; };
    const detail::qkv_weights<T, const T*> w{detail::weight_access(w_query.weight), bias(w_query),
                                             detail::weight_access(w_key.weight),   bias(w_key),
                                             detail::weight_access(w_value.weight), bias(w_value), dropout};
    const std::size_t hd = head_dim();
    const detail::rope_tables<T> rope{rope_cos_.data(), rope_sin_.data(), rope_.enabled()};
    return detail::make_grouped_spec<T, scores>(
        d_in_, hd, num_heads_, num_kv_heads_, [w](std::size_t) { return w; },
        detail::out_weights<T, const T*>{detail::weight_access(out_proj.weight), out_proj.bias.data()},
        static_cast<T>(std::sqrt(static_cast<T>(hd))), rope, score_params);
  }

  std::size_t d_in_, d_out_, context_length_, num_heads_, num_kv_heads_;
  bool qkv_bias_;
  rope_config rope_;
  std::vector<T> rope_cos_, rope_sin_;  ///< [context_length][head_dim / 2] each, with RoPE
};

}  // namespace mha::dynamic

#include <mha/detail/macros_undef.hpp>

#endif  // MHA_DETAIL_NO_CXX20
