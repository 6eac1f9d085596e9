// benchmark/torch_impl.cpp -- the book's MultiHeadAttention (Raschka, section
// 3.6.2) and its Llama GroupedQueryAttention (ch05/07_gpt_to_llama) written
// with torch ops, as a libtorch user would.
#include "torch_impl.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <torch/torch.h>

namespace bench {
namespace {

/// A float tensor of the given shape holding a copy of v.
torch::Tensor from(const std::vector<float>& v, std::vector<std::int64_t> shape) {
  return torch::from_blob(const_cast<float*>(v.data()), shape, torch::kFloat32).clone();
}

/// Copies the weights into the four Linear modules and puts them in eval mode.
void load(const weights& w, torch::nn::Linear& w_query, torch::nn::Linear& w_key,
          torch::nn::Linear& w_value, torch::nn::Linear& out_proj) {
  torch::NoGradGuard no_grad;
  const auto din = static_cast<std::int64_t>(w.d_in), d = static_cast<std::int64_t>(w.d_out);
  w_query->weight.copy_(from(w.w_query, {d, din}));
  w_key->weight.copy_(from(w.w_key, {d, din}));
  w_value->weight.copy_(from(w.w_value, {d, din}));
  out_proj->weight.copy_(from(w.w_out, {d, d}));
  out_proj->bias.copy_(from(w.b_out, {d}));
  for (auto* m : {&w_query, &w_key, &w_value, &out_proj}) (*m)->eval();
}

class torch_runner final : public runner {
 public:
  torch_runner(const config& c, const weights& w, const std::vector<float>& x)
      : b_(static_cast<std::int64_t>(c.batch)),
        n_(static_cast<std::int64_t>(c.tokens)),
        din_(static_cast<std::int64_t>(c.d_in)),
        d_(static_cast<std::int64_t>(c.d_out)),
        h_(static_cast<std::int64_t>(c.heads)),
        hd_(d_ / h_),
        w_query_(torch::nn::LinearOptions(din_, d_).bias(false)),
        w_key_(torch::nn::LinearOptions(din_, d_).bias(false)),
        w_value_(torch::nn::LinearOptions(din_, d_).bias(false)),
        out_proj_(torch::nn::LinearOptions(d_, d_).bias(true)) {
    torch::NoGradGuard no_grad;
    load(w, w_query_, w_key_, w_value_, out_proj_);
    // register_buffer('mask', torch.triu(torch.ones(context_length, context_length), diagonal=1));
    // the bool view is taken once here instead of in every forward.
    mask_bool_ = torch::triu(torch::ones({n_, n_}), 1).to(torch::kBool);
    x_ = from(x, {b_, n_, din_});
  }

  void run() override {
    torch::NoGradGuard no_grad;
    auto keys = w_key_(x_);
    auto queries = w_query_(x_);
    auto values = w_value_(x_);
    keys = keys.view({b_, n_, h_, hd_}).transpose(1, 2);
    queries = queries.view({b_, n_, h_, hd_}).transpose(1, 2);
    values = values.view({b_, n_, h_, hd_}).transpose(1, 2);
    auto attn_scores = torch::matmul(queries, keys.transpose(2, 3));
    attn_scores.masked_fill_(mask_bool_, -std::numeric_limits<float>::infinity());
    auto attn_weights = torch::softmax(attn_scores / std::sqrt(static_cast<double>(hd_)), -1);
    // dropout: identity in eval mode
    auto context = torch::matmul(attn_weights, values).transpose(1, 2);
    context = context.contiguous().view({b_, n_, d_});
    out_ = out_proj_(context);
  }

  std::vector<float> output() override {
    auto o = out_.contiguous();
    const float* p = o.data_ptr<float>();
    return std::vector<float>(p, p + o.numel());
  }

 private:
  std::int64_t b_, n_, din_, d_, h_, hd_;
  torch::nn::Linear w_query_, w_key_, w_value_, out_proj_;
  torch::Tensor mask_bool_, x_, out_;
};

/// The book's MultiHeadAttention with a KV cache (LLMs-from-scratch
/// ch04/03_kv-cache, forward(x, use_cache=True)), except that the caches are
/// preallocated [B][H][context_length][head_dim] and written in place through
/// narrow().copy_() instead of growing by torch.cat.
class torch_decode_runner final : public decode_runner {
 public:
  torch_decode_runner(const config& c, const weights& w, const std::vector<float>& prefix,
                      std::size_t cached, const std::vector<float>& token)
      : b_(static_cast<std::int64_t>(c.batch)),
        ctx_(static_cast<std::int64_t>(std::max(c.tokens, cached + 1))),
        din_(static_cast<std::int64_t>(c.d_in)),
        d_(static_cast<std::int64_t>(c.d_out)),
        h_(static_cast<std::int64_t>(c.heads)),
        hd_(d_ / h_),
        cached_(static_cast<std::int64_t>(cached)),
        w_query_(torch::nn::LinearOptions(din_, d_).bias(false)),
        w_key_(torch::nn::LinearOptions(din_, d_).bias(false)),
        w_value_(torch::nn::LinearOptions(din_, d_).bias(false)),
        out_proj_(torch::nn::LinearOptions(d_, d_).bias(true)) {
    if (prefix.size() != c.batch * cached * c.d_in || token.size() != c.batch * c.d_in)
      throw std::invalid_argument("torch_decode_runner: prefix or token has the wrong size");
    torch::NoGradGuard no_grad;
    load(w, w_query_, w_key_, w_value_, out_proj_);
    mask_bool_ = torch::triu(torch::ones({ctx_, ctx_}), 1).to(torch::kBool);
    // register_buffer('cache_k', ...) preallocated instead of None + torch.cat.
    cache_k_ = torch::zeros({b_, h_, ctx_, hd_});
    cache_v_ = torch::zeros({b_, h_, ctx_, hd_});
    if (cached_ > 0) forward(from(prefix, {b_, cached_, din_}));  // cached prefill
    token_ = from(token, {b_, 1, din_});
  }

  void step() override {
    torch::NoGradGuard no_grad;
    out_ = forward(token_);
    cur_ = cached_;  // roll back: the next step overwrites the same slot
  }

  std::vector<float> output() override {
    auto o = out_.contiguous();
    const float* p = o.data_ptr<float>();
    return std::vector<float>(p, p + o.numel());
  }

 private:
  /// forward(x, use_cache=True) for x [B][n][d_in]: appends the n new keys and
  /// values at cur_ and attends over the valid slice 0..cur_+n.
  torch::Tensor forward(const torch::Tensor& x) {
    const std::int64_t n = x.size(1);
    auto keys_new = w_key_(x).view({b_, n, h_, hd_}).transpose(1, 2);
    auto values_new = w_value_(x).view({b_, n, h_, hd_}).transpose(1, 2);
    auto queries = w_query_(x).view({b_, n, h_, hd_}).transpose(1, 2);
    cache_k_.narrow(2, cur_, n).copy_(keys_new);
    cache_v_.narrow(2, cur_, n).copy_(values_new);
    cur_ += n;
    auto keys = cache_k_.narrow(2, 0, cur_);
    auto values = cache_v_.narrow(2, 0, cur_);
    auto attn_scores = torch::matmul(queries, keys.transpose(2, 3));
    if (n > 1) {
      // mask.bool()[ptr_current_pos:ptr_current_pos + num_tokens_Q, :num_tokens_K];
      // a single query sees every cached key and itself, so decode needs none.
      attn_scores.masked_fill_(mask_bool_.narrow(0, cur_ - n, n).narrow(1, 0, cur_),
                               -std::numeric_limits<float>::infinity());
    }
    auto attn_weights = torch::softmax(attn_scores / std::sqrt(static_cast<double>(hd_)), -1);
    // dropout: identity in eval mode
    auto context = torch::matmul(attn_weights, values).transpose(1, 2);
    context = context.contiguous().view({b_, n, d_});
    return out_proj_(context);
  }

  std::int64_t b_, ctx_, din_, d_, h_, hd_, cached_, cur_ = 0;
  torch::nn::Linear w_query_, w_key_, w_value_, out_proj_;
  torch::Tensor mask_bool_, cache_k_, cache_v_, token_, out_;
};

/// The book's Llama GroupedQueryAttention (LLMs-from-scratch
/// ch05/07_gpt_to_llama: compute_rope_params, apply_rope, GroupedQueryAttention)
/// used with a KV cache, batch 1: the new keys are rotated at their positions
/// and appended to preallocated caches [1][kv_heads][context][head_dim]
/// (narrow().copy_(), no torch.cat), and the keys and values are not
/// repeat_interleave'd to the query heads: the query heads of each group are
/// viewed as rows against their key/value head (see forward()).
class torch_gqa_decode_runner final : public decode_runner {
 public:
  /// Copies the weights in, builds the RoPE tables and the empty caches,
  /// runs the cached prefill of `prefix` (`cached` tokens) and keeps `token`.
  torch_gqa_decode_runner(const gqa_weights& w, const std::vector<float>& prefix,
                          std::size_t cached, const std::vector<float>& token)
      : din_(static_cast<std::int64_t>(w.d_in)),
        d_(static_cast<std::int64_t>(w.d_out)),
        h_(static_cast<std::int64_t>(w.heads)),
        kv_(static_cast<std::int64_t>(w.kv_heads)),
        hd_(h_ > 0 ? d_ / h_ : 0),
        group_(kv_ > 0 ? h_ / kv_ : 0),
        ctx_(static_cast<std::int64_t>(w.context)),
        cached_(static_cast<std::int64_t>(cached)),
        w_query_(torch::nn::LinearOptions(din_, d_).bias(false)),
        w_key_(torch::nn::LinearOptions(din_, kv_ * hd_).bias(false)),
        w_value_(torch::nn::LinearOptions(din_, kv_ * hd_).bias(false)),
        out_proj_(torch::nn::LinearOptions(d_, d_).bias(true)) {
    if (h_ == 0 || kv_ == 0 || d_ % h_ != 0 || h_ % kv_ != 0 || hd_ % 2 != 0 ||
        cached_ + 1 > ctx_)
      throw std::invalid_argument("torch_gqa_decode_runner: inconsistent shape");
    const auto kvd = static_cast<std::size_t>(kv_ * hd_);
    if (w.w_query.size() != w.d_out * w.d_in || w.w_key.size() != kvd * w.d_in ||
        w.w_value.size() != kvd * w.d_in || w.w_out.size() != w.d_out * w.d_out ||
        w.b_out.size() != w.d_out || prefix.size() != cached * w.d_in || token.size() != w.d_in)
      throw std::invalid_argument("torch_gqa_decode_runner: a weight, prefix or token has the wrong size");
    torch::NoGradGuard no_grad;
    w_query_->weight.copy_(from(w.w_query, {d_, din_}));
    w_key_->weight.copy_(from(w.w_key, {kv_ * hd_, din_}));
    w_value_->weight.copy_(from(w.w_value, {kv_ * hd_, din_}));
    out_proj_->weight.copy_(from(w.w_out, {d_, d_}));
    out_proj_->bias.copy_(from(w.b_out, {d_}));
    for (auto* m : {&w_query_, &w_key_, &w_value_, &out_proj_}) (*m)->eval();
    // compute_rope_params(head_dim, theta_base, context_length), float32:
    // inv_freq = 1 / theta_base ** (arange(0, head_dim, 2)[:head_dim // 2].float() / head_dim)
    auto inv_freq = 1.0 / torch::pow(w.theta_base,
                                     torch::arange(0, hd_, 2).slice(0, 0, hd_ / 2).to(torch::kFloat32) /
                                         static_cast<double>(hd_));
    auto angles = torch::arange(ctx_).to(torch::kFloat32).unsqueeze(1) * inv_freq.unsqueeze(0);
    angles = torch::cat({angles, angles}, 1);  // [context][head_dim]
    cos_ = torch::cos(angles);
    sin_ = torch::sin(angles);
    mask_bool_ = torch::triu(torch::ones({ctx_, ctx_}), 1).to(torch::kBool);
    cache_k_ = torch::zeros({1, kv_, ctx_, hd_});
    cache_v_ = torch::zeros({1, kv_, ctx_, hd_});
    if (cached_ > 0) forward(from(prefix, {1, cached_, din_}));  // cached prefill
    token_ = from(token, {1, 1, din_});
  }

  /// Decodes the token at position `cached`, then rolls the cache back.
  void step() override {
    torch::NoGradGuard no_grad;
    out_ = forward(token_);
    cur_ = cached_;  // roll back: the next step overwrites the same slot
  }

  /// The last step's output row [1][1][d_out].
  std::vector<float> output() override {
    auto o = out_.contiguous();
    const float* p = o.data_ptr<float>();
    return std::vector<float>(p, p + o.numel());
  }

 private:
  /// apply_rope(x, cos, sin) for x [1][heads][n][head_dim] whose n rows sit at
  /// positions first .. first + n - 1: x * cos + rotate_half(x) * sin.
  torch::Tensor apply_rope(const torch::Tensor& x, std::int64_t first) const {
    const std::int64_t n = x.size(2), half = hd_ / 2;
    auto rotated = torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
    return x * cos_.narrow(0, first, n) + rotated * sin_.narrow(0, first, n);
  }

  /// forward(x) with the cache for x [1][n][d_in]: projects, rotates the
  /// queries and the n new keys at positions cur_ .. cur_ + n - 1, appends
  /// the new keys and values at cur_ and attends over the valid slice
  /// 0 .. cur_ + n.
  torch::Tensor forward(const torch::Tensor& x) {
    const std::int64_t n = x.size(1);
    auto queries = w_query_(x).view({1, n, h_, hd_}).transpose(1, 2);      // [1][H][n][hd]
    auto keys_new = w_key_(x).view({1, n, kv_, hd_}).transpose(1, 2);      // [1][KV][n][hd]
    auto values_new = w_value_(x).view({1, n, kv_, hd_}).transpose(1, 2);  // [1][KV][n][hd]
    queries = apply_rope(queries, cur_);
    keys_new = apply_rope(keys_new, cur_);
    cache_k_.narrow(2, cur_, n).copy_(keys_new);
    cache_v_.narrow(2, cur_, n).copy_(values_new);
    cur_ += n;
    auto keys = cache_k_.narrow(2, 0, cur_);    // [1][KV][cur][hd], a view of the cache
    auto values = cache_v_.narrow(2, 0, cur_);  // [1][KV][cur][hd]
    // Instead of the book's keys.repeat_interleave(group_size, dim=1) (a copy
    // of the whole cache per step), this is the grouped form: query head h
    // belongs to key/value head h / group_size, so the queries [1][H][n][hd]
    // reshaped to [1][KV][group_size * n][hd] (for a decode step, n = 1, the
    // view [KV][group_size][hd] of the same memory) multiply each key/value
    // head's keys^T [hd][cur] once, in one batched matmul over the KV heads.
    auto grouped = queries.reshape({1, kv_, group_ * n, hd_});
    auto attn_scores = torch::matmul(grouped, keys.transpose(2, 3));  // [1][KV][group*n][cur]
    if (n > 1) {
      // mask[cur - n : cur, :cur] over each group's [n][cur] block; a single
      // query sees every cached key and itself, so decode needs none.
      attn_scores.view({1, kv_, group_, n, cur_})
          .masked_fill_(mask_bool_.narrow(0, cur_ - n, n).narrow(1, 0, cur_),
                        -std::numeric_limits<float>::infinity());
    }
    auto attn_weights = torch::softmax(attn_scores / std::sqrt(static_cast<double>(hd_)), -1);
    // [1][KV][group*n][hd] -> [1][H][n][hd] -> [1][n][H][hd] -> [1][n][d_out]
    auto context = torch::matmul(attn_weights, values).view({1, h_, n, hd_}).transpose(1, 2);
    context = context.contiguous().view({1, n, d_});
    return out_proj_(context);
  }

  std::int64_t din_, d_, h_, kv_, hd_, group_, ctx_, cached_, cur_ = 0;
  torch::nn::Linear w_query_, w_key_, w_value_, out_proj_;
  torch::Tensor cos_, sin_, mask_bool_, cache_k_, cache_v_, token_, out_;
};

}  // namespace

std::unique_ptr<decode_runner> make_torch_gqa_decode_runner(const gqa_weights& w,
                                                            const std::vector<float>& prefix,
                                                            std::size_t cached,
                                                            const std::vector<float>& token) {
  return std::make_unique<torch_gqa_decode_runner>(w, prefix, cached, token);
}

std::unique_ptr<decode_runner> make_torch_decode_runner(const config& c, const weights& w,
                                                        const std::vector<float>& prefix,
                                                        std::size_t cached,
                                                        const std::vector<float>& token) {
  return std::make_unique<torch_decode_runner>(c, w, prefix, cached, token);
}

std::unique_ptr<runner> make_torch_runner(const config& c, const weights& w,
                                          const std::vector<float>& x) {
  return std::make_unique<torch_runner>(c, w, x);
}

void torch_single_thread() {
  at::set_num_threads(1);
  at::set_num_interop_threads(1);
}

std::string torch_version() { return TORCH_VERSION; }

}  // namespace bench
