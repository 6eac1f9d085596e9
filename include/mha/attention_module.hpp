// mha/attention_module.hpp -- the attention_module concept and the
// can_forward_v trait, for fixed-size and mha::dynamic modules alike.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <concepts>
#include <cstddef>
#include <type_traits>

#include <mha/config.hpp>
#include <mha/detail/contracts.hpp>
#include <mha/detail/module_interface.hpp>
#include <mha/linear.hpp>
#include <mha/tensor_view.hpp>

#include <mha/detail/macros.hpp>

namespace mha {

namespace dynamic {
template <class T>
class tensor_view;
}  // namespace dynamic

namespace detail {
/// M has the fixed-size modules' compile-time sizes (static constexpr
/// std::size_t members d_in, context_length, num_heads, head_dim,
/// output_width) and a value_type.
template <class M>
concept fixed_module_sizes = requires {
  typename M::value_type;
  requires std::is_same_v<decltype(M::d_in), const std::size_t>;
  requires std::is_same_v<decltype(M::context_length), const std::size_t>;
  requires std::is_same_v<decltype(M::num_heads), const std::size_t>;
  requires std::is_same_v<decltype(M::head_dim), const std::size_t>;
  requires std::is_same_v<decltype(M::output_width), const std::size_t>;
};

/// The output argument type of can_forward_v<M, X, Out> as forward's
/// forwarding reference deduces it: Out names an lvalue of type Out (what
/// `decltype(out)` of a named variable gives), or a temporary when Out is an
/// rvalue reference type.
template <class Out>
using output_argument_t = std::conditional_t<std::is_rvalue_reference_v<Out>,
                                             std::remove_reference_t<Out>, Out&>;

/// `out` of type Out (see output_argument_t) is a writable output of tensor
/// type Expected: a tensor or view of that type, not const, not a temporary
/// tensor, and a tensor within MHA_MAX_INLINE_BYTES.
template <class Out, class Expected>
consteval bool output_ok() noexcept {
  using Y = output_argument_t<Out>;
  if constexpr (!fixed_tensor_like<Y>) {
    return false;
  } else if constexpr (!writable_output<Y>) {
    return false;
  } else {
    return std::is_same_v<as_tensor_t<Y>, Expected> &&
           within_inline_limit<sizeof(std::remove_cvref_t<Y>), MHA_DETAIL_MAX_INLINE_BYTES()>;
  }
}

/// m.forward(x, out) of an mha::dynamic module compiles (shapes are run-time checks).
template <class M, class X, class Out>
consteval bool dynamic_can_forward_into() noexcept {
  return requires(const M& m, const X& x, output_argument_t<Out> out) {
    m.forward(x, static_cast<output_argument_t<Out>>(out));
  };
}

/// self_attention_dims_ok for M's key_dim and value_dim (true for a module
/// that has none: a user's module of fixed_module_sizes).
template <class M>
consteval bool module_self_attention_dims_ok() noexcept {
  if constexpr (requires {
                  requires std::is_same_v<decltype(M::key_dim), const std::size_t>;
                  requires std::is_same_v<decltype(M::value_dim), const std::size_t>;
                })
    return self_attention_dims_ok<M::key_dim, M::value_dim, M::d_in>;
  else
    return true;
}

/// m.forward(x) (no Out) or m.forward(x, out) (one Out) of a fixed-size
/// module compiles: X is a tensor or a tensor_view for which every contract
/// of forward holds (the module's key_dim and value_dim equal d_in,
/// self_attention_dims_ok; the input rules of forward_input_ok, read here without
/// asserting; for forward(x, out) a writable output of the output type; then
/// the output returned by value and the workspace within MHA_MAX_INLINE_BYTES,
/// and the call's stack use within MHA_STACK_WORKSPACE_LIMIT: the workspace's
/// stack_bytes (workspace and frame bound), plus the output for forward(x)).
template <class M, class X, class... Out>
consteval bool fixed_can_forward() noexcept {
  if constexpr (!fixed_tensor_like<X>) {
    return false;
  } else {
    using S = shape_of<X>;
    using T = typename M::value_type;
    if constexpr (!module_self_attention_dims_ok<M>() ||
                  !forward_input_ok<S, T, M::d_in, M::context_length>) {
      return false;
    } else {
      // M::workspace<B, N> is attention_workspace<T, B, N, d_in, output_width,
      // context_length> (forward_overloads.hpp); its sizes without its storage
      using W = attention_workspace_sizes<T, S::batch, S::tokens, M::d_in, M::output_width,
                                          M::context_length>;
      // (the stack limit as forward_overloads.hpp's forward_stack_ checks it:
      // W::stack_bytes, plus the output that forward(x) returns; W::fits is
      // false for sizes past the largest object, PTRDIFF_MAX bytes)
      constexpr bool workspace_fits =
          W::fits && within_inline_limit<(W::fits ? W::storage_bytes : 0), MHA_DETAIL_MAX_INLINE_BYTES()>;
      if constexpr (sizeof...(Out) == 0) {
        constexpr std::size_t output_bytes = sizeof(T) * S::batch * S::tokens * M::output_width;
        return within_inline_limit<output_bytes, MHA_DETAIL_MAX_INLINE_BYTES()> && workspace_fits &&
               W::stack_bytes + output_bytes <= MHA_STACK_WORKSPACE_LIMIT;
      } else {
        return (output_ok<Out, output_for_t<T, M::output_width, X>>() && ...) && workspace_fits &&
               W::stack_bytes <= MHA_STACK_WORKSPACE_LIMIT;
      }
    }
  }
}

/// M is a fixed-size mha::linear (static in_features, out_features).
template <class M>
concept fixed_linear_sizes = requires {
  typename M::value_type;
  requires std::is_same_v<decltype(M::in_features), const std::size_t>;
  requires std::is_same_v<decltype(M::out_features), const std::size_t>;
};

/// m.forward(x) / m.forward(x, out) of a fixed-size mha::linear compiles:
/// the rules of check_linear_input / check_linear_output (element type, last
/// extent in_features, an output of x's shape with last extent out_features),
/// and a returned output within the inline and stack limits.
template <class M, class X, class... Out>
consteval bool linear_can_forward() noexcept {
  if constexpr (!fixed_tensor_like<X>) {
    return false;
  } else {
    using XS = fixed_shape<std::remove_cvref_t<X>>;
    using T = typename M::value_type;
    if constexpr (!std::is_same_v<typename XS::value_type, T> || XS::last != M::in_features) {
      return false;
    } else if constexpr (sizeof...(Out) == 0) {
      constexpr std::size_t bytes = sizeof(T) * (XS::size / M::in_features) * M::out_features;
      // (linear_stack_bytes without instantiating the output type)
      return within_inline_limit<bytes, MHA_DETAIL_MAX_INLINE_BYTES()> &&
             bytes + stack_bound::gemm_panel<M::in_features> + stack_bound::register_tiles <=
                 MHA_STACK_WORKSPACE_LIMIT;
    } else {
      return (output_ok<Out, linear_output_t<T, M::out_features, X>>() && ...);
    }
  }
}
template <class M, class X, class... Out>
consteval bool can_forward() noexcept {
  if constexpr (fixed_module_sizes<M>)
    return fixed_can_forward<M, X, Out...>();
  else if constexpr (fixed_linear_sizes<M>)
    return linear_can_forward<M, X, Out...>();
  else if constexpr (sizeof...(Out) == 0)
    return requires(const M& m, const X& x) { m.forward(x); };
  else
    return dynamic_can_forward_into<M, X, Out...>();
}
}  // namespace detail

/// True where `m.forward(x)` compiles for a `const M m` and an argument of
/// type X, false otherwise, without a compile-time error either way (a
/// `requires { m.forward(x); }` is a hard error for a fixed-size module and a
/// bad shape: forward returns `auto`, and its static_assert fires while the
/// return type is deduced). For a fixed-size module M (mha::causal_attention,
/// multi_head_attention, multi_head_attention_wrapper,
/// fused_multi_head_attention, grouped_query_attention): the module's key_dim
/// and value_dim equal d_in (self-attention: multi_head_attention with another
/// KDim or VDim takes the cross-attention forward), and X is an mha::tensor or
/// mha::tensor_view whose element type, rank (2 or 3), last extent (d_in) and
/// token count (1..context_length) satisfy the rules forward's static_asserts
/// check (the same predicates, detail::self_attention_dims_ok and
/// detail::forward_input_ok), whose output and workspace fit
/// MHA_MAX_INLINE_BYTES, and whose stack use fits MHA_STACK_WORKSPACE_LIMIT
/// (`M::workspace<B, N>::stack_bytes` plus the returned output's bytes; for
/// forward(x, out) without the output: the check forward's static_assert
/// makes, see mha/config.hpp). For an mha::dynamic
/// module: X converts to a dynamic::tensor_view<const T> (a dynamic::tensor or
/// a view of T); shapes are checked at run time, so their errors are
/// exceptions, not a false here. For a fixed-size mha::linear: X's
/// element type is T and its last extent in_features (any rank). cv and reference qualifiers are ignored.
///
/// `can_forward_v<M, X, Out>` is the same for `m.forward(x, out)` (a
/// `requires { m.forward(x, out); }` is true for any shape there, as that
/// forward returns void and checks in its body): additionally out must be
/// writable (a non-const tensor lvalue, or a view of non-const T) with the
/// output's type, tensor<T, B, N, output_width> (or <T, N, output_width>).
/// Out is read as forward's forwarding reference deduces it: an lvalue of
/// type Out (`decltype(out)` of a named variable), a temporary when Out is
/// `U&&`. For an mha::dynamic module, out must convert to a
/// dynamic::tensor_view<T>.
///
///   static_assert(mha::can_forward_v<M, mha::tensor<float, 6, 3>>);
///   if constexpr (mha::can_forward_v<M, X>) y = m.forward(x);
///   static_assert(mha::can_forward_v<M, decltype(x), decltype(out)>);
template <class M, class X, class... Out>
  requires(sizeof...(Out) <= 1)
inline constexpr bool can_forward_v =
    detail::can_forward<std::remove_cvref_t<M>, std::remove_cvref_t<X>, Out...>();

/// A fixed-size attention module: the compile-time sizes `d_in`,
/// `context_length`, `num_heads`, `head_dim`, `output_width` (static
/// constexpr std::size_t), `value_type` float or double, the member types
/// `workspace<B, N>` and `kv_cache<B>`, and `forward(x, out)` for a one-token
/// tensor_view x [1][d_in] and out [1][output_width] (checked from its
/// declaration: nothing is instantiated). `d_out` is not required: the
/// wrapper's is the width of one head.
template <class M>
concept fixed_attention_module =
    detail::fixed_module_sizes<M> && detail::float_or_double<typename M::value_type> &&
    requires(const M& m,
             const tensor_view<const typename M::value_type, 1, detail::at_least_1<M::d_in>>& x,
             const tensor_view<typename M::value_type, 1, detail::at_least_1<M::output_width>>&
                 out) {
      typename M::template workspace<1, 1>;
      typename M::template kv_cache<1>;
      m.forward(x, out);
    };

/// An mha::dynamic attention module: run-time sizes `d_in()`,
/// `context_length()`, `num_heads()`, `head_dim()`, `output_width()`
/// (convertible to std::size_t), `value_type`, `forward(x)` returning the
/// output and `forward(x, out)`, for x a dynamic::tensor_view<const T> and
/// out a dynamic::tensor_view<T>.
template <class M>
concept dynamic_attention_module = requires(
    const M& m, const dynamic::tensor_view<const typename M::value_type>& x,
    const dynamic::tensor_view<typename M::value_type>& out) {
  { m.d_in() } -> std::convertible_to<std::size_t>;
  { m.context_length() } -> std::convertible_to<std::size_t>;
  { m.num_heads() } -> std::convertible_to<std::size_t>;
  { m.head_dim() } -> std::convertible_to<std::size_t>;
  { m.output_width() } -> std::convertible_to<std::size_t>;
  m.forward(x);
  m.forward(x, out);
};

/// Every attention module of the library, fixed-size or mha::dynamic
/// (causal_attention, multi_head_attention, multi_head_attention_wrapper,
/// fused_multi_head_attention, grouped_query_attention, and the mha::dynamic
/// twins of all but the fused one), and a user's
/// module that provides the same (see fixed_attention_module and
/// dynamic_attention_module). Not a linear layer (no attention sizes). Use
/// it to constrain generic code:
///
///   template <mha::attention_module M> void run(const M& m);
template <class M>
concept attention_module =
    fixed_attention_module<std::remove_cvref_t<M>> || dynamic_attention_module<std::remove_cvref_t<M>>;

}  // namespace mha

#include <mha/detail/macros_undef.hpp>

#endif  // MHA_DETAIL_NO_CXX20
