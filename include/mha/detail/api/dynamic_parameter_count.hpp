// mha/detail/api/dynamic_parameter_count.hpp -- parameter_count() of the
// mha::dynamic modules, computed by the parameter walk
// (detail/params/parameter_walk.hpp), written once.
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <cstddef>
#include <string_view>

#include <mha/detail/params/parameter_walk.hpp>

#include <mha/detail/macros.hpp>

namespace mha::detail {
MHA_DETAIL_ISA_NAMESPACE {

/// The walk's visitor for parameter_count(): adds the size of every parameter
/// tensor to `n` (absent parameters, buffers and modules add nothing).
struct parameter_counter {
  std::size_t& n;
  template <class X>
  constexpr void operator()(params::parameter_tag, std::string_view, const X& tensor) const noexcept {
    n += tensor.size();
  }
  template <class Tag, class X>
  constexpr void operator()(Tag, std::string_view, const X&) const noexcept {}
};

}  // namespace MHA_DETAIL_ISA

/// CRTP base of the mha::dynamic modules (mha::dynamic::linear directly, the
/// attention modules through detail::dynamic_module): parameter_count() by
/// the walk of Derived's parameter_description(). Empty; the same class in
/// every translation unit; its member carries the ISA's ABI tag (it runs the
/// walk, code of its own: docs/design.md, "ISA namespaces").
template <class Derived>
class walked_parameter_count {
 public:
  /// Number of parameter elements: the sum of the sizes of the tensors
  /// mha::for_each_parameter visits, in their present shapes (PyTorch:
  /// `sum(p.numel() for p in m.parameters())`); an absent bias counts 0.
  /// Walks without names: no allocation, no exception.
  MHA_DETAIL_ISA_TAG std::size_t parameter_count() const noexcept {
    std::size_t n = 0;
    const parameter_counter visit{n};
    params::walk(params::unnamed_prefix{}, static_cast<const Derived&>(*this), visit);
    return n;
  }
};

}  // namespace mha::detail

#include <mha/detail/macros_undef.hpp>
