// mha/dynamic/multi_head_attention.hpp -- MultiHeadAttention with run-time sizes.
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

/// The runtime-sized twin of mha::multi_head_attention (book section 3.6.2):
/// one W_query/W_key/W_value product for all heads, head h reading columns
/// [h*head_dim, (h+1)*head_dim) through runtime-strided views (a run-time loop
/// over heads here), writing its block of the context, then out_proj. Same
/// members (`w_query`, `w_key`, `w_value`, `out_proj`, `dropout`) and the same
/// arithmetic in the same order as the fixed-size version.
///
/// Errors (std::invalid_argument, naming the sizes): num_heads == 0, d_out not
/// divisible by num_heads, zero sizes, and the input/output/weight shape
/// errors of causal_attention.
template <class T>
class multi_head_attention : public detail::dynamic_module<multi_head_attention<T>, T> {
  friend class detail::dynamic_module<multi_head_attention<T>, T>;

 public:
  using value_type = T;

  multi_head_attention(std::size_t d_in, std::size_t d_out, std::size_t context_length,
                       std::size_t num_heads, bool qkv_bias = false)
      : w_query(d_in, check(d_out, context_length, num_heads), qkv_bias),
        w_key(d_in, d_out, qkv_bias),
        w_value(d_in, d_out, qkv_bias),
        out_proj(d_out, d_out, true),
        d_in_(d_in),
        d_out_(d_out),
        context_length_(context_length),
        num_heads_(num_heads),
        qkv_bias_(qkv_bias) {}

  linear<T> w_query;   ///< weight [d_out][d_in]
  linear<T> w_key;     ///< weight [d_out][d_in]
  linear<T> w_value;   ///< weight [d_out][d_in]
  linear<T> out_proj;  ///< weight [d_out][d_out], bias [d_out]
  T dropout = T(0);    ///< dropout probability (training only)

  std::size_t d_in() const noexcept { return d_in_; }
  std::size_t d_out() const noexcept { return d_out_; }
  std::size_t context_length() const noexcept { return context_length_; }
  std::size_t num_heads() const noexcept { return num_heads_; }
  std::size_t head_dim() const noexcept { return d_out_ / num_heads_; }
  std::size_t output_width() const noexcept { return d_out_; }
  bool qkv_bias() const noexcept { return qkv_bias_; }
  std::size_t parameter_count() const noexcept {
    return w_query.parameter_count() + w_key.parameter_count() + w_value.parameter_count() +
           out_proj.parameter_count();
  }

  // forward(x), operator()(x), forward(x, out), forward(x, out, ws),
  // forward_training(x, seed), forward_training(x, out, seed) and
  // forward_training(x, out, ws, seed) come from detail::dynamic_module.

 private:
  static constexpr const char* api = "mha::dynamic::multi_head_attention";

  static std::size_t check(std::size_t d_out, std::size_t context_length, std::size_t num_heads) {
    if (num_heads == 0)
      throw std::invalid_argument(std::string(api) + ": num_heads must be greater than 0");
    if (d_out % num_heads != 0)
      throw std::invalid_argument(std::string(api) + ": d_out (" + std::to_string(d_out) +
                                  ") must be divisible by num_heads (" + std::to_string(num_heads) +
                                  ")");
    if (context_length == 0)
      throw std::invalid_argument(std::string(api) + ": context_length must be greater than 0");
    return d_out;
  }
  void run(const tensor<T>& x, tensor<T>& out, workspace<T>& ws, bool training,
           std::uint64_t seed) const {
    const auto s = detail::check_dynamic_input(api, x, d_in_, context_length_);
    detail::check_dynamic_output(api, x, out, d_out_);
    if (training) detail::check_dynamic_dropout(api, dropout);
    detail::check_dynamic_linear(api, "w_query", w_query, d_in_, d_out_, qkv_bias_);
    detail::check_dynamic_linear(api, "w_key", w_key, d_in_, d_out_, qkv_bias_);
    detail::check_dynamic_linear(api, "w_value", w_value, d_in_, d_out_, qkv_bias_);
    detail::check_dynamic_linear(api, "out_proj", out_proj, d_out_, d_out_, true);
    const std::size_t rows = s.batch * s.tokens;
    ws.reserve_for(rows * d_out_, s.tokens);
    w_query.apply_rows(x.data(), rows, ws.query.data());
    w_value.apply_rows(x.data(), rows, ws.value.data());
    // ws.key holds K transposed, [batch][d_out][tokens] (the fixed twin's fast path);
    // head h's keys are its rows [h*head_dim, (h+1)*head_dim).
    w_key.check_parameters();
    detail::linear_rows_kt(x.data(), s.batch, s.tokens, d_in_, w_key.weight.data(),
                           qkv_bias_ ? w_key.bias.data() : nullptr, d_out_, ws.key.data());
    const std::size_t hd = head_dim();
    const std::size_t stride = s.tokens * d_out_;
    const T divisor = static_cast<T>(std::sqrt(static_cast<T>(hd)));
    const auto drop = detail::dropout_state<T>::make(dropout, seed, training);
    using cview = detail::runtime_view<const T>;
    for (std::size_t h = 0; h < num_heads_; ++h) {
      const std::size_t off = h * hd;
      detail::causal_attention_head_kt(cview{ws.query.data(), off, stride, d_out_},
                                       cview{ws.key.data(), off * s.tokens, stride, s.tokens},
                                       cview{ws.value.data(), off, stride, d_out_},
                                       detail::runtime_view<T>{ws.context.data(), off, stride, d_out_},
                                       s.batch, s.tokens, hd, divisor, drop, h, ws.scores.data());
    }
    out_proj.apply_rows(ws.context.data(), rows, out.data());
  }

  std::size_t d_in_, d_out_, context_length_, num_heads_;
  bool qkv_bias_;
};

}  // namespace mha::dynamic
