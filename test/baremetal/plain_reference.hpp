// plain_reference.hpp -- a plain-loops reference of multi_head_attention's
// inference forward for the bare-metal programs: the book's math (section
// 3.6.2) written the straightforward way, scalar loops over rows, features
// and keys, std::exp of the C library (newlib's expf), no SIMD, no tiling.
// It is the baseline of the instruction counts (kernels / plain loops,
// docs/embedded.md) and an independent check of the kernels' results (a
// different summation order and exp, so equal within a tolerance, not in bits).
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>

namespace plain {

/// Intermediates for B sequences of N tokens of a model with output width D:
/// Q, K, V and the concatenated context [B*N][D], and the attention weights of
/// one query.
template <std::size_t B, std::size_t N, std::size_t D>
struct workspace {
  float q[B * N * D];
  float k[B * N * D];
  float v[B * N * D];
  float ctx[B * N * D];
  float p[N];
};

/// out [B][N][d_out] = multi_head_attention forward of x [B][N][d_in] (causal,
/// no dropout, no qkv bias), weights in nn.Linear's [out][in] layout.
template <std::size_t B, std::size_t N, class Model>
void forward(const Model& m, const float* x, float* out,
             workspace<B, N, Model::d_out>& ws) noexcept {
  constexpr std::size_t din = Model::d_in, dout = Model::d_out, heads = Model::num_heads,
                        hd = Model::head_dim;
  const float* wq = m.w_query.weight.data();
  const float* wk = m.w_key.weight.data();
  const float* wv = m.w_value.weight.data();
  const float* wo = m.out_proj.weight.data();
  const float* bo = m.out_proj.bias.data();
  // (folded at compile time)
  const float scale = std::sqrt(static_cast<float>(hd));

  // Q, K, V = x W^T
  for (std::size_t r = 0; r < B * N; ++r)
    for (std::size_t o = 0; o < dout; ++o) {
      float aq = 0, ak = 0, av = 0;
      for (std::size_t c = 0; c < din; ++c) {
        aq += x[r * din + c] * wq[o * din + c];
        ak += x[r * din + c] * wk[o * din + c];
        av += x[r * din + c] * wv[o * din + c];
      }
      ws.q[r * dout + o] = aq;
      ws.k[r * dout + o] = ak;
      ws.v[r * dout + o] = av;
    }
  // per sequence, head and query: softmax over the keys j <= i, then the
  // weighted sum of the values
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < heads; ++h)
      for (std::size_t i = 0; i < N; ++i) {
        const float* qi = ws.q + (b * N + i) * dout + h * hd;
        float mx = -std::numeric_limits<float>::infinity();
        for (std::size_t j = 0; j <= i; ++j) {
          const float* kj = ws.k + (b * N + j) * dout + h * hd;
          float s = 0;
          for (std::size_t d = 0; d < hd; ++d) s += qi[d] * kj[d];
          s /= scale;
          ws.p[j] = s;
          if (s > mx) mx = s;
        }
        float sum = 0;
        for (std::size_t j = 0; j <= i; ++j) {
          ws.p[j] = std::exp(ws.p[j] - mx);
          sum += ws.p[j];
        }
        for (std::size_t d = 0; d < hd; ++d) {
          float a = 0;
          for (std::size_t j = 0; j <= i; ++j) a += ws.p[j] * ws.v[(b * N + j) * dout + h * hd + d];
          ws.ctx[(b * N + i) * dout + h * hd + d] = a / sum;
        }
      }
  // out = ctx out_proj.weight^T + out_proj.bias
  for (std::size_t r = 0; r < B * N; ++r)
    for (std::size_t o = 0; o < dout; ++o) {
      float a = 0;
      for (std::size_t c = 0; c < dout; ++c) a += ws.ctx[r * dout + c] * wo[o * dout + c];
      out[r * dout + o] = a + bo[o];
    }
}

}  // namespace plain
