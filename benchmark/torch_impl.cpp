// benchmark/torch_impl.cpp -- the book's MultiHeadAttention (Raschka, section
// 3.6.2) written with torch ops, as a libtorch user would.
#include "torch_impl.hpp"

#include <cmath>
#include <limits>

#include <torch/torch.h>

namespace bench {
namespace {

torch::Tensor from(const std::vector<float>& v, std::vector<std::int64_t> shape) {
  return torch::from_blob(const_cast<float*>(v.data()), shape, torch::kFloat32).clone();
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
    w_query_->weight.copy_(from(w.w_query, {d_, din_}));
    w_key_->weight.copy_(from(w.w_key, {d_, din_}));
    w_value_->weight.copy_(from(w.w_value, {d_, din_}));
    out_proj_->weight.copy_(from(w.w_out, {d_, d_}));
    out_proj_->bias.copy_(from(w.b_out, {d_}));
    for (auto* m : {&w_query_, &w_key_, &w_value_, &out_proj_}) (*m)->eval();
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

}  // namespace

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
