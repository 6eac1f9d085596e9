// mha/dynamic/kv_cache.hpp -- keys and values of earlier tokens, run-time sizes.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#include <mha/detail/dynamic_needs_exceptions.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <mha/detail/engine/attention.hpp>
#include <mha/detail/api/dynamic_checks.hpp>

#include <mha/detail/macros.hpp>

namespace mha::dynamic {

/// The runtime-sized twin of mha::kv_cache: the cached keys and values of
/// `batch` sequences for one mha::dynamic attention module, room for its
/// context_length tokens each (a rolling cache for a module with a sliding
/// window W, 2 W - 1 + 8 < context_length: the last 2 W - 1 + 8, as
/// mha::kv_cache), same layout (per sequence K^T [width][capacity] and V
/// [num_heads][capacity][head_dim], width = num_heads * head_dim; see
/// docs/streaming.md). Allocates its storage once, in the constructor.
///
///   mha::dynamic::kv_cache<float> cache(model, batch);
///   model.forward(x, out, cache, ws);   // x [batch][n][d_in], any n >= 1
///
/// Errors: the constructor throws std::invalid_argument for batch 0. The
/// module's forward throws std::invalid_argument when the cache was made for a
/// module of another head count, head_dim or context_length, or for another
/// batch, std::length_error when it is full.
/// Precondition of truncate(n): n <= size() and, for a rolling cache, n >=
/// first_position() + window() - 1 or first_position() == 0
/// (std::out_of_range otherwise).
/// A moved-from cache has no storage and all sizes 0: it serves no module
/// (std::invalid_argument from a forward). A cache belongs to the model that
/// filled it: the forward checks its sizes, not which model made it (see
/// mha::kv_cache); use one cache per model and clear() it when the weights
/// change.
template <class T>
class kv_cache {
 public:
  using value_type = T;

  /// An empty cache for `batch` sequences of `model` (any mha::dynamic
  /// attention module: it reads num_kv_heads() (num_heads() for a module
  /// without it), head_dim() and context_length()). It serves every module of
  /// those sizes. num_heads() of the cache is the module's key/value heads.
  template <class Module>
  MHA_DETAIL_ISA_TAG kv_cache(const Module& model, std::size_t batch)
      : batch_(check_batch(batch)),
        num_heads_(kv_heads_of(model)),
        head_dim_(model.head_dim()),
        width_(num_heads_ * head_dim_),
        window_(window_of(model)),
        capacity_(detail::kv_slots(model.context_length(), window_)),
        key_t_(detail::checked_product(
            "mha::dynamic::kv_cache", "the keys",
            detail::checked_product("mha::dynamic::kv_cache", "the keys", batch, width_), capacity_)),
        value_(key_t_.size()) {}

  /// The sliding window of a module whose cache rolls (detail::kv_rolls), else 0.
  template <class Module>
  MHA_DETAIL_ISA_TAG static std::size_t window_of(const Module& model) {
    const std::size_t w = Module::scores.sliding_window;
    return detail::kv_rolls(model.context_length(), w) ? w : 0;
  }
  /// The key/value heads of a module: num_kv_heads(), else num_heads().
  template <class Module>
  static std::size_t kv_heads_of(const Module& model) {
    if constexpr (requires { model.num_kv_heads(); })
      return model.num_kv_heads();
    else
      return model.num_heads();
  }

  // (copies, moves and destruction carry the ISA's ABI tag: their code moves
  // T values; docs/design.md, "ISA namespaces")
  MHA_DETAIL_ISA_TAG kv_cache(const kv_cache&) = default;
  MHA_DETAIL_ISA_TAG kv_cache& operator=(const kv_cache&) = default;
  /// Takes `other`'s storage and sizes; `other` is left with none (all sizes 0).
  MHA_DETAIL_ISA_TAG kv_cache(kv_cache&& other) noexcept
      : batch_(other.batch_),
        num_heads_(other.num_heads_),
        head_dim_(other.head_dim_),
        width_(other.width_),
        window_(other.window_),
        capacity_(other.capacity_),
        key_t_(std::move(other.key_t_)),
        value_(std::move(other.value_)),
        size_(other.size_),
        first_(other.first_) {
    other.forget_();
  }
  /// Takes `other`'s storage and sizes; `other` is left with none (all sizes 0).
  MHA_DETAIL_ISA_TAG kv_cache& operator=(kv_cache&& other) noexcept {
    if (this != &other) {
      batch_ = other.batch_, num_heads_ = other.num_heads_, head_dim_ = other.head_dim_;
      width_ = other.width_, window_ = other.window_, capacity_ = other.capacity_;
      size_ = other.size_, first_ = other.first_;
      key_t_ = std::move(other.key_t_);
      value_ = std::move(other.value_);
      other.forget_();
    }
    return *this;
  }
  MHA_DETAIL_ISA_TAG ~kv_cache() = default;

  /// Tokens cached per sequence (the position of the next token).
  std::size_t size() const noexcept { return size_; }
  /// Tokens each sequence can hold (the module's context_length; fewer for a
  /// rolling cache).
  std::size_t capacity() const noexcept { return capacity_; }
  /// The sliding window of a rolling cache, else 0.
  std::size_t window() const noexcept { return window_; }
  /// True when the cache keeps only its last capacity() tokens.
  bool rolling() const noexcept { return window_ != 0; }
  /// The position of the oldest token held (column 0): 0 but in a rolling
  /// cache past its capacity.
  std::size_t first_position() const noexcept { return first_; }
  /// Sequences.
  std::size_t batch() const noexcept { return batch_; }
  /// Heads (the layout of the values depends on them).
  std::size_t num_heads() const noexcept { return num_heads_; }
  /// Features per head.
  std::size_t head_dim() const noexcept { return head_dim_; }
  /// Key/value features per token (num_heads * head_dim).
  std::size_t width() const noexcept { return width_; }
  /// Forgets every token (storage kept).
  void clear() noexcept { size_ = first_ = 0; }
  /// Keeps the first n tokens. Throws std::out_of_range if n > size() or, for
  /// a rolling cache, if the tokens the next query attends to are no longer
  /// held (n < first_position() + window() - 1 with first_position() > 0).
  MHA_DETAIL_ISA_TAG void truncate(std::size_t n) {
    if (n > size_)
      throw std::out_of_range("mha::dynamic::kv_cache::truncate: n = " + std::to_string(n) +
                              " exceeds size() = " + std::to_string(size_));
    if (!can_truncate(n))
      throw std::out_of_range("mha::dynamic::kv_cache::truncate: n = " + std::to_string(n) +
                              " needs positions from " +
                              std::to_string(n >= window_ - 1 ? n - (window_ - 1) : 0) +
                              ", but the rolling cache holds positions from " +
                              std::to_string(first_) + " on");
    size_ = n;
  }
  /// True when truncate(n) is allowed: n <= size() and, for a rolling cache,
  /// the tokens the next query would attend to are still held (n >=
  /// first_position() + window() - 1, or first_position() == 0; always for n
  /// >= size() - 8).
  bool can_truncate(std::size_t n) const noexcept {
    return n <= size_ && (first_ == 0 || n >= first_ + (window_ - 1));
  }
  /// Sequence b's keys, transposed: [width][capacity], position
  /// first_position() + j at column j.
  const T* keys_transposed(std::size_t b) const noexcept {
    return key_t_.data() + b * width_ * capacity_;
  }
  /// Sequence b's values: [num_heads][capacity][head_dim].
  const T* values(std::size_t b) const noexcept { return value_.data() + b * capacity_ * width_; }

  /// The storage as the orchestration takes it (for the modules).
  detail::kv_store<T> store_() noexcept {
    return {key_t_.data(), value_.data(), capacity_, width_ * capacity_};
  }
  /// The positions it holds (for the modules: detail::append_to_store).
  detail::kv_positions positions_() const noexcept {
    return {size_, first_, capacity_, window_};
  }
  /// Records the positions after an append (for the modules).
  void set_positions_(const detail::kv_positions& p) noexcept {
    size_ = p.size;
    first_ = p.first;
  }


 private:
  /// The moved-from state: no storage, every size 0.
  void forget_() noexcept {
    batch_ = num_heads_ = head_dim_ = width_ = window_ = capacity_ = size_ = first_ = 0;
    key_t_.clear();
    value_.clear();
  }
  MHA_DETAIL_ISA_TAG static std::size_t check_batch(std::size_t batch) {
    if (batch == 0) throw std::invalid_argument("mha::dynamic::kv_cache: batch must be greater than 0");
    return batch;
  }
  std::size_t batch_, num_heads_, head_dim_, width_, window_, capacity_;
  std::vector<T> key_t_, value_;
  std::size_t size_ = 0;
  std::size_t first_ = 0;
};

}  // namespace mha::dynamic

#include <mha/detail/macros_undef.hpp>

#endif  // MHA_DETAIL_NO_CXX20
