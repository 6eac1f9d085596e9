// mha/detail/module_interface.hpp -- the forward() overload set shared by the
// fixed-size attention modules, with their compile-time shape contracts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <mha/config.hpp>
#include <mha/detail/contracts.hpp>
#include <mha/detail/dropout.hpp>
#include <mha/tensor.hpp>

namespace mha::detail {

/// Shape facts of an input tensor<U, E...>: rank 3 is [batch][tokens][features],
/// rank 2 is [tokens][features] (batch 1). Other ranks give zeros so that the
/// module's own static_assert, not an index error, is what the user sees.
template <std::size_t... E>
struct input_shape {
  static constexpr std::size_t nth(std::size_t i) noexcept {
    const std::size_t ext[] = {E..., 0, 0, 0};
    return ext[i];
  }
  static constexpr std::size_t rank = sizeof...(E);
  static constexpr bool rank_ok = rank == 2 || rank == 3;
  static constexpr std::size_t batch = rank == 3 ? nth(0) : 1;
  static constexpr std::size_t tokens = rank == 3 ? nth(1) : (rank == 2 ? nth(0) : 0);
  static constexpr std::size_t features = rank_ok ? nth(rank - 1) : 0;
};

/// input_shape of a tensor type.
template <class X>
struct shape_of;
template <class U, std::size_t... E>
struct shape_of<tensor<U, E...>> : input_shape<E...> {
  using element_type = U;
};

/// Inference or training mode of one forward call (training draws dropout
/// decisions from `seed`, see dropout_state).
struct forward_mode {
  bool training = false;
  std::uint64_t seed = 0;
};

/// Output tensor type for an input of shape E... and output width W.
template <class T, std::size_t W, std::size_t... E>
struct output_for {
  using S = input_shape<E...>;
  static constexpr std::size_t w = W > 0 ? W : 1;  // W == 0 was reported by the module
  using type = std::conditional_t<S::rank == 3, tensor<T, (S::batch > 0 ? S::batch : 1),
                                                       (S::tokens > 0 ? S::tokens : 1), w>,
                                  tensor<T, (S::tokens > 0 ? S::tokens : 1), w>>;
};

template <class T, std::size_t W, class X>
struct output_for_tensor;
template <class T, std::size_t W, class U, std::size_t... E>
struct output_for_tensor<T, W, tensor<U, E...>> : output_for<T, W, E...> {};
/// Output tensor type of a module of width W for the input tensor type X.
template <class T, std::size_t W, class X>
using output_for_t = typename output_for_tensor<T, W, X>::type;

}  // namespace mha::detail

// The overload set of forward() for a fixed-size module, with the module's name
// in every contract message. The module must provide value_type, d_in,
// context_length, output_width, `template <B, N> struct
// workspace`, `template <B, N> constexpr void run(const T* x, T* out,
// workspace<B, N>&, detail::forward_mode) const`, and
// `static constexpr bool parameters_valid_` (its own class-level contracts
// hold; when they do not, its static_asserts have already fired and run() is
// not instantiated, so no second error follows).
//
// Contract order (the first failing one is the first error the user sees):
// element type, rank, last extent == DIn, N <= ContextLength, then output
// shape, workspace shape and the stack limit. Each forward body runs only if
// all contracts hold (`if constexpr`), so a broken contract gives one error,
// not a cascade from run().
#define MHA_DETAIL_FORWARD_OVERLOADS(NAME)                                                          \
 private:                                                                                           \
  static constexpr bool parameters_valid_ =                                                         \
      (std::is_same_v<value_type, float> || std::is_same_v<value_type, double>) && d_in > 0 &&      \
      context_length > 0 && num_heads > 0 && head_dim > 0 && head_dim * num_heads == output_width;  \
  template <class X>                                                                                \
  static consteval bool check_input_() noexcept {                                                   \
    using S = ::mha::detail::shape_of<X>;                                                           \
    if constexpr (!parameters_valid_) return false; /* the class's own error came first */ else {    \
    static_assert(::mha::detail::same_element_type<typename S::element_type, value_type>,           \
                  "mha::" NAME "::forward: input element type must equal the module's T "          \
                  "(no implicit float/double conversion)");                                         \
    static_assert(::mha::detail::rank_is_2_or_3<S::rank>,                                           \
                  "mha::" NAME "::forward: input must have rank 3 [batch][tokens][d_in] or rank 2 " \
                  "[tokens][d_in]");                                                                \
    if constexpr (S::rank_ok) {                                                                     \
      static_assert(::mha::detail::equals<S::features, d_in>,                                       \
                    "mha::" NAME "::forward: input last extent must equal DIn");                    \
      static_assert(::mha::detail::at_most<S::tokens, context_length>,                              \
                    "mha::" NAME "::forward: token count N must not exceed ContextLength");         \
      return parameters_valid_ &&                                                                   \
             ::mha::detail::same_element_type<typename S::element_type, value_type> &&              \
             S::features == d_in && S::tokens <= context_length &&                                  \
             S::tokens > 0 && S::batch > 0; /* a zero extent: mha::tensor reported it */            \
    } else {                                                                                        \
      return false;                                                                                 \
    }                                                                                               \
    }                                                                                               \
  }                                                                                                 \
  template <class X, class Y>                                                                       \
  static consteval bool check_output_() noexcept {                                                  \
    if constexpr (!check_input_<X>()) {                                                             \
      return false;                                                                                 \
    } else {                                                                                        \
      using expected = ::mha::detail::output_for_t<value_type, output_width, X>;                    \
      static_assert(::mha::detail::same_tensor_type<Y, expected>,                                   \
                    "mha::" NAME "::forward: output must be a tensor<T, B, N, output_width> "      \
                    "(or <T, N, output_width> for a rank-2 input)");                                \
      return std::is_same_v<Y, expected>;                                                           \
    }                                                                                               \
  }                                                                                                 \
  template <class X, std::size_t WB, std::size_t WN>                                                \
  static consteval bool check_workspace_() noexcept {                                               \
    using S = ::mha::detail::shape_of<X>;                                                           \
    static_assert(::mha::detail::workspace_matches_input<WB, WN, S::batch, S::tokens>,              \
                  "mha::" NAME "::forward: workspace must be workspace<B, N> for the input's "     \
                  "batch B and token count N");                                                     \
    return WB == S::batch && WN == S::tokens;                                                       \
  }                                                                                                 \
  template <class U, std::size_t... E, class V, std::size_t... F>                                   \
  constexpr void forward_stack_(const tensor<U, E...>& x, tensor<V, F...>& out,                    \
                                ::mha::detail::forward_mode mode) const noexcept {                  \
    if constexpr (check_output_<tensor<U, E...>, tensor<V, F...>>()) {                              \
      using S = ::mha::detail::input_shape<E...>;                                                   \
      using ws_t = workspace<S::batch, S::tokens>;                                                  \
      static_assert(::mha::detail::at_most<sizeof(ws_t), MHA_STACK_WORKSPACE_LIMIT>,                \
                    "mha::" NAME "::forward: the workspace for this batch and token count "        \
                    "exceeds MHA_STACK_WORKSPACE_LIMIT bytes; pass a caller-owned workspace: "     \
                    "forward(x, out, ws)");                                                         \
      if constexpr (sizeof(ws_t) <= MHA_STACK_WORKSPACE_LIMIT) {                                    \
        ws_t ws;                                                                                    \
        run<S::batch, S::tokens>(x.data(), out.data(), ws, mode);                                   \
      }                                                                                             \
    }                                                                                               \
  }                                                                                                 \
                                                                                                    \
 public:                                                                                            \
  /** Inference forward (no dropout). x: [B][N][d_in] or [N][d_in], with      */                   \
  /** 1 <= N <= context_length (compile-time checked). Returns [B][N][output_ */                   \
  /** width] (or [N][output_width]). Intermediates live on the stack (bounded */                   \
  /** by MHA_STACK_WORKSPACE_LIMIT); no heap allocation.                      */                   \
  template <class U, std::size_t... E>                                                              \
  constexpr auto forward(const tensor<U, E...>& x) const noexcept {                                 \
    typename ::mha::detail::output_for<value_type, output_width, E...>::type out;                   \
    if constexpr (check_input_<tensor<U, E...>>())                                                  \
      forward_stack_(x, out, ::mha::detail::forward_mode{});                                        \
    return out;                                                                                     \
  }                                                                                                 \
  /** Same as forward(x) (PyTorch's module(x)). */                                                  \
  template <class U, std::size_t... E>                                                              \
  constexpr auto operator()(const tensor<U, E...>& x) const noexcept {                              \
    return forward(x);                                                                              \
  }                                                                                                 \
  /** Inference forward into a caller-provided `out` of the output shape. */                        \
  template <class U, std::size_t... E, class V, std::size_t... F>                                   \
  constexpr void forward(const tensor<U, E...>& x, tensor<V, F...>& out) const noexcept {           \
    forward_stack_(x, out, ::mha::detail::forward_mode{});                                          \
  }                                                                                                 \
  /** Inference forward with a caller-owned workspace `ws` (type             */                     \
  /** workspace<B, N>, e.g. in static storage or from std::make_unique), so   */                    \
  /** stack use is bounded by the shapes: one block of 6 score rows of N     */                    \
  /** elements plus one packed weight panel (at most 32 KiB), not [B][N][D].  */                    \
  template <class U, std::size_t... E, class V, std::size_t... F, std::size_t WB, std::size_t WN>   \
  constexpr void forward(const tensor<U, E...>& x, tensor<V, F...>& out,                           \
                         workspace<WB, WN>& ws) const noexcept {                                    \
    if constexpr (check_output_<tensor<U, E...>, tensor<V, F...>>())                                \
      if constexpr (check_workspace_<tensor<U, E...>, WB, WN>())                                    \
        run<WB, WN>(x.data(), out.data(), ws, ::mha::detail::forward_mode{});                       \
  }                                                                                                 \
  /** Training-mode forward: dropout with probability `dropout` on the        */                    \
  /** attention weights, kept weights scaled by 1/(1-p), rows not             */                    \
  /** renormalised (torch.nn.Dropout in train()). Deterministic for a seed.   */                    \
  template <class U, std::size_t... E>                                                              \
  constexpr auto forward_training(const tensor<U, E...>& x, std::uint64_t seed) const noexcept {    \
    typename ::mha::detail::output_for<value_type, output_width, E...>::type out;                   \
    if constexpr (check_input_<tensor<U, E...>>())                                                  \
      forward_stack_(x, out, ::mha::detail::forward_mode{true, seed});                              \
    return out;                                                                                     \
  }                                                                                                 \
  /** Training-mode forward into a caller-provided `out` (stack workspace). */                     \
  template <class U, std::size_t... E, class V, std::size_t... F>                                   \
  constexpr void forward_training(const tensor<U, E...>& x, tensor<V, F...>& out,                  \
                                  std::uint64_t seed) const noexcept {                              \
    forward_stack_(x, out, ::mha::detail::forward_mode{true, seed});                                \
  }                                                                                                 \
  /** Training-mode forward into `out` with a caller-owned workspace. */                            \
  template <class U, std::size_t... E, class V, std::size_t... F, std::size_t WB, std::size_t WN>   \
  constexpr void forward_training(const tensor<U, E...>& x, tensor<V, F...>& out,                  \
                                  workspace<WB, WN>& ws, std::uint64_t seed) const noexcept {       \
    if constexpr (check_output_<tensor<U, E...>, tensor<V, F...>>())                                \
      if constexpr (check_workspace_<tensor<U, E...>, WB, WN>())                                    \
        run<WB, WN>(x.data(), out.data(), ws, ::mha::detail::forward_mode{true, seed});             \
  }
