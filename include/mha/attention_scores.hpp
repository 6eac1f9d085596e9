// mha/attention_scores.hpp -- the score options of an attention module: which
// keys a query attends to and which terms turn a query-key score into the
// logit of the softmax. docs/score_policies.md.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>
#include <type_traits>

#include <mha/attention_mask.hpp>

namespace mha {

/// The score options of an attention module: the value of its template
/// parameter `Scores` (written either as an mha::attention_mask, the mask
/// alone, or as this struct with designated initializers), mirrored as the
/// module's `static constexpr attention_scores scores`. A structural type:
/// every option is a compile-time constant, so a module compiles exactly the
/// score steps it uses.
///
/// The logit of query i and key j is, in this order (ggml's flash attention
/// and Hugging Face's model code apply the same steps in the same order):
///
///   logit(i, j) = q_i . k_j / sqrt(head_dim)             (book section 3.5)
///
/// then, for each option set below, its term (soft-capping, ALiBi), then the
/// masks (keys j > i get weight 0 when causal, keys j <= i - W with a sliding
/// window W), then the softmax over the keys of row i (PyTorch's
/// scaled_dot_product_attention).
///
/// Two spellings of the same options (attention_mask::none and
/// attention_scores{.mask = attention_mask::none}) give modules that behave
/// alike but are distinct types.
struct attention_scores {
  /// Which keys a query attends to: causal (keys 0..i, the default) or none
  /// (every key). See mha::attention_mask.
  attention_mask mask = attention_mask::causal;
  /// Logit soft-capping with cap c (0: none): logit = c * tanh(logit / c),
  /// after the scaling, before the mask: every logit then lies in (-c, c).
  /// Gemma 2's attn_logit_softcapping (50). A whole number: the options are a
  /// template argument, which a floating-point member cannot be in C++20 with
  /// every supported compiler.
  unsigned softcap = 0;
  /// ALiBi (Press et al., "Train Short, Test Long"; BLOOM, MPT): the logit of
  /// query position i and key position j of head h less m_h * (i - j), with
  /// BLOOM's slopes m_h (build_alibi_tensor, for any head count), after the
  /// soft-cap. Needs the causal mask; no position embedding is implied (RoPE
  /// is the grouped_query_attention's own parameter).
  bool alibi = false;
  /// Sliding-window attention with window W (0: none): the query at position i
  /// attends to keys max(0, i - W + 1)..i (Mistral's and Hugging Face's
  /// sliding_window; Gemma 2's local layers, gpt-oss). Needs the causal mask.
  std::size_t sliding_window = 0;
  /// Attention sinks (StreamingLLM; gpt-oss): a learned logit s_h per head,
  /// the parameter `sinks` [num_heads] (the module's score_params.sinks, named
  /// `sinks` in the parameter walk), joins each row's softmax denominator,
  /// unscaled and unmasked, and contributes no value row: weights(i, j) =
  /// e^logit(i, j) / (e^s_h + sum_k e^logit(i, k)). Only the modules that hold
  /// score parameters take it (multi_head_attention, fused_multi_head_attention,
  /// grouped_query_attention and their twins).
  bool sinks = false;

  friend constexpr bool operator==(const attention_scores&, const attention_scores&) = default;
};

namespace detail {

/// True for the types a module's `Scores` template argument may have.
/// (decltype of a class-type template parameter is const-qualified)
template <class S>
inline constexpr bool scores_argument =
    std::is_same_v<std::remove_cv_t<S>, attention_mask> ||
    std::is_same_v<std::remove_cv_t<S>, attention_scores>;

/// The attention_scores of a `Scores` template argument (an attention_mask m
/// is attention_scores{.mask = m}); default options for any other type (the
/// module's static_assert on scores_argument reports that one).
template <class S>
constexpr attention_scores scores_of(S s) noexcept {
  if constexpr (std::is_same_v<S, attention_scores>)
    return s;
  else if constexpr (std::is_same_v<S, attention_mask>)
    return attention_scores{s};
  else
    return attention_scores{};
}

/// True when the score options s have learned parameters (mha::score_parameters;
/// causal_attention and the wrapper, which hold none, refuse such options).
constexpr bool scores_have_parameters(attention_scores s) noexcept { return s.sinks; }

/// The attention_scores of a module's `Scores` template argument S, after the
/// options' compile-time rules (each a static_assert naming
/// mha::attention_scores and the option).
template <auto S>
inline constexpr attention_scores checked_scores = [] {
  constexpr attention_scores scores = scores_of(S);
  static_assert(!scores.alibi || scores.mask == attention_mask::causal,
                "mha::attention_scores: alibi needs mask = attention_mask::causal");
  static_assert(scores.sliding_window == 0 || scores.mask == attention_mask::causal,
                "mha::attention_scores: sliding_window needs mask = attention_mask::causal");
  return scores;
}();

}  // namespace detail
}  // namespace mha

#endif  // MHA_DETAIL_NO_CXX20
