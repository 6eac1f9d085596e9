// mha/tensor.hpp -- owning fixed-size tensor.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <array>
#include <cstddef>
#include <type_traits>

#include <mha/config.hpp>
#include <mha/detail/api/contracts.hpp>

#include <mha/detail/macros.hpp>

namespace mha {

namespace detail {
/// Number of elements of an [Extents...] array (the product of the extents):
/// the size of mha::tensor, mha::tensor_view and detail::fixed_shape.
template <std::size_t... Extents>
inline constexpr std::size_t extent_product = (std::size_t{1} * ... * Extents);

/// Row-major offset of the element at `index...` (one index per extent) of a
/// [Extents...] array, as mha::tensor and mha::tensor_view lay it out.
/// Precondition: each index is below its extent (MHA_ASSERT in debug builds).
template <std::size_t... Extents, class... Index>
constexpr std::size_t row_major_offset(Index... index) noexcept {
  const std::size_t idx[] = {static_cast<std::size_t>(index)...};
  const std::size_t ext[] = {Extents...};
  std::size_t off = 0;
  for (std::size_t d = 0; d < sizeof...(Extents); ++d) {
    MHA_ASSERT(idx[d] < ext[d]);
    off = off * ext[d] + idx[d];
  }
  return off;
}
}  // namespace detail

/// Owning, fixed-size, row-major, contiguous tensor of `T` with shape
/// [Extents...] (e.g. `tensor<float, B, N, D>` is [batch][tokens][features]).
///
/// An aggregate whose only data member is the C array `elements`, so
///  - `tensor<float, 2, 6, 3> x{};` is all zeros (value-initialised),
///  - `tensor<float, 2, 3> w{{1, 2, 3, 4, 5, 6}};` fills it in row-major order,
///  - it is a literal type, usable in constant expressions and as `constexpr`
///    (ROM) data.
/// Element `x(i, j, k)` lives at `data()[(i * E1 + j) * E2 + k]`.
///
/// Compile-time errors (`static_assert`s starting with "mha::tensor", see
/// docs/diagnostics.md): rank 0, a zero extent, a non-floating `T`, the wrong
/// number of indices in `operator()`, extents whose size in bytes overflows
/// std::size_t, and assigning or converting a tensor of
/// another shape or element type to this one (e.g. a [3][2] weight into a
/// module's [2][3] `weight` member). Indices are checked with `MHA_ASSERT` in
/// debug builds only.
template <class T, std::size_t... Extents>
struct tensor {
  static_assert(std::is_floating_point_v<T>,
                "mha::tensor: T must be a floating-point type (float or double)");
  static_assert(detail::greater_than_zero<sizeof...(Extents)>,
                "mha::tensor: rank must be at least 1 (give at least one extent)");
  static_assert(detail::all_greater_than_zero<Extents...>,
                "mha::tensor: every extent must be greater than 0");
  static_assert(detail::product_fits<sizeof(T), Extents...>,
                "mha::tensor: the size in bytes (the product of the extents times sizeof(T)) "
                "exceeds the largest object size, PTRDIFF_MAX");

  /// Element type.
  using value_type = T;
  /// Number of dimensions.
  static constexpr std::size_t rank = sizeof...(Extents);
  /// Extent of every dimension, outermost first.
  static constexpr std::array<std::size_t, rank> extents{Extents...};
  /// Total number of elements (product of the extents), both a constant and
  /// a call: `T::size` is a `std::integral_constant<std::size_t, N>` object,
  /// which converts to std::size_t in constant expressions (`T::size == 36`,
  /// `float[T::size]`, `T::size / 3`, an argument of type std::size_t), and
  /// `t.size()` / `T::size()` call its constexpr operator() (as a standard
  /// container or PyTorch's `x.size()` is spelt; PyTorch's `numel()` too).
  static constexpr std::integral_constant<std::size_t, detail::extent_product<Extents...>> size{};
  /// Total number of elements (PyTorch's `Tensor.numel()`), = `size()`.
  static constexpr std::size_t numel() noexcept { return size(); }

  /// The elements, row-major. Public so that the type stays an aggregate.
  /// (The `> 0` guard only keeps a zero extent down to the one error above.)
  T elements[size() > 0 && detail::product_fits<sizeof(T), Extents...> ? size() : 1];
  static_assert(detail::within_inline_limit<sizeof(elements), MHA_DETAIL_MAX_INLINE_BYTES()>,
                "mha::tensor: sizeof exceeds MHA_MAX_INLINE_BYTES (the numbers: sizeof, limit); "
                "the limit refuses the type wherever the object lives, like Eigen's stack "
                "allocation limit: keep large tensors in owned storage (std::make_unique) in code "
                "built without MHA_MAX_INLINE_BYTES, or use mha::dynamic");

  /// Pointer to the first of `size()` contiguous elements.
  constexpr T* data() noexcept { return elements; }
  /// Pointer to the first of `size()` contiguous elements.
  constexpr const T* data() const noexcept { return elements; }
  constexpr T* begin() noexcept { return elements; }
  constexpr T* end() noexcept { return elements + size(); }
  constexpr const T* begin() const noexcept { return elements; }
  constexpr const T* end() const noexcept { return elements + size(); }

  /// Extent of dimension `d` (precondition: d < rank).
  static constexpr std::size_t extent(std::size_t d) noexcept { return extents[d]; }

  /// Element access, one index per extent. Precondition: each index is below
  /// its extent (checked by MHA_ASSERT in debug builds).
  template <class... Index>
  constexpr T& operator()(Index... index) noexcept {
    return elements[offset_of(index...)];
  }
  /// Element access, one index per extent (const).
  template <class... Index>
  constexpr const T& operator()(Index... index) const noexcept {
    return elements[offset_of(index...)];
  }

  /// Row-major offset of the element at `index...`.
  template <class... Index>
  static constexpr std::size_t offset_of(Index... index) noexcept {
    static_assert(detail::index_count_equals_rank<sizeof...(Index), rank>,
                  "mha::tensor::operator(): the number of indices must equal the tensor's rank");
    static_assert((std::is_integral_v<Index> && ...),
                  "mha::tensor::operator(): indices must be integers");
    if constexpr (sizeof...(Index) != rank || sizeof...(Index) == 0) {
      return 0;
    } else {
      return detail::row_major_offset<Extents...>(index...);
    }
  }

  /// Assigning a tensor of another shape or element type is a compile-time
  /// error whose message is ours (instead of "no match for operator="); the
  /// diagnostic shows both tensor types. Same-type assignment uses the
  /// implicit copy/move assignment, so the type stays a trivially copyable
  /// aggregate. Fix: assign a tensor<T, Extents...>, or copy elementwise.
  template <class U, std::size_t... F>
  constexpr tensor& operator=(const tensor<U, F...>&) noexcept {
    static_assert(detail::assignable_tensor<tensor<U, F...>, tensor>,
                  "mha::tensor: cannot assign a tensor of a different shape or element type");
    return *this;
  }
  /// Converting (initialising, e.g. a module's `weight` member in aggregate
  /// initialisation, or passing) a tensor to a tensor type of another shape or
  /// element type is a compile-time error with our message, like assignment.
  template <class U, std::size_t... F>
    requires(!std::is_same_v<tensor<U, F...>, tensor>)
  constexpr operator tensor<U, F...>() const noexcept {
    static_assert(detail::assignable_tensor<tensor, tensor<U, F...>>,
                  "mha::tensor: cannot initialise a tensor from a tensor of a different shape or "
                  "element type");
    return tensor<U, F...>{};
  }

  friend MHA_DETAIL_ISA_TAG constexpr bool operator==(const tensor& a, const tensor& b) noexcept {
    for (std::size_t i = 0; i < size(); ++i)
      if (!(a.elements[i] == b.elements[i])) return false;
    return true;
  }
};

/// True for any `mha::tensor` specialisation.
template <class X>
inline constexpr bool is_tensor_v = false;
template <class T, std::size_t... E>
inline constexpr bool is_tensor_v<tensor<T, E...>> = true;

}  // namespace mha

#include <mha/detail/macros_undef.hpp>

#endif  // MHA_DETAIL_NO_CXX20
