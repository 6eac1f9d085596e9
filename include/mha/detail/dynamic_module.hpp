// mha/detail/dynamic_module.hpp -- the forward() overload set shared by the
// mha::dynamic attention modules.
#pragma once

#include <cstdint>

#include <mha/dynamic/tensor.hpp>
#include <mha/dynamic/workspace.hpp>

namespace mha::detail {

/// CRTP base of mha::dynamic::{causal_attention, multi_head_attention_wrapper,
/// multi_head_attention}: the public forward overloads, written once. Derived
/// provides `output_width()` and a private `run(x, out, ws, training, seed)`
/// (which validates shapes and throws std::invalid_argument) and befriends
/// this base.
template <class Derived, class T>
class dynamic_module {
 public:
  /// Inference forward: [B][N][d_in] (or [N][d_in]) -> [B][N][output_width()].
  dynamic::tensor<T> forward(const dynamic::tensor<T>& x) const {
    dynamic::workspace<T> ws;
    return forward_new(x, ws, false, 0);
  }
  /// Same as forward(x) (PyTorch's module(x)).
  dynamic::tensor<T> operator()(const dynamic::tensor<T>& x) const { return forward(x); }
  /// Inference forward into `out` (shape of x with last extent output_width())
  /// with a temporary workspace (allocates).
  void forward(const dynamic::tensor<T>& x, dynamic::tensor<T>& out) const {
    dynamic::workspace<T> ws;
    self().run(x, out, ws, false, 0);
  }
  /// Inference forward into `out`, reusing `ws`: no allocation once `ws` has
  /// grown to the largest shape seen.
  void forward(const dynamic::tensor<T>& x, dynamic::tensor<T>& out,
               dynamic::workspace<T>& ws) const {
    self().run(x, out, ws, false, 0);
  }
  /// Training-mode forward: dropout (each module's `dropout`, checked in
  /// [0, 1]) on the attention weights, kept weights scaled by 1/(1-p); the
  /// same mask as the fixed-size twin for the same seed.
  dynamic::tensor<T> forward_training(const dynamic::tensor<T>& x, std::uint64_t seed) const {
    dynamic::workspace<T> ws;
    return forward_new(x, ws, true, seed);
  }
  /// Training-mode forward into `out` with a temporary workspace (allocates).
  void forward_training(const dynamic::tensor<T>& x, dynamic::tensor<T>& out,
                        std::uint64_t seed) const {
    dynamic::workspace<T> ws;
    self().run(x, out, ws, true, seed);
  }
  /// Training-mode forward into `out`, reusing `ws`.
  void forward_training(const dynamic::tensor<T>& x, dynamic::tensor<T>& out,
                        dynamic::workspace<T>& ws, std::uint64_t seed) const {
    self().run(x, out, ws, true, seed);
  }

 private:
  const Derived& self() const noexcept { return static_cast<const Derived&>(*this); }
  dynamic::tensor<T> forward_new(const dynamic::tensor<T>& x, dynamic::workspace<T>& ws,
                                 bool training, std::uint64_t seed) const {
    auto shape = x.shape();
    shape.back() = self().output_width();
    dynamic::tensor<T> out(shape);
    self().run(x, out, ws, training, seed);
    return out;
  }
};

}  // namespace mha::detail
