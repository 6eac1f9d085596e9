// mha/attention_module.hpp -- the attention_module concept and the
// can_forward_v trait, for fixed-size and mha::dynamic modules alike.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <concepts>
#include <cstddef>
#include <type_traits>

#include <mha/config.hpp>
#include <mha/detail/api/contracts.hpp>
#include <mha/detail/api/module_interface.hpp>
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

/// M's forward overloads are detail/api/forward_overloads.inc's (a fixed-size
/// module of the library): M has fixed_module_sizes, key_dim and value_dim,
/// and its `workspace<B, N>` is the detail::attention_workspace that the
/// fragment defines (read without instantiating it).
template <class M>
concept forward_overloads_module = fixed_module_sizes<M> && requires {
  requires std::is_same_v<decltype(M::key_dim), const std::size_t>;
  requires std::is_same_v<decltype(M::value_dim), const std::size_t>;
  requires std::is_same_v<typename M::template workspace<1, 1>,
                          attention_workspace<typename M::value_type, 1, 1, M::d_in,
                                              M::output_width, M::context_length>>;
};

/// The self_attention_rules of a forward_overloads_module M: the type of the
/// fragment's forward_rules_, built from the same members.
template <class M>
using forward_rules_of = self_attention_rules<typename M::value_type, M::d_in, M::key_dim,
                                              M::value_dim, M::context_length, M::output_width>;

/// M is an mha::linear (whose forward is checked by linear_forward_ok).
template <class M>
inline constexpr bool is_fixed_linear = false;
template <class T, std::size_t In, std::size_t Out, bool Bias>
inline constexpr bool is_fixed_linear<linear<T, In, Out, Bias>> = true;

/// The self_attention_rules that a user's module of fixed_module_sizes (not a
/// forward_overloads_module) is read with: a self-attention module of its
/// sizes, key_dim and value_dim equal to d_in.
template <class M>
using fixed_sizes_rules_of = self_attention_rules<typename M::value_type, M::d_in, M::d_in,
                                                  M::d_in, M::context_length, M::output_width>;

/// A requires-expression on m.forward(x) or m.forward(x, out) (see
/// can_forward): what M's own overloads accept.
template <class M, class X, class... Out>
consteval bool forward_call_viable() noexcept {
  if constexpr (sizeof...(Out) == 0)
    return requires(const M& m, const X& x) { m.forward(x); };
  else
    return requires(const M& m, const X& x, output_argument_t<Out>... out) {
      m.forward(x, static_cast<output_argument_t<Out>>(out)...);
    };
}

/// m.forward(x) (no Out) or m.forward(x, out) (one Out, see
/// output_argument_t) compiles, for `const M m` and `x` a const lvalue of
/// type X (X without reference; cv kept): for a library module, the rules its
/// forward reads (self_attention_rules::forward_ok, linear_forward_ok); for a
/// user's module of fixed_module_sizes, those rules for its sizes first (a
/// module wrapping a library module asserts them while its `auto` return type
/// is deduced, where a requires-expression would be a hard error), then a
/// requires-expression on the call (its own overloads decide among the
/// shapes the rules admit); for any other M (mha::dynamic), the
/// requires-expression.
template <class M, class X, class... Out>
consteval bool can_forward() noexcept {
  if constexpr (forward_overloads_module<M>)
    return forward_rules_of<M>::template forward_ok<X, MHA_DETAIL_MAX_INLINE_BYTES(),
                                                    output_argument_t<Out>...>();
  else if constexpr (is_fixed_linear<M>)
    return linear_forward_ok<typename M::value_type, M::in_features, M::out_features,
                             MHA_DETAIL_MAX_INLINE_BYTES(), X, output_argument_t<Out>...>();
  else if constexpr (fixed_module_sizes<M>) {
    if constexpr (!fixed_sizes_rules_of<M>::template forward_ok<X, MHA_DETAIL_MAX_INLINE_BYTES(),
                                                                 output_argument_t<Out>...>())
      return false;
    else
      return forward_call_viable<M, X, Out...>();
  } else {
    return forward_call_viable<M, X, Out...>();
  }
}
}  // namespace detail

/// True where `m.forward(x)` compiles for a `const M m` and an argument of
/// type X, false otherwise, without a compile-time error either way (a
/// `requires { m.forward(x); }` is a hard error for a fixed-size module and a
/// bad shape: forward returns `auto`, and its static_assert fires while the
/// return type is deduced). For a fixed-size module M of the library
/// (mha::causal_attention, multi_head_attention, multi_head_attention_wrapper,
/// fused_multi_head_attention, grouped_query_attention): the module's key_dim
/// and value_dim equal d_in (self-attention: multi_head_attention with another
/// KDim or VDim takes the cross-attention forward), and X is an mha::tensor or
/// mha::tensor_view of a valid type (no zero extent, a tensor within
/// MHA_MAX_INLINE_BYTES) whose element type, rank (2 or 3), last extent (d_in)
/// and token count (1..context_length) satisfy the rules forward's
/// static_asserts check, whose output and workspace fit MHA_MAX_INLINE_BYTES,
/// and whose stack use fits MHA_STACK_WORKSPACE_LIMIT
/// (`M::workspace<B, N>::stack_bytes` plus the returned output's bytes; for
/// forward(x, out) without the output: the check forward's static_assert
/// makes, see mha/config.hpp). forward's body and this trait read the same
/// predicates (detail::self_attention_rules). For a fixed-size mha::linear:
/// X is a valid type whose element type is T and last extent in_features (any
/// rank; detail::linear_forward_ok). For a user's module with the sizes of
/// the attention_module concept: the same rules for its sizes (key_dim and
/// value_dim taken as d_in), then a requires-expression on the call, so among
/// the shapes the rules admit the trait follows M's own overloads (a module
/// wrapping a library module gets false, not an error, for a shape the
/// wrapped forward asserts). For an mha::dynamic module, or any other M: the
/// requires-expression alone (for mha::dynamic, X converts to a
/// dynamic::tensor_view<const T): shapes are checked at run time, so their
/// errors are exceptions, not a false here). X is an
/// lvalue of type X const (reference ignored); a volatile X is false for the
/// library's modules (no forward takes one).
///
/// `can_forward_v<M, X, Out>` is the same for `m.forward(x, out)` (a
/// `requires { m.forward(x, out); }` is true for any shape there, as that
/// forward returns void and checks in its body): additionally out must be of
/// a valid type, writable (a non-const, non-volatile tensor lvalue, or a view
/// of non-const T) with the output's type, tensor<T, B, N, output_width> (or
/// <T, N, output_width>). Out is read as forward's forwarding reference
/// deduces it: an lvalue of type Out (`decltype(out)` of a named variable), a
/// temporary when Out is `U&&`. An invalid Out type (a zero extent, an
/// element type other than float or double, a tensor above
/// MHA_MAX_INLINE_BYTES) gives false, not an error. For an mha::dynamic
/// module, out must convert to a dynamic::tensor_view<T>.
///
///   static_assert(mha::can_forward_v<M, mha::tensor<float, 6, 3>>);
///   if constexpr (mha::can_forward_v<M, X>) y = m.forward(x);
///   static_assert(mha::can_forward_v<M, decltype(x), decltype(out)>);
template <class M, class X, class... Out>
  requires(sizeof...(Out) <= 1)
inline constexpr bool can_forward_v =
    detail::can_forward<std::remove_cvref_t<M>, std::remove_reference_t<X>, Out...>();

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
