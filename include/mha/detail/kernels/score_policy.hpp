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

#include <bit>
#include <concepts>
#include <cstddef>
#include <limits>
#include <type_traits>

#include <mha/attention_scores.hpp>
#include <mha/detail/arch/math.hpp>
#include <mha/detail/arch/simd.hpp>
#include <mha/detail/arch/subnormals.hpp>

#include <mha/detail/macros.hpp>

namespace mha::detail {
MHA_DETAIL_ISA_NAMESPACE {

/// The keys [first, last) one query attends to (key indices, i.e. positions
/// in the sequence or the KV cache). Keys before first get weight exactly 0
/// (the policy's logit step masks them), so a kernel may visit keys from 0
/// or from first rounded down to a whole vector (simd::lanes<T> keys):
/// every sum then runs over the same lanes, the skipped terms are zeros,
/// and the bits are the same.
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
///  * span(p): the key span of the query at position p; span(p).first and
///    span(p).last nondecreasing in p (a block of queries reads the keys of
///    its last one, from the first one's first), last <= the existing keys.
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

/// e^x with the exponential of the softmax for T (simd::exp for float: the
/// same bits on every target and in constant evaluation; detail::exp for
/// double).
template <class T>
MHA_DETAIL_INLINE constexpr T softmax_exp(T x) noexcept {
  if constexpr (std::is_same_v<T, float>)
    return simd::exp(x);
  else
    return detail::exp(x);
}

/// tanh(x) for T in {float, double}: below |x| = 0.55 the odd Taylor series
/// x + x^3 (c3 + x^2 (c5 + ...)) in Horner form (9 terms for float, 18 for
/// double: the first term left out is below half an ulp), up to |x| = 10
/// (float) or 20 (double) 1 - 2 / (e^(2|x|) + 1) with softmax_exp (whose
/// argument stays below 88, where the float exp is exact), beyond that +-1
/// (tanh rounds to +-1 in T from 9.02 and 19.07 on); every operation an fp::
/// one, so a float tanh has the same bits on every target and in constant
/// evaluation. tanh(+-inf) = +-1, NaN stays NaN. The coefficients are
/// 2^(2n) (2^(2n) - 1) B_2n / (2n)! (Abramowitz and Stegun 4.5.64), each the
/// nearest double.
template <class T>
constexpr T tanh_of(T x) noexcept {
  constexpr double series[18] = {
      0x1.0000000000000p+0,  -0x1.5555555555555p-2, 0x1.1111111111111p-3,
      -0x1.ba1ba1ba1ba1cp-5, 0x1.664f4882c10fap-6,  -0x1.226e355e6c23dp-7,
      0x1.d6d3d0e157de0p-9,  -0x1.7da36452b75e3p-10, 0x1.3558248036744p-11,
      -0x1.f57d7734d1664p-13, 0x1.967e18afcafadp-14, -0x1.497d8eea25259p-15,
      0x1.0b132d39a6050p-16, -0x1.b0f72d3ee24e9p-18, 0x1.5ef2da474e5b7p-19,
      -0x1.1c77df95c1c0dp-20, 0x1.cd299de4ae6bbp-22, -0x1.75cde6563fed9p-23};
  constexpr std::size_t terms = std::is_same_v<T, float> ? 9 : 18;
  if (x != x) return x;  // NaN
  const T a = x < T(0) ? -x : x;
  T t = T(1);
  if (a < static_cast<T>(0.55)) {
    const T a2 = fp::mul(a, a);
    T p = static_cast<T>(series[terms - 1]);
    for (std::size_t k = terms - 1; k-- > 1;) p = fp::add(static_cast<T>(series[k]), fp::mul(a2, p));
    t = fp::add(a, fp::mul(fp::mul(a, a2), p));
  } else if (a < T(std::is_same_v<T, float> ? 10 : 20)) {
    t = fp::sub(T(1), fp::div(T(2), fp::add(softmax_exp(fp::add(a, a)), T(1))));
  }
  return x < T(0) ? -t : t;
}

/// 2^(-f/64) for f = 0..63, each the double nearest constexpr_exp(-f ln 2 / 64)
/// gives (the fractional powers of ALiBi's slopes).
template <class = void>
inline constexpr auto alibi_fractions = [] {
  struct table {
    double value[64];
  } t{};
  for (std::size_t f = 0; f < 64; ++f)
    t.value[f] = constexpr_exp(-static_cast<double>(f) * 0x1.62e42fefa39efp-1 / 64.0);
  return t;
}();

/// ALiBi's slope m_h of head h (0-based) of n heads (Press et al., "Train
/// Short, Test Long", section 3; BLOOM's build_alibi_tensor): with c the
/// largest power of two <= n, m_h = 2^(-8 (h + 1) / c) for h < c and
/// 2^(-4 (2 (h - c) + 1) / c) for the others (the slopes of 2c heads at the
/// odd places). As 2^(-E / 64): alibi_fractions' 2^(-(E % 64) / 64) times
/// 2^(-(E / 64)) (exact), rounded once to T, so every slope is the same T on
/// every target; E is a whole number when n <= 512, and above that the
/// fraction is constexpr_exp's.
template <class T>
constexpr T alibi_slope(std::size_t n, std::size_t h) noexcept {
  const std::size_t c = std::bit_floor(n);
  // the exponent num / c (a power of two)
  const std::size_t num = h < c ? 8 * (h + 1) : 4 * (2 * (h - c) + 1);
  double fraction;
  std::size_t whole;
  if (c <= 512 && (c < 512 || h < c)) {
    const std::size_t e = num * (512 / c) / 8;  // the exponent in 64ths
    fraction = alibi_fractions<>.value[e % 64];
    whole = e / 64;
  } else {
    whole = num / c;
    fraction = constexpr_exp(-static_cast<double>(num % c) / static_cast<double>(c) *
                             0x1.62e42fefa39efp-1);
  }
  // (whole <= 8: an exact power of two, so the product rounds once, to T)
  constexpr double halves[9] = {1.0,    0x1p-1, 0x1p-2, 0x1p-3, 0x1p-4,
                                0x1p-5, 0x1p-6, 0x1p-7, 0x1p-8};
  return static_cast<T>(fraction * halves[whole]);
}

/// A policy with logit or sink steps: the key range of Range (causal_scores or
/// all_keys_scores) and the steps of the score options Scores
/// (mha::attention_scores), in one place and in this order:
///
///   soft-capping (Scores.softcap = c > 0):   logit = c * tanh(logit / c)
///   ALiBi (Scores.alibi):                     logit = logit - m_h * (i - j)
///   sliding window (Scores.sliding_window W): logit = -inf for j <= i - W
///   sinks (Scores.sinks):  step (c), sink_logit(h) = sinks[h], the module's
///                          score_params.sinks (gpt-oss's learned sinks)
///
/// (soft-capping: Gemma 2's, Hugging Face's Gemma2Attention: `attn_weights /
/// softcap`, tanh, `* softcap`, after the scaling and before the mask; ALiBi:
/// Press et al., query position i, key position j, head h's alibi_slope m_h,
/// ggml's order: the bias after the cap; sliding window: Mistral's and Hugging
/// Face's, query i sees keys max(0, i - W + 1)..i, a mask like the causal one:
/// a key left of the window gets weight exactly 0; span(i).first is the
/// window's first key, where attention_head_blocked starts, the other
/// kernels visiting keys 0..i: the same bits, see key_span). Heads: the type
/// of the module's head count (size_c or std::size_t).
template <class T, attention_scores Scores, class Range, class Heads>
struct option_scores {
  static constexpr bool causal = Range::causal;
  static constexpr bool plain =
      Scores.softcap == 0 && !Scores.alibi && Scores.sliding_window == 0;
  static constexpr bool has_sink = Scores.sinks;
  Range range;
  Heads num_heads;
  const T* sinks = nullptr;  ///< [num_heads] with Scores.sinks
  constexpr option_scores over(std::size_t n) const noexcept {
    return {range.over(n), num_heads, sinks};
  }
  /// Head `head`'s sink logit (Scores.sinks).
  constexpr T sink_logit(std::size_t head) const noexcept { return sinks[head]; }
  constexpr key_span span(std::size_t p) const noexcept {
    key_span s = range.span(p);
    if constexpr (Scores.sliding_window != 0)  // (a window needs the causal range)
      if (p >= Scores.sliding_window) s.first = p - Scores.sliding_window + 1;
    return s;
  }
  /// The logit of the score `scaled` (q . k / sqrt(head_dim)) of head `head`,
  /// query position `query` and key position `key` (in a rolling KV cache
  /// store columns, whose distances are the positions').
  constexpr T logit(T scaled, std::size_t head, std::size_t query, std::size_t key) const noexcept {
    static_cast<void>(head);
    static_cast<void>(query);
    static_cast<void>(key);
    T x = scaled;
    if constexpr (Scores.softcap != 0) {
      constexpr T cap = static_cast<T>(Scores.softcap);
      x = fp::mul(cap, tanh_of(fp::div(x, cap)));
    }
    if constexpr (Scores.alibi) {  // (a masked key's distance is negative)
      const auto distance = static_cast<std::ptrdiff_t>(query - key);
      x = fp::sub(x, fp::mul(alibi_slope<T>(num_heads, head), static_cast<T>(distance)));
    }
    if constexpr (Scores.sliding_window != 0)
      if (query >= key && query - key >= Scores.sliding_window)  // (no overflow for any W)
        x = -std::numeric_limits<T>::infinity();
    return x;
  }
};

/// A module without learned score parameters (causal_attention, the wrapper).
struct no_score_parameters {};

/// The policy of a module's score options (mha::attention_scores, the
/// argument of make_spec) for elements T and `num_heads` query heads (a size_c
/// or a std::size_t), with the options' learned parameters `params` (the
/// module's mha::score_parameters or mha::dynamic::score_parameters, or
/// no_score_parameters): causal_scores for the causal mask, all_keys_scores
/// for none, either of them inside an option_scores when an option adds a
/// logit or a sink step.
template <class T, attention_scores Scores, class Heads, class Params = no_score_parameters>
constexpr auto make_score_policy(Heads num_heads, const Params& params = {}) noexcept {
  const auto range = [] {
    if constexpr (Scores.mask == attention_mask::causal)
      return causal_scores{};
    else
      return all_keys_scores{};
  }();
  if constexpr (Scores.sinks) {
    return option_scores<T, Scores, std::remove_cv_t<decltype(range)>, Heads>{
        range, num_heads, params.sinks.data()};
  } else if constexpr (Scores.softcap != 0 || Scores.alibi || Scores.sliding_window != 0) {
    static_cast<void>(params);
    return option_scores<T, Scores, std::remove_cv_t<decltype(range)>, Heads>{range, num_heads};
  } else {
    static_cast<void>(params);
    static_cast<void>(num_heads);
    return range;
  }
}

}  // namespace MHA_DETAIL_ISA
}  // namespace mha::detail

#include <mha/detail/macros_undef.hpp>
