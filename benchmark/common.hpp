// benchmark/common.hpp -- configurations, weights, FLOP counts and the
// cross-check helpers shared by the benchmark implementations.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace bench {

/// One benchmark configuration: batch, tokens N, d_in, d_out, heads.
struct config {
  const char* name;
  std::size_t batch, tokens, d_in, d_out, heads;
  std::size_t head_dim() const { return d_out / heads; }
  /// Multiply-adds counted as 2 FLOP. Projections: Q, K, V (3 * 2*B*N*d_in*d_out)
  /// and out_proj (2*B*N*d_out*d_out). Attention: Q K^T and A V, each
  /// 2 * head_dim per (query, key) pair per head. Softmax, scaling and bias
  /// additions are not counted.
  double projection_flops() const {
    const double rows = double(batch * tokens);
    return 3.0 * 2.0 * rows * double(d_in) * double(d_out) + 2.0 * rows * double(d_out) * double(d_out);
  }
  /// Dense-equivalent FLOP: every one of the N*N (query, key) pairs.
  double dense_flops() const {
    return projection_flops() +
           2.0 * 2.0 * double(batch * heads) * double(tokens) * double(tokens) * double(head_dim());
  }
  /// Causal-useful FLOP: only the N(N+1)/2 unmasked pairs (key j <= query i).
  double causal_flops() const {
    return projection_flops() + 2.0 * 2.0 * double(batch * heads) *
                                    (double(tokens) * double(tokens + 1) / 2.0) * double(head_dim());
  }
};

/// Weights of the book's MultiHeadAttention in PyTorch layout (no qkv bias,
/// out_proj with bias), drawn like torch.nn.Linear's default initialisation
/// (uniform in +-1/sqrt(fan_in)) from a fixed seed.
struct weights {
  std::size_t d_in = 0, d_out = 0, heads = 0;
  std::vector<float> w_query, w_key, w_value;  ///< [d_out][d_in]
  std::vector<float> w_out, b_out;             ///< [d_out][d_out], [d_out]
};

inline weights make_weights(const config& c, std::uint32_t seed = 123) {
  std::mt19937 gen(seed);
  const auto fill = [&](std::size_t n, std::size_t fan_in) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
    std::uniform_real_distribution<float> u(-bound, bound);
    std::vector<float> v(n);
    for (auto& e : v) e = u(gen);
    return v;
  };
  weights w;
  w.d_in = c.d_in;
  w.d_out = c.d_out;
  w.heads = c.heads;
  w.w_query = fill(c.d_out * c.d_in, c.d_in);
  w.w_key = fill(c.d_out * c.d_in, c.d_in);
  w.w_value = fill(c.d_out * c.d_in, c.d_in);
  w.w_out = fill(c.d_out * c.d_out, c.d_out);
  w.b_out = fill(c.d_out, c.d_out);
  return w;
}

/// Input x [batch][tokens][d_in], uniform in [-1, 1).
inline std::vector<float> make_input(const config& c, std::uint32_t seed = 7) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(c.batch * c.tokens * c.d_in);
  for (auto& e : x) e = u(gen);
  return x;
}

/// max_i |a_i - b_i| / max_i |b_i|: the largest difference relative to the
/// output's scale (element-wise ratios blow up at outputs near zero).
inline double max_rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(double(a[i]) - double(b[i])));
    scale = std::max(scale, std::abs(double(b[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

/// A benchmarked implementation: run() is one forward pass over the fixed
/// input into a preallocated output; output() copies it out.
struct runner {
  virtual ~runner() = default;
  virtual void run() = 0;
  virtual std::vector<float> output() = 0;
};

/// A benchmarked KV-cached decode step: step() computes the output of one new
/// token at position `cached` against a cache already holding `cached` tokens,
/// then rolls the cache back to `cached` tokens, so every step() does the same
/// work; output() copies the last step's output [batch][1][d_out] out.
struct decode_runner {
  virtual ~decode_runner() = default;
  virtual void step() = 0;
  virtual std::vector<float> output() = 0;
};

}  // namespace bench
