// benchmark/eigen_impl.hpp -- the book's MultiHeadAttention with Eigen
// matrices: fixed-size Eigen types for the small shapes (both extents <= 32),
// dynamic ones otherwise. Per sequence: Q, K, V = X W^T; per head the N x N
// scores, masked row-wise softmax, context block; then out_proj. This is the
// straightforward Eigen formulation (dense scores, masked entries set to 0).
#pragma once

#include <cmath>
#include <cstddef>
#include <type_traits>
#include <vector>

#include <Eigen/Dense>

#include "common.hpp"

namespace bench {

/// Eigen matrix type of R x C floats, row-major like the other implementations.
template <int R, int C>
using eigen_mat = std::conditional_t<
    (R <= 32 && C <= 32),
    Eigen::Matrix<float, R, C, (C == 1 && R != 1) ? Eigen::ColMajor : Eigen::RowMajor>,
    Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

template <int B, int N, int DIn, int D, int H>
class eigen_runner final : public runner {
  static constexpr int HD = D / H;
  using mat_nd = eigen_mat<N, D>;
  using mat_ni = eigen_mat<N, DIn>;
  using mat_di = eigen_mat<D, DIn>;
  using mat_dd = eigen_mat<D, D>;
  using mat_nn = eigen_mat<N, N>;

 public:
  eigen_runner(const weights& w, const std::vector<float>& x)
      : x_(x), wq_(D, DIn), wk_(D, DIn), wv_(D, DIn), wo_(D, D), bo_(D),
        q_(N, D), k_(N, D), v_(N, D), c_(N, D), s_(N, N), out_(std::size_t(B) * N * D) {
    wq_ = Eigen::Map<const mat_di>(w.w_query.data(), D, DIn);
    wk_ = Eigen::Map<const mat_di>(w.w_key.data(), D, DIn);
    wv_ = Eigen::Map<const mat_di>(w.w_value.data(), D, DIn);
    wo_ = Eigen::Map<const mat_dd>(w.w_out.data(), D, D);
    for (int i = 0; i < D; ++i) bo_(i) = w.b_out[std::size_t(i)];
  }

  void run() override {
    const float divisor = std::sqrt(static_cast<float>(HD));
    for (int b = 0; b < B; ++b) {
      Eigen::Map<const mat_ni> xb(x_.data() + std::size_t(b) * N * DIn, N, DIn);
      Eigen::Map<mat_nd> ob(out_.data() + std::size_t(b) * N * D, N, D);
      q_.noalias() = xb * wq_.transpose();
      k_.noalias() = xb * wk_.transpose();
      v_.noalias() = xb * wv_.transpose();
      for (int h = 0; h < H; ++h) {
        s_.noalias() = q_.template middleCols<HD>(h * HD) * k_.template middleCols<HD>(h * HD).transpose();
        s_ /= divisor;
        for (int i = 0; i < N; ++i) {
          auto row = s_.row(i).head(i + 1);
          const float m = row.maxCoeff();
          row = (row.array() - m).exp().matrix();
          row /= row.sum();
          s_.row(i).tail(N - 1 - i).setZero();
        }
        c_.template middleCols<HD>(h * HD).noalias() = s_ * v_.template middleCols<HD>(h * HD);
      }
      ob.noalias() = c_ * wo_.transpose();
      ob.rowwise() += bo_.transpose();
    }
  }

  std::vector<float> output() override { return out_; }

 private:
  std::vector<float> x_;
  mat_di wq_, wk_, wv_;
  mat_dd wo_;
  Eigen::Matrix<float, D, 1> bo_;
  mat_nd q_, k_, v_, c_;
  mat_nn s_;
  std::vector<float> out_;
};

}  // namespace bench
