// mha/detail/kernels/score_policy.hpp -- score policies: which keys a query
// sees and how a raw score becomes a logit, decided at compile time.
//
// Every "one attention head" kernel (kernels.hpp: attention_head_simple,
// attention_head_blocked, attention_head_decode, through softmax_row;
// token_major.hpp: attention_head, attention_head_scalar, attention_pairs)
// takes a policy P as a template parameter and calls it at three named steps:
//
//  (a) range:  the keys of the query at position p are span(p) = [first,
//              last); the kernels visit keys 0..last-1 (first is 0 for every
//              policy of this header);
//  (b) logit:  after the division by sqrt(head_dim), only when !P::plain:
//              logit = P::logit(dot / sqrt(head_dim), head, p, j);
//  (c) sink:   only when P::has_sink: one more softmax term, the logit
//              P::sink_logit(head), joins each row's maximum and (after the
//              lane sums) its denominator, and contributes no value row.
//
// Each step is under `if constexpr`, so a plain policy without sink (the two
// below, which express every mask the library has today) adds no operation
// to the kernels: the arithmetic, and so every bit, of the kernels before
// policies.
//
// The source of the math: the softmax is PyTorch's scaled_dot_product_attention
// (book section 3.5): w[i][j] = softmax_j(q_i . k_j / sqrt(head_dim)) over the
// keys j of span(i); a masked key is a -inf logit (weight exactly 0).
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <concepts>
#include <cstddef>
#include <type_traits>

#include <mha/attention_scores.hpp>

#include <mha/detail/macros.hpp>

namespace mha::detail {
MHA_DETAIL_ISA_NAMESPACE {

/// The keys [first, last) one query attends to (key indices, i.e. positions
/// in the sequence or the KV cache).
struct key_span {
  std::size_t first;
  std::size_t last;
};

/// A score policy (see the top of this header). Requirements:
///  * P::causal (bool): span(p).last == p + 1 for every p, the query itself
///    the last key (the KV-cache forward and the token-major kernels, whose
///    lane mask is the causal one, need it);
///  * P::plain (bool): logit == dot / sqrt(head_dim); otherwise P has
///    `T logit(T scaled, std::size_t head, std::size_t query, std::size_t key)
///    const` (scalar: the kernels apply it element by element, so every kernel
///    gets the same bits from it);
///  * P::has_sink (bool): P has `sink_logit(std::size_t head) const`, a value
///    convertible to the element type;
///  * policy.over(keys): the policy of a call whose keys 0..keys-1 exist
///    (self-attention: the cached and the new tokens; cross-attention: the
///    other input's tokens, or its key length when padded), with the rest of
///    the policy's state;
///  * span(p): the key span of the query at position p; span(p).first == 0,
///    span(p).last <= the existing keys and nondecreasing in p (a block of
///    queries reads the keys of its last one).
template <class P>
concept score_policy = std::copyable<P> && requires(const P& policy, std::size_t n) {
  { P::causal } -> std::convertible_to<bool>;
  { P::plain } -> std::convertible_to<bool>;
  { P::has_sink } -> std::convertible_to<bool>;
  { policy.over(n) } noexcept -> std::same_as<P>;
  { policy.span(n) } noexcept -> std::same_as<key_span>;
};

/// Causal attention (PyTorch's is_causal=True, mha::attention_mask::causal):
/// the query at position p sees keys [0, p + 1). Empty: it needs no key count.
struct causal_scores {
  static constexpr bool causal = true;
  static constexpr bool plain = true;
  static constexpr bool has_sink = false;
  constexpr causal_scores over(std::size_t) const noexcept { return {}; }
  constexpr key_span span(std::size_t p) const noexcept { return {0, p + 1}; }
};

/// Every existing key (mha::attention_mask::none, cross-attention, and a
/// padded key input of `keys` real tokens): every query sees keys [0, keys).
struct all_keys_scores {
  static constexpr bool causal = false;
  static constexpr bool plain = true;
  static constexpr bool has_sink = false;
  std::size_t keys = 0;  ///< the keys that exist
  constexpr all_keys_scores over(std::size_t n) const noexcept { return {n}; }
  constexpr key_span span(std::size_t) const noexcept { return {0, keys}; }
};

static_assert(score_policy<causal_scores> && score_policy<all_keys_scores>);

/// The logit and sink steps ((b) and (c)) of a plain policy without sink:
/// nothing to do. softmax_row takes the steps, not the whole policy, so that
/// one instantiation of it serves every such policy (causal_scores and
/// all_keys_scores share today's softmax code).
struct plain_logits {
  static constexpr bool plain = true;
  static constexpr bool has_sink = false;
};

/// The steps (b) and (c) of a policy, as softmax_row takes them: plain_logits
/// for a plain policy without sink, the policy itself otherwise.
template <score_policy Policy>
constexpr auto logit_steps(const Policy& policy) noexcept {
  if constexpr (Policy::plain && !Policy::has_sink) {
    static_cast<void>(policy);
    return plain_logits{};
  } else {
    return policy;
  }
}

/// The policy of a module's score options (mha::attention_scores, the
/// argument of make_spec) for elements T and `num_heads` query heads (a size_c
/// or a std::size_t): causal_scores for the causal mask, all_keys_scores for
/// none.
template <class T, attention_scores Scores, class Heads>
constexpr auto make_score_policy(Heads num_heads) noexcept {
  const auto range = [] {
    if constexpr (Scores.mask == attention_mask::causal)
      return causal_scores{};
    else
      return all_keys_scores{};
  }();
  static_cast<void>(num_heads);
  return range;
}

}  // namespace MHA_DETAIL_ISA
}  // namespace mha::detail

#include <mha/detail/macros_undef.hpp>
