// mha/detail/params/parameter_walk.hpp -- the walk behind <mha/parameters.hpp>: one
// recursive function template over a module's description
// (detail/params/parameter_description.hpp). The names are computed once per
// module type, at compile time: a table of the type's names relative to it
// (parent + "." + member, head indices as digits), built by constant
// evaluation from the tables of its members' types, so a sub-module's names
// are made once however many paths reach it. The walk reads its names from
// the table of the module it starts at (static storage); only a run-time
// range of sub-modules (mha::dynamic's heads vector) adds a run-time part, so
// the walk of a fixed-size module allocates nothing and is usable in constant
// expressions. The walk is instantiated per (module type, visitor), not per
// name.
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>
#include <utility>

#include <boost/hana/at.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/tuple.hpp>

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

/// Number of elements of a boost::hana::tuple type (0 for any other type).
template <class X>
inline constexpr std::size_t hana_tuple_size = 0;
template <class... E>
inline constexpr std::size_t hana_tuple_size<hana::tuple<E...>> = sizeof...(E);

/// A boost::hana::tuple (of walkable modules: the fixed wrapper's heads).
template <class X>
inline constexpr bool is_hana_tuple = false;
template <class... E>
inline constexpr bool is_hana_tuple<hana::tuple<E...>> = true;

template <class X>
inline constexpr bool always_false = false;

/// A list of types (compared with std::is_same_v).
template <class... X>
struct type_list {};

/// Number of characters of a compile-time name (a boost::hana::string type).
template <class S>
inline constexpr std::size_t name_size = 0;
template <char... C>
inline constexpr std::size_t name_size<hana::string<C...>> = sizeof...(C);

/// The characters of a hana::string as a std::string_view (static storage).
template <class S>
constexpr std::string_view view_of(S) noexcept {
  return std::string_view(S::c_str(), name_size<S>);
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

/// The type of the member that `Access` reaches in a module of type M (cv and reference removed).
template <class M, class Access>
using member_type = std::remove_cvref_t<decltype(access_member(std::declval<const Access&>(),
                                                               std::declval<M&>()))>;

/// The entries of described module type M (a boost::hana::tuple type).
template <class M>
using entries_type = decltype(M::parameter_description().entries);

/// M's description, a constant (described M).
template <class M>
inline constexpr auto description_v = M::parameter_description();

// ---------------------------------------------------------------------------
// The names, once per type. The walk of a type X visits a fixed sequence of
// name slots: one per tensor, absent parameter, buffer and module (before its
// members), one per run-time range (its name, the prefix of its elements'
// names) and per optional member (its name when absent, followed by its
// member's slots). X's table holds these names relative to X ("" for X
// itself): the walk that starts at X reads them in order.

/// What a slot of a name table stands for.
enum class slot_kind : unsigned char { parameter, absent, buffer, module, range, optional, other };

/// The sizes of a type's name table and what its walk knows at compile time.
struct walk_counts {
  std::size_t slots;       ///< names in the table
  std::size_t chars;       ///< their characters
  std::size_t empty;       ///< names that are empty
  std::size_t parameters;  ///< parameter slots (of a fixed walk: its parameter tensors)
  std::size_t elements;    ///< the parameters' elements (of a fixed walk)
  bool fixed;              ///< every parameter known at compile time
};
constexpr walk_counts operator+(const walk_counts& a, const walk_counts& b) noexcept {
  return {a.slots + b.slots,           a.chars + b.chars,       a.empty + b.empty,
          a.parameters + b.parameters, a.elements + b.elements, a.fixed && b.fixed};
}
/// The counts of c's names under a prefix of m characters (`prefix.name`, or `prefix` for "").
constexpr walk_counts under(const walk_counts& c, std::size_t m) noexcept {
  if (m == 0) return c;
  return {c.slots, c.chars + c.slots * m + (c.slots - c.empty), 0, c.parameters, c.elements,
          c.fixed};
}
/// Number of decimal digits of i.
constexpr std::size_t digit_count(std::size_t i) noexcept {
  std::size_t n = 1;
  for (; i >= 10; i /= 10) ++n;
  return n;
}

template <class U>
constexpr walk_counts counts_of() noexcept;
/// The counts of type U (cv-unqualified, no reference).
template <class U>
inline constexpr walk_counts counts_v = counts_of<U>();

template <class M, class EntryName, class Access>
constexpr walk_counts entry_counts(const member_entry<EntryName, Access>*) noexcept {
  return under(counts_v<member_type<M, Access>>, name_size<EntryName>);
}
template <class M, class EntryName, class Access, class Present>
constexpr walk_counts entry_counts(
    const optional_member_entry<EntryName, Access, Present>*) noexcept {
  constexpr std::size_t m = name_size<EntryName>;
  return walk_counts{1, m, m == 0 ? 1u : 0u, 0, 0, false} +
         under(counts_v<member_type<M, Access>>, m);
}
template <class M, class EntryName>
constexpr walk_counts entry_counts(const buffer_entry<EntryName>*) noexcept {
  constexpr std::size_t m = name_size<EntryName>;
  return {1, m, m == 0 ? 1u : 0u, 0, 0, true};
}
template <class M, class... E>
constexpr walk_counts described_counts(const hana::tuple<E...>*) noexcept {
  return (walk_counts{1, 0, 1, 0, 0, true} + ... + entry_counts<M>(static_cast<const E*>(nullptr)));
}
template <class... E, std::size_t... I>
constexpr walk_counts tuple_counts(type_list<E...>, std::index_sequence<I...>) noexcept {
  return (walk_counts{0, 0, 0, 0, 0, true} + ... + under(counts_v<E>, digit_count(I)));
}
template <class... E>
constexpr walk_counts tuple_counts(const hana::tuple<E...>*) noexcept {
  return tuple_counts(type_list<std::remove_cvref_t<E>...>{}, std::index_sequence_for<E...>{});
}

template <class U>
constexpr walk_counts counts_of() noexcept {
  if constexpr (is_tensor_v<U>)
    return {1, 0, 1, 1, sizeof(U) / sizeof(typename U::value_type), true};
  else if constexpr (runtime_tensor<U>)
    return {1, 0, 1, 1, 0, false};
  else if constexpr (std::is_same_v<U, no_bias>)
    return {1, 0, 1, 0, 0, true};
  else if constexpr (described<U>)
    return described_counts<U>(static_cast<const entries_type<U>*>(nullptr));
  else if constexpr (is_hana_tuple<U>)
    return tuple_counts(static_cast<const U*>(nullptr));
  else  // a run-time range, or no walkable type (the walk reports that)
    return {1, 0, 1, 0, 0, false};
}

/// The names of one type's walk: slot i is chars[begin[i], begin[i] + size[i]).
template <std::size_t N, std::size_t C>
struct name_table {
  std::array<slot_kind, N> kind{};
  std::array<std::size_t, N> begin{};
  std::array<std::size_t, N> size{};
  std::array<char, C + 1> chars{};
};

template <class U>
constexpr auto build_table() noexcept;
/// The name table of type U (cv-unqualified, no reference).
template <class U>
inline constexpr auto table_v = build_table<U>();

/// Writes a name table slot by slot.
template <class Table>
struct table_writer {
  Table& t;
  std::size_t slot = 0;
  std::size_t at = 0;
  /// The next slot: `prefix.rel`, or the one that is not empty.
  constexpr void put(slot_kind k, std::string_view prefix, std::string_view rel) noexcept {
    t.kind[slot] = k;
    t.begin[slot] = at;
    for (const char c : prefix) t.chars[at++] = c;
    if (!prefix.empty() && !rel.empty()) t.chars[at++] = '.';
    for (const char c : rel) t.chars[at++] = c;
    t.size[slot] = at - t.begin[slot];
    ++slot;
  }
  /// The slots of type X's table, under `prefix`.
  template <class X>
  constexpr void put_all(std::string_view prefix) noexcept {
    const auto& x = table_v<X>;
    for (std::size_t i = 0; i < x.kind.size(); ++i)
      put(x.kind[i], prefix, std::string_view(x.chars.data() + x.begin[i], x.size[i]));
  }
};

template <class M, class W, class EntryName, class Access>
constexpr void put_entry(W& w, const member_entry<EntryName, Access>*) noexcept {
  w.template put_all<member_type<M, Access>>(view_of(EntryName{}));
}
template <class M, class W, class EntryName, class Access, class Present>
constexpr void put_entry(W& w, const optional_member_entry<EntryName, Access, Present>*) noexcept {
  w.put(slot_kind::optional, {}, view_of(EntryName{}));
  w.template put_all<member_type<M, Access>>(view_of(EntryName{}));
}
template <class M, class W, class EntryName>
constexpr void put_entry(W& w, const buffer_entry<EntryName>*) noexcept {
  w.put(slot_kind::buffer, {}, view_of(EntryName{}));
}
template <class M, class W, class... E>
constexpr void put_entries(W& w, const hana::tuple<E...>*) noexcept {
  (put_entry<M>(w, static_cast<const E*>(nullptr)), ...);
}
/// Element i of a hana::tuple under its index, "0", "1", ..., "12".
template <class X, class W>
constexpr void put_element(W& w, std::size_t i) noexcept {
  char digits[20] = {};
  const std::size_t n = digit_count(i);
  for (std::size_t k = n; k-- > 0; i /= 10) digits[k] = static_cast<char>('0' + i % 10);
  w.template put_all<X>(std::string_view(digits, n));
}
template <class W, class... E>
constexpr void put_elements(W& w, const hana::tuple<E...>*) noexcept {
  std::size_t i = 0;
  (put_element<std::remove_cvref_t<E>>(w, i++), ...);
}

template <class U>
constexpr auto build_table() noexcept {
  constexpr walk_counts c = counts_v<U>;
  name_table<c.slots, c.chars> t{};
  table_writer<name_table<c.slots, c.chars>> w{t};
  if constexpr (is_tensor_v<U> || runtime_tensor<U>) {
    w.put(slot_kind::parameter, {}, {});
  } else if constexpr (std::is_same_v<U, no_bias>) {
    w.put(slot_kind::absent, {}, {});
  } else if constexpr (described<U>) {
    w.put(slot_kind::module, {}, {});
    put_entries<U>(w, static_cast<const entries_type<U>*>(nullptr));
  } else if constexpr (is_hana_tuple<U>) {
    put_elements(w, static_cast<const U*>(nullptr));
  } else if constexpr (runtime_range<U>) {
    w.put(slot_kind::range, {}, {});
  } else {
    w.put(slot_kind::other, {}, {});
  }
  return t;
}

/// The names of table_v<U> as std::string_views into it.
template <class U>
constexpr auto slot_views() noexcept {
  const auto& t = table_v<U>;
  std::array<std::string_view, counts_v<U>.slots> v{};
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = std::string_view(t.chars.data() + t.begin[i], t.size[i]);
  return v;
}
/// The names of U's walk in walk order, relative to U (static storage).
template <class U>
inline constexpr auto slot_names_v = slot_views<U>();

// ---------------------------------------------------------------------------
// The walk over an object. `at` is the cursor in the name table of the
// module the walk started at (or of a run-time range's element).

/// Calls visit(tag, name, x) with name = run-time prefix + compile-time name.
template <class Tag, class Rt, class X, class V>
constexpr void emit(Tag tag, const Rt& rt, std::string_view name, X& x, V& visit) {
  if constexpr (std::is_same_v<Rt, static_prefix>) {
    visit(tag, name, x);
  } else if constexpr (std::is_same_v<Rt, unnamed_prefix>) {
    visit(tag, std::string_view{}, x);
  } else {
    Rt full = rt;
    full += name;
    visit(tag, std::string_view(full), x);
  }
}

template <class Rt, class X, class V>
constexpr void walk_node(const Rt& rt, const std::string_view*& at, X& x, V& visit);

/// One entry of a described module `m`.
template <class Rt, class M, class V, class EntryName, class Access>
constexpr void walk_entry(const Rt& rt, const std::string_view*& at, M& m, V& visit,
                          const member_entry<EntryName, Access>& e) {
  walk_node(rt, at, access_member(e.access, m), visit);
}
template <class Rt, class M, class V, class EntryName, class Access, class Present>
constexpr void walk_entry(const Rt& rt, const std::string_view*& at, M& m, V& visit,
                          const optional_member_entry<EntryName, Access, Present>& e) {
  if (e.present(m)) {
    ++at;
    walk_node(rt, at, access_member(e.access, m), visit);
  } else {
    emit(absent_tag{}, rt, *at, access_member(e.access, m), visit);
    at += 1 + counts_v<member_type<std::remove_cvref_t<M>, Access>>.slots;
  }
}
template <class Rt, class M, class V, class EntryName>
constexpr void walk_entry(const Rt& rt, const std::string_view*& at, M& m, V& visit,
                          const buffer_entry<EntryName>&) {
  emit(buffer_tag{}, rt, *at++, m, visit);
}
template <class Rt, class M, class V, class... E>
constexpr void walk_entries(const Rt& rt, const std::string_view*& at, M& m, V& visit,
                            const hana::tuple<E...>& entries) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (walk_entry(rt, at, m, visit, hana::at_c<I>(entries)), ...);
  }(std::index_sequence_for<E...>{});
}

/// The walk: x is a tensor (reported), mha::no_bias (reported as absent), a
/// described module (its entries in order), a hana::tuple or a run-time
/// range of modules (elements named by their index).
template <class Rt, class X, class V>
constexpr void walk_node(const Rt& rt, const std::string_view*& at, X& x, V& visit) {
  using U = std::remove_cvref_t<X>;
  if constexpr (is_tensor_v<U> || runtime_tensor<U>) {
    emit(parameter_tag{}, rt, *at++, x, visit);
  } else if constexpr (std::is_same_v<U, no_bias>) {
    emit(absent_tag{}, rt, *at++, x, visit);
  } else if constexpr (described<U>) {
    emit(module_tag{}, rt, *at++, x, visit);
    walk_entries(rt, at, x, visit, description_v<U>.entries);
  } else if constexpr (is_hana_tuple<U>) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (walk_node(rt, at, hana::at_c<I>(x), visit), ...);
    }(std::make_index_sequence<hana_tuple_size<U>>{});
  } else if constexpr (runtime_range<U> && std::is_same_v<Rt, unnamed_prefix>) {
    ++at;
    using element = std::remove_cvref_t<decltype(x[std::size_t{0}])>;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const std::string_view* e = slot_names_v<element>.data();
      walk_node(rt, e, x[i], visit);
    }
  } else if constexpr (runtime_range<U>) {
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
    using element = std::remove_cvref_t<decltype(x[std::size_t{0}])>;
    std::string base;
    if constexpr (!std::is_same_v<Rt, static_prefix>) base = rt;
    base += *at++;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const std::string_view* e = slot_names_v<element>.data();
      walk_node(base + "." + std::to_string(i) + ".", e, x[i], visit);
    }
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

/// Walks `m` (its names from the table of its type, after the run-time prefix `rt`).
template <class Rt, class M, class V>
constexpr void walk(const Rt& rt, M& m, V& visit) {
  const std::string_view* at = slot_names_v<std::remove_cvref_t<M>>.data();
  walk_node(rt, at, m, visit);
}

/// True when M's parameters are known at compile time (every fixed-size module).
template <class M>
inline constexpr bool is_static_v = described<M> && counts_v<std::remove_cvref_t<M>>.fixed;

/// Number of elements of all of M's parameters (M static).
template <class M>
constexpr std::size_t count() noexcept {
  return counts_v<std::remove_cvref_t<M>>.elements;
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

/// M's parameter names as std::string_views (M static), in walk order.
template <class M>
constexpr auto names() noexcept {
  using U = std::remove_cvref_t<M>;
  std::array<std::string_view, counts_v<U>.parameters> r{};
  std::size_t k = 0;
  for (std::size_t i = 0; i < counts_v<U>.slots; ++i)
    if (table_v<U>.kind[i] == slot_kind::parameter) r[k++] = slot_names_v<U>[i];
  return r;
}

template <class U>
constexpr auto tensors_of() noexcept;
/// The parameter tensor types of a fixed walk of U, in walk order (a type_list).
template <class U>
using tensors_t = decltype(tensors_of<std::remove_cvref_t<U>>());

/// type_list concatenation.
template <class... L>
struct concat_lists {
  using type = type_list<>;
};
template <class... A>
struct concat_lists<type_list<A...>> {
  using type = type_list<A...>;
};
template <class... A, class... B, class... Rest>
struct concat_lists<type_list<A...>, type_list<B...>, Rest...>
    : concat_lists<type_list<A..., B...>, Rest...> {};

template <class M, class EntryName, class Access>
constexpr auto entry_tensors(const member_entry<EntryName, Access>*) noexcept {
  return tensors_t<member_type<M, Access>>{};
}
template <class M, class Entry>
constexpr auto entry_tensors(const Entry*) noexcept {
  return type_list<>{};
}
template <class M, class... E>
constexpr auto described_tensors(const hana::tuple<E...>*) noexcept {
  return typename concat_lists<
      decltype(entry_tensors<M>(static_cast<const E*>(nullptr)))...>::type{};
}
template <class... E>
constexpr auto tuple_tensors(const hana::tuple<E...>*) noexcept {
  return typename concat_lists<tensors_t<E>...>::type{};
}
template <class U>
constexpr auto tensors_of() noexcept {
  if constexpr (is_tensor_v<U>)
    return type_list<U>{};
  else if constexpr (std::is_same_v<U, no_bias> || runtime_tensor<U>)
    return type_list<>{};
  else if constexpr (described<U>)
    return described_tensors<U>(static_cast<const entries_type<U>*>(nullptr));
  else if constexpr (is_hana_tuple<U>)
    return tuple_tensors(static_cast<const U*>(nullptr));
  else
    return type_list<>{};
}

}  // namespace mha::detail::params
