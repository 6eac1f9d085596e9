// mha/detail/api/dynamic_module.hpp -- the forward() overload set shared by the
// mha::dynamic attention modules, on top of the one orchestration
// (detail/engine/attention.hpp).
#pragma once

#include <mha/detail/cxx20_check.hpp>
#include <mha/detail/dynamic_needs_exceptions.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <mha/detail/engine/attention.hpp>
#include <mha/detail/api/contracts.hpp>
#include <mha/detail/api/dynamic_checks.hpp>
#include <mha/detail/api/dynamic_parameter_count.hpp>
#include <mha/dynamic/kv_cache.hpp>
#include <mha/dynamic/tensor.hpp>
#include <mha/dynamic/tensor_view.hpp>
#include <mha/dynamic/workspace.hpp>

#include <mha/detail/macros.hpp>

namespace mha::detail {

/// CRTP base of mha::dynamic::{causal_attention, multi_head_attention_wrapper,
/// multi_head_attention, grouped_query_attention}: the public forward
/// overloads, written once, and
/// parameter_count() (detail::walked_parameter_count: the walk of Derived's
/// parameter_description()). The
/// class is the same in every translation unit (it is a base of the modules);
/// its member functions carry the ISA's ABI tag (MHA_DETAIL_ISA_TAG, see
/// detail/macros.hpp) because they run the ISA-dependent orchestration. Derived
/// provides `api` (its name for messages), d_in(), context_length(),
/// num_heads(), head_dim(), output_width(), a private `check_parameters_(bool training)` (throws
/// std::invalid_argument for member layers of the wrong shape or a dropout
/// outside [0, 1]) and a private `spec_()` (its detail::attention_spec with
/// run-time sizes), and befriends this base. A T other than float or double is
/// reported once, by the module's own static_assert ("mha::dynamic::<module>:
/// T must be float or double"; its members are then of float); no forward
/// body is instantiated then.
///
/// Every input `x` is a dynamic::tensor_view<const T> and every output `out` a
/// dynamic::tensor_view<T>: views of the caller's memory, or of a
/// dynamic::tensor, which converts implicitly (so one overload serves both,
/// with the same checks and messages).
template <class Derived, class T>
class dynamic_module : public walked_parameter_count<Derived> {
 public:
  /// Inference forward: [B][N][d_in] (or [N][d_in]) -> [B][N][output_width()].
  MHA_DETAIL_ISA_TAG dynamic::tensor<T> forward(dynamic::tensor_view<const T> x) const {
    dynamic::workspace<T> ws;
    return forward_new(x, ws, false, 0);
  }
  /// Same as forward(x) (PyTorch's module(x)).
  MHA_DETAIL_ISA_TAG
  dynamic::tensor<T> operator()(dynamic::tensor_view<const T> x) const { return forward(x); }
  /// Inference forward into `out` (shape of x with last extent output_width())
  /// with a temporary workspace (allocates).
  MHA_DETAIL_ISA_TAG void forward(dynamic::tensor_view<const T> x,
                                  dynamic::tensor_view<T> out) const {
    dynamic::workspace<T> ws;
    run(x, out, ws, false, 0);
  }
  /// Inference forward into `out`, reusing `ws`: no allocation after the
  /// first call (ws is sized for context_length tokens then), whatever N.
  MHA_DETAIL_ISA_TAG void forward(dynamic::tensor_view<const T> x, dynamic::tensor_view<T> out,
               dynamic::workspace<T>& ws) const {
    run(x, out, ws, false, 0);
  }
  /// KV-cache forward (inference): x [B][n][d_in] (or [n][d_in] for B = 1)
  /// with any n >= 1 and B = cache.batch(); appends the n new tokens of each
  /// sequence to `cache` at positions size()..size()+n-1 and writes their
  /// outputs to out [B][n][output_width()]; the token at position p attends to
  /// cached positions 0..p. Causal modules only (a compile-time error for
  /// attention_mask::none). Bit-identical to the fixed-size twin's
  /// forward(x, n, out, cache, ws). Throws std::invalid_argument (shapes, n ==
  /// 0, a cache of another batch or module size) or std::length_error
  /// (size() + n > capacity()), naming the numbers; nothing is written then.
  /// No allocation after the first call with `ws`.
  MHA_DETAIL_ISA_TAG
  void forward(dynamic::tensor_view<const T> x, dynamic::tensor_view<T> out,
               dynamic::kv_cache<T>& cache,
               dynamic::workspace<T>& ws) const {
    static_assert(Derived::is_causal,
                  "mha::dynamic: forward(x, out, cache, ws) needs a causal module (Mask = "
                  "attention_mask::causal): with attention_mask::none a token also attends to "
                  "later tokens, which a cache does not hold; use forward(x, out, ws)");
    if constexpr (float_or_double<T> && Derived::is_causal) forward_cached_(x, out, cache, ws);
  }
  /// Training-mode forward: dropout (each module's `dropout`, checked in
  /// [0, 1]) on the attention weights, kept weights scaled by 1/(1-p); the
  /// same mask as the fixed-size twin for the same seed.
  MHA_DETAIL_ISA_TAG
  dynamic::tensor<T> forward_training(dynamic::tensor_view<const T> x, std::uint64_t seed) const {
    dynamic::workspace<T> ws;
    return forward_new(x, ws, true, seed);
  }
  /// Training-mode forward into `out` with a temporary workspace (allocates).
  MHA_DETAIL_ISA_TAG
  void forward_training(dynamic::tensor_view<const T> x, dynamic::tensor_view<T> out,
                        std::uint64_t seed) const {
    dynamic::workspace<T> ws;
    run(x, out, ws, true, seed);
  }
  /// Training-mode forward into `out`, reusing `ws`.
  MHA_DETAIL_ISA_TAG
  void forward_training(dynamic::tensor_view<const T> x, dynamic::tensor_view<T> out,
                        dynamic::workspace<T>& ws, std::uint64_t seed) const {
    run(x, out, ws, true, seed);
  }
  /// Padded batch (PyTorch's key_padding_mask), inference: x [B][N][d_in]
  /// (or [N][d_in]), lengths B counts <= N: sequence b's keys at positions
  /// >= lengths[b] are masked for every query and its output rows
  /// lengths[b]..N-1 are written as zeros (length 0: all zeros, never NaN);
  /// x's rows past lengths[b] are never read. Bit-identical to the fixed-size
  /// twin's forward(x, lengths, out, ws). Throws std::invalid_argument
  /// (shapes, lengths.size() != B, a length > N), naming the numbers;
  /// nothing is written then.
  MHA_DETAIL_ISA_TAG
  void forward(dynamic::tensor_view<const T> x, std::span<const std::size_t> lengths,
               dynamic::tensor_view<T> out, dynamic::workspace<T>& ws) const {
    run_extras(x, &lengths, out, nullptr, ws, false, 0);
  }
  /// Padded batch in training mode (dropout, stream b for sequence b).
  MHA_DETAIL_ISA_TAG
  void forward_training(dynamic::tensor_view<const T> x, std::span<const std::size_t> lengths,
                        dynamic::tensor_view<T> out, dynamic::workspace<T>& ws,
                        std::uint64_t seed) const {
    run_extras(x, &lengths, out, nullptr, ws, true, seed);
  }
  /// Inference forward that also writes the attention weights (PyTorch's
  /// need_weights=True): `weights` [B][num_heads][N][N] for each head
  /// (average_attn_weights=False) or [B][N][N] for their mean over heads
  /// ([num_heads][N][N] or [N][N] for a rank-2 x). Row i: query i's weights
  /// over keys 0..N-1, summing to 1, zero above the diagonal when causal.
  /// Throws std::invalid_argument for another weights shape.
  MHA_DETAIL_ISA_TAG
  void forward_with_weights(dynamic::tensor_view<const T> x, dynamic::tensor_view<T> out,
                            dynamic::tensor_view<T> weights, dynamic::workspace<T>& ws) const {
    run_extras(x, nullptr, out, &weights, ws, false, 0);
  }
  /// Padded batch with the attention weights (padded rows and masked keys 0).
  MHA_DETAIL_ISA_TAG
  void forward_with_weights(dynamic::tensor_view<const T> x, std::span<const std::size_t> lengths,
                            dynamic::tensor_view<T> out, dynamic::tensor_view<T> weights,
                            dynamic::workspace<T>& ws) const {
    run_extras(x, &lengths, out, &weights, ws, false, 0);
  }
  /// Training-mode forward with the attention weights after dropout, as
  /// PyTorch returns them.
  MHA_DETAIL_ISA_TAG
  void forward_training_with_weights(dynamic::tensor_view<const T> x, dynamic::tensor_view<T> out,
                                     dynamic::tensor_view<T> weights, dynamic::workspace<T>& ws,
                                     std::uint64_t seed) const {
    run_extras(x, nullptr, out, &weights, ws, true, seed);
  }
  /// Padded batch in training mode with the attention weights after dropout
  /// (padded rows and masked keys 0; dropout stream b for sequence b, as
  /// forward_training(x, lengths, out, ws, seed)).
  MHA_DETAIL_ISA_TAG
  void forward_training_with_weights(dynamic::tensor_view<const T> x,
                                     std::span<const std::size_t> lengths,
                                     dynamic::tensor_view<T> out, dynamic::tensor_view<T> weights,
                                     dynamic::workspace<T>& ws, std::uint64_t seed) const {
    run_extras(x, &lengths, out, &weights, ws, true, seed);
  }
  /// Cross-attention (nn.MultiheadAttention(query, key, value) without
  /// attn_mask; Mask must be attention_mask::none, a compile-time error
  /// otherwise): query [B][Nq][d_in], key [B][Nkv][key_dim()], value
  /// [B][Nkv][value_dim()] (or all rank 2) -> [B][Nq][output_width()]; every
  /// query attends to every key of its sequence. Bit-identical to the
  /// fixed-size twin's forward(query, key, value, out, ws). Throws
  /// std::invalid_argument for shapes that do not fit, naming them.
  MHA_DETAIL_ISA_TAG
  dynamic::tensor<T> forward(dynamic::tensor_view<const T> query, dynamic::tensor_view<const T> key,
                             dynamic::tensor_view<const T> value) const {
    std::vector<std::size_t> shape(query.shape().begin(), query.shape().end());
    shape.back() = self().output_width();
    dynamic::tensor<T> out(shape);
    dynamic::workspace<T> ws;
    run_cross(query, key, value, nullptr, out, nullptr, ws, false, 0);
    return out;
  }
  /// Cross-attention into `out`, reusing `ws`.
  MHA_DETAIL_ISA_TAG
  void forward(dynamic::tensor_view<const T> query, dynamic::tensor_view<const T> key,
               dynamic::tensor_view<const T> value, dynamic::tensor_view<T> out,
               dynamic::workspace<T>& ws) const {
    run_cross(query, key, value, nullptr, out, nullptr, ws, false, 0);
  }
  /// Cross-attention with padded keys (key_padding_mask on the keys): the
  /// queries of sequence b attend to its first key_lengths[b] keys; none
  /// gives a zero context (output rows = out_proj's bias, never NaN).
  MHA_DETAIL_ISA_TAG
  void forward(dynamic::tensor_view<const T> query, dynamic::tensor_view<const T> key,
               dynamic::tensor_view<const T> value, std::span<const std::size_t> key_lengths,
               dynamic::tensor_view<T> out, dynamic::workspace<T>& ws) const {
    run_cross(query, key, value, &key_lengths, out, nullptr, ws, false, 0);
  }
  /// Cross-attention in training mode (dropout on the attention weights).
  MHA_DETAIL_ISA_TAG
  void forward_training(dynamic::tensor_view<const T> query, dynamic::tensor_view<const T> key,
                        dynamic::tensor_view<const T> value, dynamic::tensor_view<T> out,
                        dynamic::workspace<T>& ws, std::uint64_t seed) const {
    run_cross(query, key, value, nullptr, out, nullptr, ws, true, seed);
  }
  /// Cross-attention with padded keys in training mode (dropout on the
  /// attention weights of the first key_lengths[b] keys).
  MHA_DETAIL_ISA_TAG
  void forward_training(dynamic::tensor_view<const T> query, dynamic::tensor_view<const T> key,
                        dynamic::tensor_view<const T> value,
                        std::span<const std::size_t> key_lengths, dynamic::tensor_view<T> out,
                        dynamic::workspace<T>& ws, std::uint64_t seed) const {
    run_cross(query, key, value, &key_lengths, out, nullptr, ws, true, seed);
  }
  /// Cross-attention in training mode with the attention weights after
  /// dropout (kept weights scaled by 1/(1-p), dropped ones 0, as PyTorch
  /// returns them).
  MHA_DETAIL_ISA_TAG
  void forward_training_with_weights(dynamic::tensor_view<const T> query,
                                     dynamic::tensor_view<const T> key,
                                     dynamic::tensor_view<const T> value,
                                     dynamic::tensor_view<T> out, dynamic::tensor_view<T> weights,
                                     dynamic::workspace<T>& ws, std::uint64_t seed) const {
    run_cross(query, key, value, nullptr, out, &weights, ws, true, seed);
  }
  /// Cross-attention with padded keys in training mode, with the weights.
  MHA_DETAIL_ISA_TAG
  void forward_training_with_weights(dynamic::tensor_view<const T> query,
                                     dynamic::tensor_view<const T> key,
                                     dynamic::tensor_view<const T> value,
                                     std::span<const std::size_t> key_lengths,
                                     dynamic::tensor_view<T> out, dynamic::tensor_view<T> weights,
                                     dynamic::workspace<T>& ws, std::uint64_t seed) const {
    run_cross(query, key, value, &key_lengths, out, &weights, ws, true, seed);
  }
  /// Cross-attention with the attention weights: [B][num_heads][Nq][Nkv] per
  /// head or [B][Nq][Nkv] averaged (no B for rank-2 inputs).
  MHA_DETAIL_ISA_TAG
  void forward_with_weights(dynamic::tensor_view<const T> query, dynamic::tensor_view<const T> key,
                            dynamic::tensor_view<const T> value, dynamic::tensor_view<T> out,
                            dynamic::tensor_view<T> weights, dynamic::workspace<T>& ws) const {
    run_cross(query, key, value, nullptr, out, &weights, ws, false, 0);
  }
  /// Cross-attention with padded keys and the attention weights.
  MHA_DETAIL_ISA_TAG
  void forward_with_weights(dynamic::tensor_view<const T> query, dynamic::tensor_view<const T> key,
                            dynamic::tensor_view<const T> value,
                            std::span<const std::size_t> key_lengths, dynamic::tensor_view<T> out,
                            dynamic::tensor_view<T> weights, dynamic::workspace<T>& ws) const {
    run_cross(query, key, value, &key_lengths, out, &weights, ws, false, 0);
  }
  /// Features of a key and of a value input row of cross-attention: d_in()
  /// (only multi_head_attention takes another kdim / vdim, its own key_dim()).
  std::size_t key_dim() const noexcept { return self().d_in(); }
  std::size_t value_dim() const noexcept { return self().d_in(); }
  /// Checks the member layers against the module's sizes, as every forward
  /// does first: throws std::invalid_argument naming the member and the
  /// shapes (e.g. "mha::dynamic::multi_head_attention: w_key is
  /// linear(5, 7, bias), expected linear(6, 8, bias)") when a layer or tensor was replaced by one of
  /// other sizes or bias, or (the wrapper) when `heads` holds another count
  /// or a head of other sizes. Call it after editing members by hand; the
  /// safetensors loader calls it before it plans a load (and reports
  /// load_errc::model, writing nothing).
  MHA_DETAIL_ISA_TAG void check_parameters() const { self().check_parameters_(false); }
  /// Key/value heads: num_heads() (every head has its own; a
  /// grouped_query_attention has fewer, and its own num_kv_heads()). The KV
  /// cache stores this many.
  std::size_t num_kv_heads() const noexcept { return self().num_heads(); }

 private:
  /// The KV-cache forward (T is float or double).
  MHA_DETAIL_ISA_TAG
  void forward_cached_(const dynamic::tensor_view<const T>& x, const dynamic::tensor_view<T>& out,
                       dynamic::kv_cache<T>& cache, dynamic::workspace<T>& ws) const {
    const Derived& m = self();
    check_self_attention();
    const auto s = check_dynamic_input(Derived::api, x, m.d_in(), m.context_length());
    check_dynamic_output(Derived::api, x, out, m.output_width());
    m.check_parameters_(false);
    if (cache.num_heads() != m.num_kv_heads() || cache.head_dim() != m.head_dim() ||
        cache.capacity() != kv_slots(m.context_length(), cache.window()) ||
        cache.window() != dynamic::kv_cache<T>::window_of(m))
      throw std::invalid_argument(
          std::string(Derived::api) +
          (cache.capacity() == 0 && cache.num_heads() == 0
               ? std::string("::forward: the KV cache is empty (default-constructed or moved "
                             "from: 0 key/value heads, capacity 0)")
               : "::forward: the KV cache was made for " + std::to_string(cache.num_heads()) +
                     " key/value heads of head_dim " + std::to_string(cache.head_dim()) +
                     ", capacity " + std::to_string(cache.capacity()) + " and sliding window " +
                     std::to_string(cache.window())) +
          ", this module has " + std::to_string(m.num_kv_heads()) + " key/value heads of head_dim " +
          std::to_string(m.head_dim()) + ", context_length " + std::to_string(m.context_length()) +
          " and sliding window " + std::to_string(dynamic::kv_cache<T>::window_of(m)) +
          " (window 0: none; make the cache from the module: dynamic::kv_cache<T>(module, batch))");
    if (s.batch != cache.batch())
      throw std::invalid_argument(std::string(Derived::api) + "::forward: input batch " +
                                  std::to_string(s.batch) + " differs from the KV cache's batch " +
                                  std::to_string(cache.batch()));
    const auto spec = m.spec_();
    // (a rolling cache without RoPE takes any number of positions)
    if ((!cache.rolling() || rotates(spec)) &&
        s.tokens > m.context_length() - cache.size())
      throw std::length_error(
          std::string(Derived::api) +
          (cache.rolling() ? "::forward: the rolling KV cache is at position " +
                                 std::to_string(cache.size()) + " of the " +
                                 std::to_string(m.context_length()) +
                                 " that RoPE's tables cover; "
                           : "::forward: the KV cache holds " + std::to_string(cache.size()) +
                                 " of " + std::to_string(m.context_length()) +
                                 (m.context_length() == 1 ? " token; " : " tokens; ")) +
          std::to_string(s.tokens) +
          (s.tokens == 1 ? " more token does not fit" : " more tokens do not fit"));
    const std::size_t width = m.output_width();
    reserve(ws, s.batch);
    const auto store = cache.store_();
    auto pos = cache.positions_();
    append_to_store(store, s.batch, m.num_kv_heads(), m.head_dim(), pos, s.tokens,
                    [&](std::size_t row0, std::size_t rows, std::size_t column, std::size_t first) {
                      forward_cached(spec, x.data() + row0 * m.d_in(), s.tokens * m.d_in(),
                                     s.batch, rows, out.data() + row0 * width, s.tokens * width,
                                     store, column, ws.storage.data(), ws.scores.data(),
                                     m.context_length(), first);
                    });
    cache.set_positions_(pos);
  }
  const Derived& self() const noexcept { return static_cast<const Derived&>(*this); }
  /// Sizes `ws` for any call on `batch` sequences: the whole-sequence path's
  /// Q, K^T, V and context of context_length tokens (one sequence at a time)
  /// or a KV-cache call's queries and context of batch * context_length rows,
  /// whichever is larger, and gemm::mr score rows of context_length keys.
  MHA_DETAIL_ISA_TAG void reserve(dynamic::workspace<T>& ws, std::size_t batch) const {
    const Derived& m = self();
    const char* what = "the workspace";
    const std::size_t block = checked_product(Derived::api, what, m.context_length(), m.output_width());
    const std::size_t whole = checked_product(Derived::api, what, 4, block);
    const std::size_t cached = checked_product(Derived::api, what, 2 * batch, block);
    checked_product(Derived::api, what, gemm::mr, m.context_length());  // the score rows
    ws.reserve_for(whole > cached ? whole : cached, m.context_length());
  }
  /// Checks, then the whole-sequence orchestration (one sequence at a time).
  MHA_DETAIL_ISA_TAG
  void run(const dynamic::tensor_view<const T>& x, const dynamic::tensor_view<T>& out,
           dynamic::workspace<T>& ws,
           bool training, std::uint64_t seed) const {
    if constexpr (float_or_double<T>) run_(x, out, ws, training, seed);
  }
  /// run for T float or double.
  MHA_DETAIL_ISA_TAG void run_(const dynamic::tensor_view<const T>& x,
                               const dynamic::tensor_view<T>& out, dynamic::workspace<T>& ws,
            bool training, std::uint64_t seed) const {
    const Derived& m = self();
    check_self_attention();
    const auto s = check_dynamic_input(Derived::api, x, m.d_in(), m.context_length());
    check_dynamic_output(Derived::api, x, out, m.output_width());
    m.check_parameters_(training);
    const std::size_t width = m.output_width();
    reserve(ws, s.batch);
    forward_sequence<1>(m.spec_(), x.data(), s.tokens * m.d_in(), s.batch, s.tokens, out.data(),
                        s.tokens * width, ws.storage.data(), ws.scores.data(), training, seed);
  }
  /// Padded and/or weights forward (lengths, weights: null when absent).
  MHA_DETAIL_ISA_TAG
  void run_extras(const dynamic::tensor_view<const T>& x, const std::span<const std::size_t>* lengths,
                  const dynamic::tensor_view<T>& out, const dynamic::tensor_view<T>* weights,
                  dynamic::workspace<T>& ws, bool training, std::uint64_t seed) const {
    if constexpr (float_or_double<T>) {
      const Derived& m = self();
      check_self_attention();
      const auto s = check_dynamic_input(Derived::api, x, m.d_in(), m.context_length());
      check_dynamic_output(Derived::api, x, out, m.output_width());
      m.check_parameters_(training);
      const std::size_t h = m.num_heads();
      const char* const call = call_name(weights != nullptr, training);
      const bool average = weights != nullptr && check_weights(*weights, x.shape().size() == 3,
                                                               s.batch, s.tokens, s.tokens, call);
      if (lengths != nullptr) check_lengths(*lengths, s.batch, s.tokens, call);
      reserve(ws, s.batch);
      const std::size_t n = s.tokens;
      const std::size_t per_sequence = (average ? 1 : h) * n * n;
      T* const w = weights == nullptr ? nullptr : weights->data();
      if (w != nullptr)
        for (std::size_t i = 0; i < s.batch * per_sequence; ++i) w[i] = T(0);
      const weights_out<T> wo{w, n, average ? 0 : n * n, per_sequence, average};
      const std::size_t width = m.output_width();
      if (lengths != nullptr)
        forward_padded<1>(m.spec_(), x.data(), n * m.d_in(), s.batch, lengths->data(), n,
                          out.data(), n * width, ws.storage.data(), ws.scores.data(), training,
                          seed, wo);
      else
        forward_sequence<1>(m.spec_(), x.data(), n * m.d_in(), s.batch, n, out.data(), n * width,
                            ws.storage.data(), ws.scores.data(), training, seed, wo);
    }
  }
  /// The self-attention forwards project keys and values from x: a module
  /// made for another kdim / vdim (kv_dims) takes only forward(query, key,
  /// value, ...) (std::invalid_argument).
  MHA_DETAIL_ISA_TAG void check_self_attention() const {
    const Derived& m = self();
    if (m.key_dim() != m.d_in() || m.value_dim() != m.d_in())
      throw std::invalid_argument(
          std::string(Derived::api) + "::forward: self-attention projects keys and values from x, "
          "but this module was made for kdim = " + std::to_string(m.key_dim()) + " and vdim = " +
          std::to_string(m.value_dim()) + " (d_in = " + std::to_string(m.d_in()) +
          "); call forward(query, key, value, ...)");
  }
  /// The public call an error message names: forward, forward_training,
  /// forward_with_weights or forward_training_with_weights.
  static constexpr const char* call_name(bool with_weights, bool training) noexcept {
    return with_weights ? (training ? "forward_training_with_weights" : "forward_with_weights")
                        : (training ? "forward_training" : "forward");
  }
  /// Checks a weights view: [B][num_heads][nq][nk] (per head; returns
  /// false) or [B][nq][nk] (average; true), without B when not batched;
  /// `call` is the public call that errors name.
  MHA_DETAIL_ISA_TAG
  bool check_weights(const dynamic::tensor_view<T>& weights, bool batched, std::size_t batch,
                     std::size_t nq, std::size_t nk, const char* call) const {
    const auto ws_shape = weights.shape();
    std::vector<std::size_t> per_head, mean;
    if (batched) per_head.push_back(batch), mean.push_back(batch);
    per_head.insert(per_head.end(), {self().num_heads(), nq, nk});
    mean.insert(mean.end(), {nq, nk});
    const auto is = [&](const std::vector<std::size_t>& e) {
      return ws_shape.size() == e.size() && std::equal(e.begin(), e.end(), ws_shape.begin());
    };
    if (is(mean)) return true;
    if (is(per_head)) return false;
    throw std::invalid_argument(std::string(Derived::api) + "::" + call + ": weights are " +
                                dynamic::shape_string(ws_shape) + ", expected " +
                                dynamic::shape_string(per_head) + " (per head) or " +
                                dynamic::shape_string(mean) + " (the head average)");
  }
  /// Checks `lengths`: one per sequence, each at most `tokens`; `call` is
  /// the public call that errors name.
  MHA_DETAIL_ISA_TAG
  static void check_lengths(std::span<const std::size_t> lengths, std::size_t batch,
                            std::size_t tokens, const char* call, const char* name = "lengths",
                            const char* whose = "input's") {
    if (lengths.size() != batch)
      throw std::invalid_argument(std::string(Derived::api) + "::" + call + ": " +
                                  std::to_string(lengths.size()) + " " + name +
                                  " for a batch of " + std::to_string(batch));
    for (std::size_t b = 0; b < batch; ++b)
      if (lengths[b] > tokens)
        throw std::invalid_argument(std::string(Derived::api) + "::" + call + ": " + name + "[" +
                                    std::to_string(b) + "] = " + std::to_string(lengths[b]) +
                                    " exceeds the " + whose + " " + std::to_string(tokens) +
                                    " tokens");
  }
  /// The cross-attention forwards (key_lengths, weights: null when absent).
  MHA_DETAIL_ISA_TAG
  void run_cross(const dynamic::tensor_view<const T>& query, const dynamic::tensor_view<const T>& key,
                 const dynamic::tensor_view<const T>& value,
                 const std::span<const std::size_t>* key_lengths,
                 const dynamic::tensor_view<T>& out, const dynamic::tensor_view<T>* weights,
                 dynamic::workspace<T>& ws, bool training, std::uint64_t seed) const {
    static_assert(!Derived::is_causal,
                  "mha::dynamic: forward(query, key, value, ...): cross-attention needs Mask = "
                  "attention_mask::none (every query attends to every key of the other input)");
    if constexpr (float_or_double<T> && !Derived::is_causal) {
      const Derived& m = self();
      const std::string api = std::string(Derived::api) + " cross-attention";
      const auto width_check = [&](const dynamic::tensor_view<const T>& t, const char* what,
                                   const char* dim, std::size_t expected) {
        const auto sh = t.shape();
        if (sh.empty() || sh.back() != expected)
          throw std::invalid_argument(api + ": " + what + " " + dynamic::shape_string(sh) +
                                      " has last extent " +
                                      (sh.empty() ? std::string("none") : std::to_string(sh.back())) +
                                      ", expected " + dim + " = " + std::to_string(expected));
        if (sh.size() >= 2 && sh[sh.size() - 2] > m.context_length())
          throw std::invalid_argument(api + ": " + what + " " + dynamic::shape_string(sh) + " has " +
                                      std::to_string(sh[sh.size() - 2]) +
                                      " tokens, expected at most context_length = " +
                                      std::to_string(m.context_length()));
      };
      width_check(query, "query", "d_in", m.d_in());
      width_check(key, "key", "kdim", m.key_dim());
      width_check(value, "value", "vdim", m.value_dim());
      const auto sq = check_dynamic_input(Derived::api, query, m.d_in(), m.context_length());
      const auto sk = check_dynamic_input(Derived::api, key, m.key_dim(), m.context_length());
      const auto sv = check_dynamic_input(Derived::api, value, m.value_dim(), m.context_length());
      if (key.shape().size() != query.shape().size() || value.shape().size() != query.shape().size() ||
          sk.batch != sq.batch || sv.batch != sq.batch || sv.tokens != sk.tokens)
        throw std::invalid_argument(api + ": query " + dynamic::shape_string(query.shape()) +
                                    ", key " + dynamic::shape_string(key.shape()) + " and value " +
                                    dynamic::shape_string(value.shape()) +
                                    " must have one rank and batch, and key and value one token "
                                    "count");
      check_dynamic_output(Derived::api, query, out, m.output_width());
      m.check_parameters_(training);
      const std::size_t nq = sq.tokens, nkv = sk.tokens;
      const bool average = weights != nullptr &&
                           check_weights(*weights, query.shape().size() == 3, sq.batch, nq, nkv,
                                         call_name(true, training));
      if (key_lengths != nullptr)
        check_lengths(*key_lengths, sq.batch, nkv, call_name(weights != nullptr, training),
                      "key_lengths", "key's");
      reserve(ws, sq.batch);
      const std::size_t per_sequence = (average ? 1 : m.num_heads()) * nq * nkv;
      T* const w = weights == nullptr ? nullptr : weights->data();
      if (w != nullptr)
        for (std::size_t i = 0; i < sq.batch * per_sequence; ++i) w[i] = T(0);
      const weights_out<T> wo{w, nkv, average ? 0 : nq * nkv, per_sequence, average};
      forward_cross(m.spec_(), query.data(), nq * m.d_in(), sq.batch, nq, key.data(),
                    nkv * m.key_dim(), m.key_dim(), value.data(), nkv * m.value_dim(),
                    m.value_dim(), nkv, key_lengths == nullptr ? nullptr : key_lengths->data(),
                    out.data(), nq * m.output_width(), ws.storage.data(), ws.scores.data(),
                    training, seed, wo);
    }
  }
  MHA_DETAIL_ISA_TAG
  dynamic::tensor<T> forward_new(const dynamic::tensor_view<const T>& x, dynamic::workspace<T>& ws,
                                 bool training, std::uint64_t seed) const {
    std::vector<std::size_t> shape(x.shape().begin(), x.shape().end());
    shape.back() = self().output_width();
    dynamic::tensor<T> out(shape);
    run(x, out, ws, training, seed);
    return out;
  }
};

}  // namespace mha::detail

#include <mha/detail/macros_undef.hpp>
