// mha/kv_cache.hpp -- fixed-size storage of the keys and values of earlier tokens.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>
#include <type_traits>

#include <mha/config.hpp>
#include <mha/detail/engine/attention.hpp>
#include <mha/detail/api/contracts.hpp>

#include <mha/detail/macros.hpp>

namespace mha {

namespace detail {
struct kv_cache_access;
}  // namespace detail

/// The cached keys and values of `Batch` sequences for an attention module of
/// `NumHeads` key/value heads of `HeadDim` features (width = NumHeads * HeadDim
/// key/value features per token; the module's num_kv_heads, which is its
/// num_heads except for grouped_query_attention), with room for `Capacity` (= the module's
/// ContextLength; fewer for a rolling cache, below) tokens each: what the book's
/// KV-cache bonus code (LLMs-from-scratch, ch04/03_kv-cache) keeps in
/// `cache_k` / `cache_v`, and Hugging Face in `past_key_values`. Reached as
/// `M::kv_cache<B>` of every fixed-size module M (for
/// multi_head_attention_wrapper: every head's keys and values, head h in
/// features [h*d_out, (h+1)*d_out)).
///
/// Layout (docs/streaming.md), per sequence: the keys transposed, K^T
/// [width][capacity] (key j's feature f at f * capacity + j; head h's keys are
/// rows [h*head_dim, (h+1)*head_dim), so a decode step's scores read each head's
/// keys as contiguous vectors along the positions), and the values per head,
/// V [num_heads][capacity][head_dim] (head h's value of token j at
/// (h * capacity + j) * head_dim: one head's values are one contiguous block,
/// read once per step). All sequences hold the same number of tokens, size().
/// No heap: 2 * Batch * width * capacity elements inline (GPT-2 small with
/// ContextLength 1024: 6 MiB per sequence in float), so put a large cache in
/// static storage or std::make_unique. Value-initialise it
/// (`M::kv_cache<1> c{};`): an empty cache.
///
/// A cache belongs to the model that filled it: its type records only the
/// shapes (T, Batch, num_heads, head_dim, Capacity), so the cache of another
/// model of the same shapes compiles with this one, and its keys and values
/// would be those of the other model's weights. Use one cache per model and
/// clear() it when the weights change.
///
/// Window: the module's sliding window (attention_scores::sliding_window; 0:
/// none). When 2 * Window - 1 + 8 < ContextLength the cache *rolls*: it
/// holds the last capacity = 2 * Window - 1 + 8 tokens of each sequence
/// (memory O(Window)), positions first_position() .. size() - 1 at columns 0
/// .. size() - first_position() - 1, and a stream may run past capacity
/// tokens: to ContextLength positions with RoPE (its tables end there),
/// without a bound otherwise. Every query still sees its whole window, and
/// truncate() may always drop up to 8 of the last tokens (a larger window
/// gives an ordinary cache of ContextLength tokens).
///
/// Preconditions: truncate(n) with can_truncate(n): n <= size() and, for a
/// rolling cache, n >= first_position() + Window - 1 or first_position() ==
/// 0 (the tokens the next query attends to are still held; always true for
/// n >= size() - 8); checked by MHA_ASSERT in debug builds; otherwise the
/// cache is left as it is.
template <class T, std::size_t Batch, std::size_t NumHeads, std::size_t HeadDim,
          std::size_t Capacity, std::size_t Window = 0>
class kv_cache {
  static constexpr bool rolls_ = detail::kv_rolls(Capacity, Window);
  static constexpr std::size_t slots_ = detail::kv_slots(Capacity, Window);

 public:
  using value_type = T;
  static constexpr std::size_t batch = Batch;           ///< sequences
  static constexpr std::size_t num_heads = NumHeads;    ///< heads (the layout of V depends on them)
  static constexpr std::size_t head_dim = HeadDim;      ///< features per head
  static constexpr std::size_t width = NumHeads * HeadDim;  ///< key/value features per token
  /// Tokens held per sequence: ContextLength, or for a rolling cache
  /// 2 * window - 1 + 8.
  static constexpr std::size_t capacity = slots_;
  /// The module's sliding window (0: none).
  static constexpr std::size_t window = Window;
  /// True when the cache keeps only the last `capacity` tokens (0 < window and
  /// 2 * window - 1 + 8 < ContextLength).
  static constexpr bool rolling = rolls_;

  /// Tokens cached per sequence (the position of the next token).
  constexpr std::size_t size() const noexcept { return size_; }
  /// The position of the oldest token held (column 0): 0 but in a rolling
  /// cache past its capacity.
  constexpr std::size_t first_position() const noexcept {
    if constexpr (rolls_)
      return first_;
    else
      return 0;
  }
  /// Forgets every token (the storage is kept; nothing is overwritten).
  constexpr void clear() noexcept {
    size_ = 0;
    if constexpr (rolls_) first_ = 0;
  }
  /// True when truncate(n) is allowed: n <= size() and, for a rolling cache,
  /// the tokens the next query would attend to are still held (n >=
  /// first_position() + window - 1, or first_position() == 0; always for n >=
  /// size() - 8).
  constexpr bool can_truncate(std::size_t n) const noexcept {
    return n <= size_ && (first_position() == 0 || n >= first_position() + (Window - 1));
  }
  /// Keeps the first n tokens (rollback, e.g. rejected speculative tokens).
  /// Precondition: can_truncate(n).
  constexpr void truncate(std::size_t n) noexcept {
    MHA_ASSERT(n <= size_);
    // (a rolling cache: the tokens the next query attends to are still held)
    const bool window_held = first_position() == 0 || n >= first_position() + (Window - 1);
    MHA_ASSERT(window_held && "kv_cache::truncate: a rolling cache holds its last tokens only; "
                              "n must be at least first_position() + window - 1 (can_truncate(n))");
    if (n < size_ && window_held) size_ = n;
  }
  /// Sequence b's keys, transposed: [width][capacity], position
  /// first_position() + j at column j (columns >= size() - first_position()
  /// unspecified).
  constexpr const T* keys_transposed(std::size_t b) const noexcept {
    return key_t_ + b * width * slots_;
  }
  /// Sequence b's values: [num_heads][capacity][head_dim], columns as
  /// keys_transposed's.
  constexpr const T* values(std::size_t b) const noexcept { return value_ + b * slots_ * width; }

 private:
  friend struct detail::kv_cache_access;
  // (both arrays, and 64 bytes for size_ and the padding, within the largest object)
  static constexpr bool fits_ = detail::product_at_most<detail::max_object_bytes - 64, 2 * sizeof(T),
                                                        Batch, NumHeads, HeadDim, slots_>;
  static_assert(fits_,
                "mha::kv_cache: 2 * Batch * num_heads * head_dim * Capacity elements exceed the "
                "largest object size in bytes, PTRDIFF_MAX (Capacity = the module's ContextLength "
                "is too large)");
  T key_t_[fits_ ? Batch * width * slots_ : 1];
  T value_[fits_ ? Batch * slots_ * width : 1];
  std::size_t size_ = 0;
  struct no_first {};
  // (a rolling cache's first_position(); nothing otherwise)
  [[no_unique_address]] std::conditional_t<rolls_, std::size_t, no_first> first_{};
  static_assert(detail::within_inline_limit<sizeof(key_t_) + sizeof(value_) + sizeof(size_),
                                            MHA_DETAIL_MAX_INLINE_BYTES()>,
                "mha::kv_cache: sizeof exceeds MHA_MAX_INLINE_BYTES (the numbers: sizeof, limit); "
                "the limit refuses the type wherever the object lives, like Eigen's stack "
                "allocation limit: keep large caches in owned storage (std::make_unique) in code "
                "built without MHA_MAX_INLINE_BYTES, or use mha::dynamic");
};

namespace detail {
/// The modules' access to a kv_cache's storage.
struct kv_cache_access {
  template <class T, std::size_t B, std::size_t H, std::size_t D, std::size_t C, std::size_t W>
  static kv_store<T> store(kv_cache<T, B, H, D, C, W>& c) noexcept {
    using cache = kv_cache<T, B, H, D, C, W>;
    return {c.key_t_, c.value_, cache::capacity, H * D * cache::capacity};
  }
  /// The positions the cache holds (append_to_store's bookkeeping).
  template <class T, std::size_t B, std::size_t H, std::size_t D, std::size_t C, std::size_t W>
  static kv_positions positions(const kv_cache<T, B, H, D, C, W>& c) noexcept {
    using cache = kv_cache<T, B, H, D, C, W>;
    return {c.size_, c.first_position(), cache::capacity, cache::rolling ? W : 0};
  }
  template <class T, std::size_t B, std::size_t H, std::size_t D, std::size_t C, std::size_t W>
  static void set_positions(kv_cache<T, B, H, D, C, W>& c, const kv_positions& p) noexcept {
    c.size_ = p.size;
    if constexpr (kv_cache<T, B, H, D, C, W>::rolling) c.first_ = p.first;
  }
};
}  // namespace detail

}  // namespace mha

#include <mha/detail/macros_undef.hpp>

#endif  // MHA_DETAIL_NO_CXX20
