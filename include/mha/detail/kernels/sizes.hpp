// mha/detail/kernels/sizes.hpp -- sizes that are compile-time or run-time integers.
//
// The kernels and the attention orchestration take every size either as a
// size_c<N> (a fixed-size module: loops get constant trip counts, offsets
// fold) or as a std::size_t (mha::dynamic, run-time token counts). The same
// code serves both, so both perform the same operations in the same order.
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace mha::detail {

/// Compile-time size as a value that converts to std::size_t.
template <std::size_t N>
using size_c = std::integral_constant<std::size_t, N>;

/// True for size_c<N>, const or not (a const size_c member, e.g. of a spec
/// built from a `const auto` local, is still a compile-time size: until
/// 2026-12-05 it was not, and grouped_query_attention's compile-time-size
/// forward silently took the general path instead of the token-major one).
template <class X>
inline constexpr bool is_size_c = false;
template <std::size_t N>
inline constexpr bool is_size_c<std::integral_constant<std::size_t, N>> = true;
template <std::size_t N>
inline constexpr bool is_size_c<const std::integral_constant<std::size_t, N>> = true;

/// a * b: a size_c when both are, a std::size_t otherwise.
template <class A, class B>
constexpr auto size_mul(A a, B b) noexcept {
  if constexpr (is_size_c<A> && is_size_c<B>)
    return size_c<A::value * B::value>{};
  else
    return static_cast<std::size_t>(a) * static_cast<std::size_t>(b);
}
/// a / b (b > 0): a size_c when both are, a std::size_t otherwise.
template <class A, class B>
constexpr auto size_div(A a, B b) noexcept {
  if constexpr (is_size_c<A> && is_size_c<B>)
    return size_c<A::value / (B::value > 0 ? B::value : 1)>{};
  else
    return static_cast<std::size_t>(a) / static_cast<std::size_t>(b);
}

/// f(i) for i = 0 .. n-1 in order. For a size_c count this is a fold over
/// std::index_sequence with i a size_c<I> (no run-time loop: the per-head
/// code of the fixed-size modules is generated once per head, with constant
/// offsets); for a run-time count, a loop with i a std::size_t.
template <class N, class F>
constexpr void for_each_index(N n, F&& f) {
  if constexpr (is_size_c<N>) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (f(size_c<I>{}), ...);
    }(std::make_index_sequence<N::value>{});
  } else {
    for (std::size_t i = 0; i < n; ++i) f(i);
  }
}

}  // namespace mha::detail
