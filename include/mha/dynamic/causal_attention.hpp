// mha/dynamic/causal_attention.hpp -- CausalAttention with run-time sizes.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <mha/detail/dropout.hpp>
#include <mha/detail/dynamic_checks.hpp>
#include <mha/detail/dynamic_module.hpp>
#include <mha/detail/kernels.hpp>
#include <mha/dynamic/linear.hpp>
#include <mha/dynamic/tensor.hpp>
#include <mha/dynamic/workspace.hpp>

namespace mha::dynamic {

/// The runtime-sized twin of mha::causal_attention (book section 3.5.3): same
/// members (`w_query`, `w_key`, `w_value`, `dropout`), same arithmetic in the
/// same order (shared kernels), sizes chosen at run time.
///
/// x: [B][N][d_in] or [N][d_in]; output [B][N][d_out] (or [N][d_out]).
/// Errors (std::invalid_argument, message names the sizes): zero d_in, d_out
/// or context_length; input rank not 2 or 3, last extent != d_in, N == 0 or
/// N > context_length, batch 0, wrong output shape, weights of a wrong shape,
/// dropout outside [0, 1] in training.
template <class T>
class causal_attention : public detail::dynamic_module<causal_attention<T>, T> {
  friend class detail::dynamic_module<causal_attention<T>, T>;

 public:
  using value_type = T;

  causal_attention(std::size_t d_in, std::size_t d_out, std::size_t context_length,
                   bool qkv_bias = false)
      : w_query(d_in, d_out, qkv_bias),
        w_key(d_in, d_out, qkv_bias),
        w_value(d_in, d_out, qkv_bias),
        d_in_(d_in),
        d_out_(d_out),
        context_length_(check_context(context_length)),
        qkv_bias_(qkv_bias) {}

  linear<T> w_query;  ///< weight [d_out][d_in]
  linear<T> w_key;    ///< weight [d_out][d_in]
  linear<T> w_value;  ///< weight [d_out][d_in]
  T dropout = T(0);   ///< dropout probability (training only)

  std::size_t d_in() const noexcept { return d_in_; }
  std::size_t d_out() const noexcept { return d_out_; }
  std::size_t context_length() const noexcept { return context_length_; }
  std::size_t num_heads() const noexcept { return 1; }
  std::size_t head_dim() const noexcept { return d_out_; }
  std::size_t output_width() const noexcept { return d_out_; }
  bool qkv_bias() const noexcept { return qkv_bias_; }
  std::size_t parameter_count() const noexcept {
    return w_query.parameter_count() + w_key.parameter_count() + w_value.parameter_count();
  }

  // forward(x), operator()(x), forward(x, out), forward(x, out, ws),
  // forward_training(x, seed), forward_training(x, out, seed) and
  // forward_training(x, out, ws, seed) come from detail::dynamic_module.

  /// Building block shared with multi_head_attention_wrapper: attention of
  /// x [batch][tokens][d_in] written to `out_base` at element offset
  /// `out_offset` with row stride `out_row_stride` (batch stride tokens *
  /// out_row_stride). `head_index` selects the dropout stream.
  void forward_block(const T* x, std::size_t batch, std::size_t tokens, T* out_base,
                     std::size_t out_offset, std::size_t out_row_stride, workspace<T>& ws,
                     bool training, std::uint64_t seed, std::size_t head_index) const {
    constexpr const char* api = "mha::dynamic::causal_attention";
    if (training) detail::check_dynamic_dropout(api, dropout);
    detail::check_dynamic_linear(api, "w_query", w_query, d_in_, d_out_, qkv_bias_);
    detail::check_dynamic_linear(api, "w_key", w_key, d_in_, d_out_, qkv_bias_);
    detail::check_dynamic_linear(api, "w_value", w_value, d_in_, d_out_, qkv_bias_);
    const std::size_t rows = batch * tokens;
    ws.reserve_for(rows * d_out_, tokens);
    w_query.apply_rows(x, rows, ws.query.data());
    w_value.apply_rows(x, rows, ws.value.data());
    // ws.key holds K transposed, [batch][d_out][tokens] (the fixed twin's fast path).
    w_key.check_parameters();
    detail::linear_rows_kt(x, batch, tokens, d_in_, w_key.weight.data(),
                           qkv_bias_ ? w_key.bias.data() : nullptr, d_out_, ws.key.data());
    const std::size_t stride = tokens * d_out_;
    using cview = detail::runtime_view<const T>;
    detail::causal_attention_head_kt(
        cview{ws.query.data(), 0, stride, d_out_}, cview{ws.key.data(), 0, stride, tokens},
        cview{ws.value.data(), 0, stride, d_out_},
        detail::runtime_view<T>{out_base, out_offset, tokens * out_row_stride, out_row_stride},
        batch, tokens, d_out_, static_cast<T>(std::sqrt(static_cast<T>(d_out_))),
        detail::dropout_state<T>::make(dropout, seed, training), head_index, ws.scores.data());
  }

 private:
  void run(const tensor<T>& x, tensor<T>& out, workspace<T>& ws, bool training,
           std::uint64_t seed) const {
    const auto s =
        detail::check_dynamic_input("mha::dynamic::causal_attention", x, d_in_, context_length_);
    detail::check_dynamic_output("mha::dynamic::causal_attention", x, out, d_out_);
    forward_block(x.data(), s.batch, s.tokens, out.data(), 0, d_out_, ws, training, seed, 0);
  }
  static std::size_t check_context(std::size_t context_length) {
    if (context_length == 0)
      throw std::invalid_argument("mha::dynamic::causal_attention: context_length must be greater than 0");
    return context_length;
  }

  std::size_t d_in_, d_out_, context_length_;
  bool qkv_bias_;
};

}  // namespace mha::dynamic
