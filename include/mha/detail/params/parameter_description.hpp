// mha/detail/params/parameter_description.hpp -- the vocabulary in which a module
// describes its members to the parameter walk (<mha/parameters.hpp>):
// compile-time names (boost::hana::string, written with BOOST_HANA_STRING)
// paired with accessors.
//
// A module M is walkable when it has
//
//   static constexpr auto parameter_description() noexcept {
//     return mha::detail::describe(BOOST_HANA_STRING("mha::my_module"),
//                                  mha::detail::member(BOOST_HANA_STRING("W_query"), &M::w_query),
//                                  ...);
//   }
//
// listing, in PyTorch's named_parameters() order, its parameter tensors and
// sub-modules (member), the sub-modules whose presence is a run-time fact
// (optional_member), and the state_dict buffers that are no parameters
// (buffer: the book's causal `mask`). A member may be an mha::tensor or an
// mha::dynamic::tensor (a parameter), mha::no_bias (an absent parameter:
// PyTorch's bias=None), a walkable module, a boost::hana::tuple of walkable
// modules or a run-time range of them (std::vector; elements named "0", "1",
// ... as in nn.ModuleList).
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <type_traits>

#include <boost/hana/string.hpp>
#include <boost/hana/tuple.hpp>

namespace mha::detail {

/// A member named `Name` (a boost::hana::string type), reached from the
/// module by `access`: a pointer to data member or a callable taking the
/// module (const or not) and returning a reference.
template <class Name, class Access>
struct member_entry {
  Access access;  ///< how to reach the member from the module
};

/// A member named `Name` that exists when `present(module)` is true (a
/// run-time fact: mha::dynamic::linear's bias); absent it is as mha::no_bias.
template <class Name, class Access, class Present>
struct optional_member_entry {
  Access access;    ///< how to reach the member from the module
  Present present;  ///< whether it exists in a given module object
};

/// A state_dict buffer named `Name` that the module does not store (the
/// book's causal `mask`): no parameter; the safetensors loader accepts it
/// (and checks it) in a checkpoint_format::book file.
template <class Name>
struct buffer_entry {};

/// A module's description: its name for messages (`Name`, e.g.
/// "mha::causal_attention") and its entries in named_parameters() order.
template <class Name, class Entries>
struct module_description {
  Entries entries;  ///< boost::hana::tuple of member/optional_member/buffer entries
};

/// member(BOOST_HANA_STRING("W_query"), &M::w_query): the member's entry.
template <class Name, class Access>
constexpr member_entry<Name, Access> member(Name, Access access) noexcept {
  return {access};
}
/// optional_member(name, access, present): an entry that exists when present(module).
template <class Name, class Access, class Present>
constexpr optional_member_entry<Name, Access, Present> optional_member(Name, Access access,
                                                                       Present present) noexcept {
  return {access, present};
}
/// buffer(BOOST_HANA_STRING("mask")): a buffer's entry (not a parameter).
template <class Name>
constexpr buffer_entry<Name> buffer(Name) noexcept {
  return {};
}
/// describe(BOOST_HANA_STRING("mha::causal_attention"), entries...): the
/// value a module's parameter_description() returns.
template <class Name, class... Entries>
constexpr module_description<Name, boost::hana::tuple<Entries...>> describe(Name,
                                                                           Entries... e) noexcept {
  return {boost::hana::make_tuple(e...)};
}

/// The description of a module with the book's three projections
/// (causal_attention, multi_head_attention and their mha::dynamic twins):
/// `W_query`, `W_key`, `W_value` (members w_query, w_key, w_value), then
/// `more...` entries (multi_head_attention's out_proj), then the causal `mask`
/// buffer, as the book's classes list them.
template <class M, class Name, class... More>
constexpr auto book_attention_description(Name name, More... more) noexcept {
  return describe(name, member(BOOST_HANA_STRING("W_query"), &M::w_query),
                  member(BOOST_HANA_STRING("W_key"), &M::w_key),
                  member(BOOST_HANA_STRING("W_value"), &M::w_value), more...,
                  buffer(BOOST_HANA_STRING("mask")));
}

/// The member `access` reaches in `module` (a reference, const when the
/// module is): `module.*access` for a pointer to data member, else
/// `access(module)`.
template <class Access, class X>
constexpr decltype(auto) access_member(const Access& access, X& module) noexcept {
  if constexpr (std::is_member_object_pointer_v<Access>)
    return (module.*access);
  else
    return access(module);
}

}  // namespace mha::detail
