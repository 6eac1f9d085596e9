// mha/detail/params/parameter_walk.hpp -- the walk behind <mha/parameters.hpp>: one
// recursive function template over a module's description
// (detail/params/parameter_description.hpp). Names are composed at compile time as
// boost::hana::string types (parent + "." + member, head indices as digits);
// only a run-time range of sub-modules (mha::dynamic's heads vector) adds a
// run-time part, so the walk of a fixed-size module allocates nothing and is
// usable in constant expressions.
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>
#include <utility>

#include <boost/hana/at.hpp>
#include <boost/hana/core/is_a.hpp>
#include <boost/hana/flatten.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/plus.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>
#include <boost/hana/unpack.hpp>

#include <mha/detail/params/parameter_description.hpp>
#include <mha/linear.hpp>
#include <mha/tensor.hpp>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#include <string>
#endif

namespace mha::detail::params {

namespace hana = boost::hana;

/// A module with a parameter_description() (see detail/params/parameter_description.hpp).
template <class X>
concept described = requires { std::remove_cvref_t<X>::parameter_description(); };

/// A run-time-shaped parameter tensor (mha::dynamic::tensor): shape(), data().
template <class X>
concept runtime_tensor = !described<X> && requires(X& x) {
  x.shape();
  x.data();
  x.begin();
};

/// A run-time range of walkable modules (std::vector<causal_attention<T>>).
template <class X>
concept runtime_range = !described<X> && !runtime_tensor<X> && requires(X& x, std::size_t i) {
  x.size();
  { x[i] } -> described;
};

/// A boost::hana::tuple (of walkable modules: the fixed wrapper's heads).
template <class X>
inline constexpr bool is_hana_tuple = hana::is_a<hana::tuple_tag, std::remove_cvref_t<X>>;

template <class X>
inline constexpr bool always_false = false;

/// The characters of a hana::string as a std::string_view (static storage).
template <class S>
constexpr std::string_view view_of(S) noexcept {
  return std::string_view(S::c_str(), decltype(hana::length(S{}))::value);
}

/// `parent.child`, or `child` when parent is empty (all compile-time).
template <class P, class N>
constexpr auto join(P parent, N child) noexcept {
  if constexpr (decltype(hana::length(parent))::value == 0)
    return child;
  else
    return hana::plus(hana::plus(parent, hana::string<'.'>{}), child);
}

/// The decimal digits of I as a hana::string ("0", "1", ..., "12").
template <std::size_t I>
constexpr auto index_name() noexcept {
  if constexpr (I < 10)
    return hana::string<static_cast<char>('0' + I)>{};
  else
    return hana::plus(index_name<I / 10>(), hana::string<static_cast<char>('0' + I % 10)>{});
}

/// What the walk reports to its visitor.
struct parameter_tag {};  ///< a parameter tensor: visit(tag, name, tensor)
struct absent_tag {};     ///< an absent parameter (bias=None): visit(tag, name, member)
struct buffer_tag {};     ///< a buffer the module does not store: visit(tag, name, module)
struct module_tag {};     ///< a module, before its members: visit(tag, name, module)

/// No run-time part of the name (every name is a compile-time string).
struct static_prefix {};
/// No names at all: the visitor gets an empty std::string_view, and a
/// run-time range of modules is walked without building its names (no
/// allocation, no exception: the walk of parameter_count()).
struct unnamed_prefix {};

/// Calls visit(tag, name, x) with name = run-time prefix + compile-time name.
template <class Tag, class Rt, class Name, class X, class V>
constexpr void emit(Tag tag, const Rt& rt, Name name, X& x, V& visit) {
  if constexpr (std::is_same_v<Rt, static_prefix>) {
    visit(tag, view_of(name), x);
  } else if constexpr (std::is_same_v<Rt, unnamed_prefix>) {
    visit(tag, std::string_view{}, x);
  } else {
    const Rt full = rt + Name::c_str();
    visit(tag, std::string_view(full), x);
  }
}

template <class Rt, class Name, class X, class V>
constexpr void walk(const Rt& rt, Name name, X& x, V& visit);

/// One entry of a described module `m`, whose own name is `name`.
template <class Rt, class Name, class M, class V, class EntryName, class Access>
constexpr void walk_entry(const Rt& rt, Name name, M& m, V& visit,
                          const member_entry<EntryName, Access>& e) {
  walk(rt, join(name, EntryName{}), access_member(e.access, m), visit);
}
template <class Rt, class Name, class M, class V, class EntryName, class Access, class Present>
constexpr void walk_entry(const Rt& rt, Name name, M& m, V& visit,
                          const optional_member_entry<EntryName, Access, Present>& e) {
  if (e.present(m))
    walk(rt, join(name, EntryName{}), access_member(e.access, m), visit);
  else
    emit(absent_tag{}, rt, join(name, EntryName{}), access_member(e.access, m), visit);
}
template <class Rt, class Name, class M, class V, class EntryName>
constexpr void walk_entry(const Rt& rt, Name name, M& m, V& visit, const buffer_entry<EntryName>&) {
  emit(buffer_tag{}, rt, join(name, EntryName{}), m, visit);
}

/// The walk: x is a tensor (reported), mha::no_bias (reported as absent), a
/// described module (its entries in order), a hana::tuple or a run-time
/// range of modules (elements named by their index).
template <class Rt, class Name, class X, class V>
constexpr void walk(const Rt& rt, Name name, X& x, V& visit) {
  using U = std::remove_cvref_t<X>;
  if constexpr (is_tensor_v<U> || runtime_tensor<U>) {
    emit(parameter_tag{}, rt, name, x, visit);
  } else if constexpr (std::is_same_v<U, no_bias>) {
    emit(absent_tag{}, rt, name, x, visit);
  } else if constexpr (described<U>) {
    emit(module_tag{}, rt, name, x, visit);
    hana::for_each(U::parameter_description().entries,
                   [&](const auto& e) { walk_entry(rt, name, x, visit, e); });
  } else if constexpr (is_hana_tuple<U>) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (walk(rt, join(name, index_name<I>()), hana::at_c<I>(x), visit), ...);
    }(std::make_index_sequence<decltype(hana::length(x))::value>{});
  } else if constexpr (runtime_range<U> && std::is_same_v<Rt, unnamed_prefix>) {
    for (std::size_t i = 0; i < x.size(); ++i) walk(rt, hana::string<>{}, x[i], visit);
  } else if constexpr (runtime_range<U>) {
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
    std::string base;
    if constexpr (!std::is_same_v<Rt, static_prefix>) base = rt;
    base += Name::c_str();
    for (std::size_t i = 0; i < x.size(); ++i)
      walk(base + "." + std::to_string(i) + ".", hana::string<>{}, x[i], visit);
#else
    static_assert(always_false<U>,
                  "mha::for_each_parameter: a run-time range of modules (mha::dynamic) needs "
                  "exceptions");
#endif
  } else {
    static_assert(always_false<U>,
                  "mha::for_each_parameter: a member in a parameter_description() is neither a "
                  "tensor, mha::no_bias, a module with a parameter_description() nor a sequence "
                  "of such modules");
  }
}

/// Marks a module whose parameters are known only at run time (a run-time
/// range, tensor or optional member: the mha::dynamic modules).
struct runtime_walk {};

/// hana::tuple of the parts' leaves, or runtime_walk if one part is.
template <class... Parts>
constexpr auto concat_leaves(Parts... parts) noexcept {
  if constexpr ((std::is_same_v<Parts, runtime_walk> || ...))
    return runtime_walk{};
  else
    return hana::flatten(hana::make_tuple(parts...));
}

/// One parameter of the type-level walk: its name (a hana::string) and tensor type.
template <class Name, class Tensor>
struct leaf {};
/// Number of elements of the leaf's tensor (a tensor is its element array).
template <class Name, class Tensor>
constexpr std::size_t leaf_size(leaf<Name, Tensor>) noexcept {
  return sizeof(Tensor) / sizeof(typename Tensor::value_type);
}
/// The leaf's name.
template <class Name, class Tensor>
constexpr std::string_view leaf_name(leaf<Name, Tensor>) noexcept {
  return view_of(Name{});
}

template <class Name, class X>
constexpr auto leaves_of(Name, hana::basic_type<X>) noexcept;

template <class X, class Name, class EntryName, class Access>
constexpr auto entry_leaves(Name, const member_entry<EntryName, Access>&) noexcept {
  using child = decltype(access_member(std::declval<const Access&>(), std::declval<X&>()));
  return leaves_of(join(Name{}, EntryName{}), hana::type_c<std::remove_cvref_t<child>>);
}
template <class X, class Name, class EntryName, class Access, class Present>
constexpr auto entry_leaves(Name, const optional_member_entry<EntryName, Access, Present>&) noexcept {
  return runtime_walk{};
}
template <class X, class Name, class EntryName>
constexpr auto entry_leaves(Name, const buffer_entry<EntryName>&) noexcept {
  return hana::make_tuple();
}

/// The walk at the type level: a hana::tuple of leaf<name, tensor type> for every parameter of X, in walk order, or runtime_walk.
template <class Name, class X>
constexpr auto leaves_of(Name, hana::basic_type<X>) noexcept {
  if constexpr (is_tensor_v<X>) {
    return hana::make_tuple(leaf<Name, X>{});
  } else if constexpr (std::is_same_v<X, no_bias>) {
    return hana::make_tuple();
  } else if constexpr (described<X>) {
    return hana::unpack(X::parameter_description().entries, [](const auto&... e) {
      return concat_leaves(entry_leaves<X>(Name{}, e)...);
    });
  } else if constexpr (is_hana_tuple<X>) {
    return []<std::size_t... I>(std::index_sequence<I...>) {
      return concat_leaves(leaves_of(
          join(Name{}, index_name<I>()),
          hana::type_c<std::remove_cvref_t<decltype(hana::at_c<I>(std::declval<X&>()))>>)...);
    }(std::make_index_sequence<decltype(hana::length(std::declval<X&>()))::value>{});
  } else {
    return runtime_walk{};
  }
}

/// The leaves of module type M (see leaves_of).
template <class M>
using leaves_t = decltype(leaves_of(hana::string<>{}, hana::type_c<M>));

/// True when M's parameters are known at compile time (every fixed-size module).
template <class M>
inline constexpr bool is_static_v = described<M> && !std::is_same_v<leaves_t<M>, runtime_walk>;

/// Number of elements of all of M's parameters (M static).
template <class M>
constexpr std::size_t count() noexcept {
  return hana::unpack(leaves_t<M>{}, [](auto... l) { return (std::size_t{0} + ... + leaf_size(l)); });
}

/// The name of module type M in its description ("mha::causal_attention").
template <class Name, class Entries>
constexpr std::string_view name_of(const module_description<Name, Entries>&) noexcept {
  return view_of(Name{});
}
template <class M>
constexpr std::string_view module_name() noexcept {
  return name_of(M::parameter_description());
}

/// M's parameter names as std::string_views (M static).
template <class M>
constexpr auto names() noexcept {
  return hana::unpack(leaves_t<M>{}, [](auto... l) {
    return std::array<std::string_view, sizeof...(l)>{leaf_name(l)...};
  });
}

}  // namespace mha::detail::params
