// mha/parameters.hpp -- named parameters: one compile-time walk over every
// module, as PyTorch's named_parameters().
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <array>
#include <cstddef>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include <mha/detail/params/parameter_walk.hpp>
#include <mha/status.hpp>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#include <stdexcept>
#include <string>
#include <vector>

#include <mha/dynamic/tensor.hpp>
#endif

#include <mha/detail/macros.hpp>

namespace mha {

namespace detail::params {
/// The visitor of for_each_parameter: forwards the parameters to f.
template <class F>
struct parameter_visitor {
  F& f;
  template <class X>
  constexpr void operator()(parameter_tag, std::string_view name, X& tensor) const {
    f(name, tensor);
  }
  template <class Tag, class X>
  constexpr void operator()(Tag, std::string_view, X&) const noexcept {}
};
}  // namespace detail::params

/// Calls `f(name, tensor)` for every parameter tensor of `model`, in the
/// order and with the names of PyTorch's `named_parameters()` for the book's
/// classes (Raschka, chapter 3; torch.nn.MultiheadAttention for the fused
/// module):
///
///   causal_attention             W_query.weight, [W_query.bias,] W_key.weight, [W_key.bias,]
///                                W_value.weight, [W_value.bias]
///   multi_head_attention         the same, then out_proj.weight, out_proj.bias
///   multi_head_attention_wrapper heads.0.W_query.weight, ..., heads.1.W_query.weight, ...
///   fused_multi_head_attention   in_proj_weight, [in_proj_bias,] out_proj.weight, out_proj.bias
///   linear                       weight, [bias]
///
/// (bracketed: with qkv_bias / Bias). The causal `mask` is a buffer, no
/// parameter, and is not visited. `model` is any fixed-size module or its
/// mha::dynamic twin, const or not. `name` is a std::string_view (for the
/// fixed-size modules it points to static storage, the same characters as
/// mha::parameter_names<M>; for an mha::dynamic wrapper it is valid during the
/// call only); `tensor` is the member itself: `mha::tensor<T, E...>&` (const&
/// for a const model) or `mha::dynamic::tensor<T>&`. The walk is generated at
/// compile time from the module's parameter_description(): for a fixed-size
/// module it allocates nothing, throws nothing itself, and is usable in
/// constant expressions. A module type without a description is a
/// compile-time error.
template <class M, class F>
constexpr void for_each_parameter(M& model, F&& f) {
  static_assert(detail::params::described<M>,
                "mha::for_each_parameter: the model type has no parameter_description() (not an "
                "mha module)");
  if constexpr (detail::params::described<M>) {
    const detail::params::parameter_visitor<std::remove_reference_t<F>> visit{f};
    detail::params::walk(detail::params::static_prefix{}, model, visit);
  }
}

namespace detail::params {
/// parameter_names<M> after checking that M's walk is static.
template <class M>
constexpr auto checked_names() noexcept {
  static_assert(is_static_v<M>,
                "mha::parameter_names: M must be a fixed-size module (the parameters of an "
                "mha::dynamic module are known only at run time: use for_each_parameter)");
  if constexpr (is_static_v<M>)
    return names<M>();
  else
    return std::array<std::string_view, 0>{};
}
}  // namespace detail::params

/// The names for_each_parameter visits for the fixed-size module type M, in
/// the same order, at compile time: a `constexpr std::array<std::string_view,
/// K>` (K = the number of parameter tensors), e.g.
/// `parameter_names<mha::causal_attention<float, 3, 2, 6>>` is {"W_query.weight",
/// "W_key.weight", "W_value.weight"}. Composed at compile time from the
/// modules' descriptions (one table of names per module type, built by
/// constant evaluation from the members' boost::hana::string names). Not defined for
/// mha::dynamic modules, whose parameters (the bias, the wrapper's head
/// count) are run-time facts: a compile-time error "mha::parameter_names: M
/// must be a fixed-size module ..."; walk their objects with for_each_parameter.
template <class M>
inline constexpr auto parameter_names = detail::params::checked_names<std::remove_cvref_t<M>>();

/// Fills every parameter of the fixed-size `model` from `values`, in walk
/// order (for_each_parameter's), each tensor row-major: what PyTorch gives as
/// `torch.cat([p.flatten() for p in m.parameters()])` for the book's class.
/// Returns status::ok, or status::bad_size when values.size() differs from
/// the model's parameter count (M::parameter_count), and then writes nothing.
/// noexcept, no allocation, usable in constant expressions.
template <class M>
  requires(detail::params::is_static_v<M> && !std::is_const_v<M>)
[[nodiscard]] constexpr status load_parameters(
    M& model, std::span<const typename M::value_type> values) noexcept {
  if (values.size() != detail::params::count<M>()) return status::bad_size;
  std::size_t at = 0;
  for_each_parameter(model, [&](std::string_view, auto& tensor) {
    for (auto& e : tensor) e = values[at++];
  });
  return status::ok;
}

namespace detail::params {
/// True when from_parameters<M> got as many tensors as M has parameters (or M is not static).
template <class M, class... Tensors>
constexpr bool parameter_count_matches() noexcept {
  if constexpr (is_static_v<M>)
    return counts_v<std::remove_cvref_t<M>>.parameters == sizeof...(Tensors);
  else
    return true;
}
/// True when the tensors' types are those of M's parameters, position by
/// position (or an earlier check of from_parameters<M> failed).
template <class M, class... Tensors>
constexpr bool parameter_types_match() noexcept {
  if constexpr (is_static_v<M> && parameter_count_matches<M, Tensors...>())
    return std::is_same_v<tensors_t<M>, type_list<Tensors...>>;
  else
    return true;
}
/// target = the parameter at position `at` among `parameters` (whose type at
/// that position is target's, checked by from_parameters): one whole-tensor
/// assignment.
template <class X, class... Tensors>
constexpr void assign_at(X& target, std::size_t at, const Tensors&... parameters) noexcept {
  std::size_t i = 0;
  (
      [&](const auto& p) {
        if constexpr (std::is_same_v<X, std::remove_cvref_t<decltype(p)>>)
          if (i == at) target = p;
        ++i;
      }(parameters),
      ...);
}
}  // namespace detail::params

/// The fixed-size module M whose parameters are `parameters...`, in walk
/// order (mha::parameter_names<M>, PyTorch's named_parameters() order), each
/// tensor of the parameter's type (element type and extents: weights
/// [out][in], nn.Linear's layout); every other member is as in a
/// value-initialised `M{}` (dropout 0). The PyTorch analogue is
/// `m.load_state_dict(...)` on a fresh module; this is how the headers of
/// tools/export_weights_header.py build their model:
///
///   using model_type = mha::causal_attention<float, 4, 5, 7, true>;
///   constexpr model_type model = mha::from_parameters<model_type>(
///       w_query_weight, w_query_bias, w_key_weight, w_key_bias, w_value_weight, w_value_bias);
///
/// Each parameter is one whole-tensor assignment (no element loop), so it
/// stays cheap in constant evaluation for GPT-2-sized models. constexpr,
/// noexcept, no allocation (the result is returned by value: for a large
/// model use it to initialise a constexpr/static object).
/// Compile-time errors (one static_assert each): M not a fixed-size module
/// ("mha::from_parameters: M must be a fixed-size module ..."), a number of
/// tensors other than M's number of parameters ("mha::from_parameters: the
/// number of tensors differs from the model's number of parameters
/// (mha::parameter_names<M>.size())"), a tensor whose type differs from the
/// parameter's at its position ("mha::from_parameters: a tensor's type
/// (element type, extents) differs from the parameter's at its position
/// (compare with mha::parameter_names<M>)").
template <class M, class... Tensors>
[[nodiscard]] constexpr std::remove_cvref_t<M> from_parameters(const Tensors&... parameters) noexcept {
  static_assert(detail::params::is_static_v<M> && std::is_same_v<M, std::remove_cvref_t<M>>,
                "mha::from_parameters: M must be a fixed-size module type without const, volatile "
                "or reference (an mha::dynamic module's parameters are known only at run time: "
                "use load_parameters)");
  static_assert(detail::params::parameter_count_matches<M, Tensors...>(),
                "mha::from_parameters: the number of tensors differs from the model's number of "
                "parameters (mha::parameter_names<M>.size())");
  static_assert(detail::params::parameter_types_match<M, Tensors...>(),
                "mha::from_parameters: a tensor's type (element type, extents) differs from the "
                "parameter's at its position (compare with mha::parameter_names<M>)");
  if constexpr (detail::params::is_static_v<M> && std::is_same_v<M, std::remove_cvref_t<M>> &&
                detail::params::parameter_count_matches<M, Tensors...>() &&
                detail::params::parameter_types_match<M, Tensors...>()) {
    M model{};
    std::size_t at = 0;
    for_each_parameter(model, [&](std::string_view, auto& tensor) {
      detail::params::assign_at(tensor, at++, parameters...);
    });
    return model;
  } else if constexpr (std::is_default_constructible_v<std::remove_cvref_t<M>>) {
    return std::remove_cvref_t<M>{};  // a static_assert above has reported the mistake
  } else {
    __builtin_unreachable();  // likewise (an mha::dynamic module: no default constructor)
  }
}

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
/// Fills every parameter of the mha::dynamic `model` from `values`, in walk
/// order (as the fixed-size overload; PyTorch's flattened parameters()), each
/// tensor in its present shape. Throws std::invalid_argument naming both sizes
/// ("mha::load_parameters: values holds 10 elements, the model has 12
/// parameters") when values.size() differs from the sum of the tensors' sizes, and
/// then writes nothing.
template <class M>
  requires(detail::params::described<M> && !detail::params::is_static_v<M> && !std::is_const_v<M>)
void load_parameters(M& model, std::span<const typename M::value_type> values) {
  std::size_t expected = 0;
  for_each_parameter(model, [&](std::string_view, const auto& tensor) {
    expected += static_cast<std::size_t>(tensor.end() - tensor.begin());
  });
  if (values.size() != expected)
    throw std::invalid_argument("mha::load_parameters: values holds " +
                                std::to_string(values.size()) + " elements, the model has " + std::to_string(expected) +
                                " parameters");
  std::size_t at = 0;
  for_each_parameter(model, [&](std::string_view, auto& tensor) {
    for (auto& e : tensor) e = values[at++];
  });
}
#endif

namespace detail::params {
/// A module's hyperparameter that is no parameter (not in the walk) but
/// changes what its parameters compute: its name, whether the module has it,
/// its value.
struct hyperparameter {
  std::string_view name;
  bool present;
  std::size_t value;
};
/// M's context_length and num_heads (the attention modules; a linear has
/// neither): the static members of a fixed-size module (m may be null then),
/// the member functions of an mha::dynamic one (m must point to it).
template <class M>
constexpr std::array<hyperparameter, 2> hyperparameters_of(const M* m) noexcept {
  std::array<hyperparameter, 2> h{hyperparameter{"context_length", false, 0},
                                  hyperparameter{"num_heads", false, 0}};
  if constexpr (requires { std::size_t{M::context_length}; })
    h[0] = {"context_length", true, M::context_length};
  else if constexpr (requires { std::size_t{m->context_length()}; })
    h[0] = {"context_length", true, m->context_length()};
  if constexpr (requires { std::size_t{M::num_heads}; })
    h[1] = {"num_heads", true, M::num_heads};
  else if constexpr (requires { std::size_t{m->num_heads()}; })
    h[1] = {"num_heads", true, m->num_heads()};
  return h;
}
/// Index of the first hyperparameter in which a and b differ (one has it and
/// the other not, or other values), or a.size() when they agree.
constexpr std::size_t first_differing(const std::array<hyperparameter, 2>& a,
                                      const std::array<hyperparameter, 2>& b) noexcept {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].present != b[i].present || a[i].value != b[i].value) return i;
  return a.size();
}

/// Two parameter tensor types have the same shape.
template <class T1, class T2>
constexpr bool same_shape() noexcept {
  if constexpr (T1::rank != T2::rank)
    return false;
  else
    return T1::extents == T2::extents;
}
/// Two lists of as many parameter tensor types have the same shapes, position by position.
template <class... T1, class... T2>
constexpr bool same_shapes(type_list<T1...>, type_list<T2...>) noexcept {
  return (same_shape<T1, T2>() && ...);
}
/// The fixed-size modules From and To have the same parameters (names and
/// shapes, in walk order) and hyperparameters: what copy_parameters needs.
template <class From, class To>
constexpr bool copyable() noexcept {
  if constexpr (counts_v<From>.parameters != counts_v<To>.parameters) {
    return false;
  } else {
    const bool same =
        names<From>() == names<To>() && same_shapes(tensors_t<From>{}, tensors_t<To>{});
    constexpr auto hf = hyperparameters_of<From>(nullptr);
    return same && first_differing(hf, hyperparameters_of<To>(nullptr)) == hf.size();
  }
}
}  // namespace detail::params

/// Copies every parameter of the fixed-size module `from` into the parameter
/// at the same position of the fixed-size module `to`, converting the element
/// type (float <-> double, or the same: static_cast, so round to nearest):
/// PyTorch's `to.load_state_dict(from.state_dict())` followed by `.to(dtype)`.
/// From and To must have the same walk (mha::parameter_names and the shapes
/// of the tensors, in order) and the same context_length and num_heads
/// (hyperparameters, not in the walk, that change what the parameters
/// compute); any two element types, e.g. mha::multi_head_attention<float, 6,
/// 4, 7, 2> into mha::multi_head_attention<double, 6, 4, 7, 2>. Otherwise one
/// compile-time error, "mha::copy_parameters: the models' parameters differ in
/// names or shapes (compare mha::parameter_names), or their context_length or
/// num_heads differ". Buffers (the causal mask) and dropout are not copied.
/// constexpr, noexcept, no allocation.
template <class From, class To>
  requires(detail::params::is_static_v<From> && detail::params::is_static_v<To> &&
           !std::is_const_v<To>)
constexpr void copy_parameters(const From& from, To& to) noexcept {
  constexpr bool ok = detail::params::copyable<From, To>();
  static_assert(ok,
                "mha::copy_parameters: the models' parameters differ in names or shapes (compare "
                "mha::parameter_names), or their context_length or num_heads differ");
  if constexpr (ok) {
    constexpr std::size_t k = mha::parameter_names<From>.size();
    std::array<const typename From::value_type*, k> source{};
    std::size_t at = 0;
    for_each_parameter(from,
                       [&](std::string_view, const auto& tensor) { source[at++] = tensor.begin(); });
    at = 0;
    for_each_parameter(to, [&](std::string_view, auto& tensor) {
      const typename From::value_type* s = source[at++];
      for (auto& e : tensor) e = static_cast<std::remove_reference_t<decltype(e)>>(*s++);
    });
  }
}

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
namespace detail {
MHA_DETAIL_ISA_NAMESPACE {
/// A parameter's name and shape, as copy_parameters compares them.
struct named_shape {
  std::string name;
  std::vector<std::size_t> shape;
};
/// The parameters of a model as copy_parameters sees them, in walk order:
/// names and shapes, and the elements (of type E: const for the source).
template <class E>
struct located_parameters {
  std::vector<named_shape> names;
  std::vector<std::span<E>> elements;
};
/// The parameters of `m` (fixed-size or mha::dynamic).
template <class E, class M>
located_parameters<E> locate_parameters(M& m) {
  located_parameters<E> p;
  for_each_parameter(m, [&](std::string_view name, auto& tensor) {
    using X = std::remove_cvref_t<decltype(tensor)>;
    std::vector<std::size_t> shape;
    if constexpr (is_tensor_v<X>)
      shape.assign(X::extents.begin(), X::extents.end());
    else
      shape = tensor.shape();
    p.names.push_back({std::string(name), std::move(shape)});
    p.elements.emplace_back(tensor.begin(), tensor.end());
  });
  return p;
}
/// "W_key.weight [6][4]", or "none" for p == nullptr.
inline std::string describe_parameter(const named_shape* p) {
  return p == nullptr ? std::string("none") : p->name + " " + dynamic::shape_string(p->shape);
}
/// "2", or "none" for a hyperparameter the module does not have.
inline std::string describe_value(const params::hyperparameter& h) {
  return h.present ? std::to_string(h.value) : std::string("none");
}
/// copy_parameters' checks: std::invalid_argument naming the first parameter
/// whose name or shape differs, else the first differing hyperparameter.
inline void check_copy(const std::vector<named_shape>& source,
                       const std::vector<named_shape>& target,
                       const std::array<params::hyperparameter, 2>& hs,
                       const std::array<params::hyperparameter, 2>& ht) {
  const std::size_t n = source.size() > target.size() ? source.size() : target.size();
  for (std::size_t i = 0; i < n; ++i) {
    const named_shape* s = i < source.size() ? &source[i] : nullptr;
    const named_shape* t = i < target.size() ? &target[i] : nullptr;
    if (s != nullptr && t != nullptr && s->name == t->name && s->shape == t->shape) continue;
    throw std::invalid_argument("mha::copy_parameters: parameter " + std::to_string(i) + " is " +
                                describe_parameter(s) + " in the source, " +
                                describe_parameter(t) + " in the destination");
  }
  if (const std::size_t i = params::first_differing(hs, ht); i != hs.size())
    throw std::invalid_argument("mha::copy_parameters: " + std::string(hs[i].name) + " is " +
                                describe_value(hs[i]) + " in the source, " +
                                describe_value(ht[i]) + " in the destination");
}
/// Copies checked parameters element by element, converting (static_cast).
template <class S, class T>
void convert_parameters(const std::vector<std::span<const S>>& source,
                        const std::vector<std::span<T>>& target) noexcept {
  for (std::size_t i = 0; i < source.size(); ++i)
    for (std::size_t j = 0; j < source[i].size(); ++j) target[i][j] = static_cast<T>(source[i][j]);
}
}  // namespace MHA_DETAIL_ISA
}  // namespace detail

/// Copies every parameter of `from` into the parameter at the same position
/// of `to`, converting the element type (static_cast: round to nearest), where
/// one of them or both are mha::dynamic modules (fixed -> dynamic, dynamic ->
/// fixed, dynamic -> dynamic; for two fixed-size modules the overload above
/// checks at compile time). PyTorch's `to.load_state_dict(from.state_dict())`
/// and `.to(dtype)`; `to` keeps its shapes (it is not resized). Checks
/// everything first and writes nothing on a mismatch: throws
/// std::invalid_argument naming the first differing parameter with both names
/// and shapes ("mha::copy_parameters: parameter 3 is W_key.bias [6] in the
/// source, W_key.weight [6][4] in the destination"; "none" past the end of
/// one walk), else the differing hyperparameter ("mha::copy_parameters:
/// num_heads is 2 in the source, 3 in the destination"; context_length and
/// num_heads are no parameters but change what the parameters compute).
/// Buffers and dropout are not copied. Allocates (the names).
template <class From, class To>
  requires(detail::params::described<From> && detail::params::described<To> &&
           !(detail::params::is_static_v<From> && detail::params::is_static_v<To>) &&
           !std::is_const_v<To>)
MHA_DETAIL_ISA_TAG void copy_parameters(const From& from, To& to) {
  const auto source = detail::locate_parameters<const typename From::value_type>(from);
  const auto target = detail::locate_parameters<typename To::value_type>(to);
  detail::check_copy(source.names, target.names, detail::params::hyperparameters_of<From>(&from),
                     detail::params::hyperparameters_of<To>(&to));
  detail::convert_parameters(source.elements, target.elements);
}
#endif

}  // namespace mha

#include <mha/detail/macros_undef.hpp>

#endif  // MHA_DETAIL_NO_CXX20
