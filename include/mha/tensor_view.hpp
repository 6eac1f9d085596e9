// mha/tensor_view.hpp -- non-owning fixed-size view of caller memory.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>

#include <mha/config.hpp>
#include <mha/detail/api/contracts.hpp>
#include <mha/tensor.hpp>

namespace mha {

/// Non-owning, row-major, contiguous view of `size` elements of type `T` in
/// the caller's memory, with the compile-time shape [Extents...] of
/// `mha::tensor<T, Extents...>`: a `std::mdspan<T, std::extents<std::size_t,
/// Extents...>>` (layout_right) in C++20. `T` is `float` or `double`, `const`
/// for a read-only view (an input). The fixed-size modules take a view
/// wherever they take a tensor (as input, as output, in every forward), with
/// the same compile-time shape checks, so an audio buffer or another
/// library's tensor goes in without a copy:
///
///   float buf[6 * 3];                                   // the caller's samples
///   mha::tensor_view<const float, 6, 3> x{buf};         // [tokens][d_in]
///   auto y = m.forward(x);                              // y: mha::tensor<float, 6, DOut>
///
/// Element `v(i, j, k)` (also `v[std::array{i, j, k}]`, and `v[i]` for rank
/// 1, as std::mdspan) is `data()[(i * E1 + j) * E2 + k]`. Copying a view
/// copies the pointer; the caller keeps the memory alive while the view is
/// used. Converts implicitly from a `tensor<value_type, Extents...>` (const
/// tensors only to a view of const T), from a `tensor_view<value_type,
/// Extents...>` to a view of const T, and from a `std::span<T, size>` or a
/// `std::array<value_type, size>` of the same element count.
///
/// Alignment: `data` must be aligned for T (`alignof(T)`, as any `T*`;
/// checked by MHA_ASSERT in debug builds). Nothing more is assumed: the
/// kernels load and store vectors unaligned, so a view at any element offset
/// of a buffer (e.g. `buf + 1`) gives the same bits as an owning tensor.
/// (mha::tensor itself has no alignment beyond alignof(T) either.)
///
/// Compile-time errors ("mha::tensor_view: ...", one per mistake): T not a
/// (const) float or double, rank 0, a zero extent, the wrong number of
/// indices. A view of another shape does not convert (no such constructor).
template <class T, std::size_t... Extents>
class tensor_view {
  static_assert(std::is_floating_point_v<std::remove_const_t<T>> && !std::is_volatile_v<T>,
                "mha::tensor_view: T must be float or double, or const float or const double");
  static_assert(detail::greater_than_zero<sizeof...(Extents)>,
                "mha::tensor_view: rank must be at least 1 (give at least one extent)");
  static_assert(detail::all_greater_than_zero<Extents...>,
                "mha::tensor_view: every extent must be greater than 0");
  static_assert(detail::product_fits<sizeof(T), Extents...>,
                "mha::tensor_view: the size in bytes (the product of the extents times "
                "sizeof(T)) exceeds the largest object size, PTRDIFF_MAX");

  /// tensor<value_type, Extents...>: the owning tensor a view converts from
  /// (`element_or_float`, `at_least_1` and the [1] fallback keep an invalid
  /// view down to its one error above; the identity for every valid view).
  using tensor_type_ = std::conditional_t<
      (sizeof...(Extents) > 0) && detail::product_fits<sizeof(T), Extents...>,
      tensor<detail::element_or_float<std::remove_cv_t<T>>, detail::at_least_1<Extents>...>,
      tensor<detail::element_or_float<std::remove_cv_t<T>>, 1>>;

 public:
  /// Type of the elements as viewed (const for a read-only view), as std::mdspan.
  using element_type = T;
  /// Element type without const.
  using value_type = std::remove_cv_t<T>;
  using index_type = std::size_t;
  using size_type = std::size_t;
  using pointer = T*;
  using reference = T&;
  /// Number of dimensions.
  static constexpr std::size_t rank = sizeof...(Extents);
  /// Extent of every dimension, outermost first.
  static constexpr std::array<std::size_t, rank> extents{Extents...};
  /// Total number of elements (product of the extents), a constant and a
  /// call as mha::tensor::size: `V::size` converts to std::size_t,
  /// `v.size()` / `V::size()` call it.
  static constexpr std::integral_constant<std::size_t, detail::extent_product<Extents...>> size{};
  /// Total number of elements (PyTorch's `Tensor.numel()`), = `size()`.
  static constexpr std::size_t numel() noexcept { return size(); }

  /// A view of the `size` elements at `data` (row-major). Precondition: data
  /// points to at least `size` elements and is aligned for T.
  constexpr explicit tensor_view(T* data) noexcept : data_(data) {
    MHA_ASSERT(std::is_constant_evaluated() ||
               reinterpret_cast<std::uintptr_t>(data) % alignof(T) == 0);
  }
  /// A view of an owning tensor of the same shape.
  constexpr tensor_view(tensor_type_& t) noexcept : data_(t.data()) {}
  /// A read-only view of an owning tensor of the same shape.
  constexpr tensor_view(const tensor_type_& t) noexcept
    requires std::is_const_v<T>
      : data_(t.data()) {}
  /// No view of a temporary tensor: it would dangle at the end of the full
  /// expression (`tensor_view<const float, 6, 3> v = make_tensor();`).
  tensor_view(const tensor_type_&&) = delete;
  /// A read-only view of a writable view.
  template <class U>
    requires(std::is_const_v<T> && std::is_same_v<U, value_type>)
  constexpr tensor_view(const tensor_view<U, Extents...>& v) noexcept : data_(v.data()) {}
  /// A view of a span of exactly `size` elements.
  constexpr tensor_view(std::span<T, size()> s) noexcept : data_(s.data()) {}
  /// A view of a std::array of exactly `size` elements.
  constexpr tensor_view(std::array<value_type, size()>& a) noexcept : data_(a.data()) {}
  /// A read-only view of a std::array of exactly `size` elements.
  constexpr tensor_view(const std::array<value_type, size()>& a) noexcept
    requires std::is_const_v<T>
      : data_(a.data()) {}
  /// No view of a temporary std::array (it would dangle, as above).
  tensor_view(const std::array<value_type, size()>&&) = delete;

  /// Pointer to the first of `size` contiguous elements.
  constexpr T* data() const noexcept { return data_; }
  /// Same as data() (std::mdspan's name).
  constexpr T* data_handle() const noexcept { return data_; }
  constexpr T* begin() const noexcept { return data_; }
  constexpr T* end() const noexcept { return data_ + size(); }
  /// Extent of dimension `r` (precondition: r < rank).
  static constexpr std::size_t extent(std::size_t r) noexcept { return extents[r]; }

  /// Element access, one index per extent. Precondition: each index is below
  /// its extent (checked by MHA_ASSERT in debug builds).
  template <class... Index>
  constexpr T& operator()(Index... index) const noexcept {
    static_assert(detail::index_count_equals_rank<sizeof...(Index), rank>,
                  "mha::tensor_view::operator(): the number of indices must equal the view's rank");
    static_assert((std::is_integral_v<Index> && ...),
                  "mha::tensor_view::operator(): indices must be integers");
    if constexpr (sizeof...(Index) != rank || sizeof...(Index) == 0)
      return data_[0];
    else
      return data_[detail::row_major_offset<Extents...>(index...)];
  }
  /// Element access by an array of `rank` indices (std::mdspan's operator[]).
  template <class Index>
  constexpr T& operator[](const std::array<Index, rank>& index) const noexcept {
    return [&]<std::size_t... I>(std::index_sequence<I...>) -> T& {
      return (*this)(index[I]...);
    }(std::make_index_sequence<rank>{});
  }
  /// Element access of a rank-1 view (std::mdspan's operator[]).
  template <class Index>
    requires(rank == 1 && std::is_integral_v<Index>)
  constexpr T& operator[](Index i) const noexcept {
    return (*this)(i);
  }

 private:
  T* data_;
};

/// A view of a whole tensor: tensor_view v{t}; (const for a const tensor).
template <class T, std::size_t... E>
tensor_view(tensor<T, E...>&) -> tensor_view<T, E...>;
template <class T, std::size_t... E>
tensor_view(const tensor<T, E...>&) -> tensor_view<const T, E...>;

/// True for any `mha::tensor_view` specialisation.
template <class X>
inline constexpr bool is_tensor_view_v = false;
template <class T, std::size_t... E>
inline constexpr bool is_tensor_view_v<tensor_view<T, E...>> = true;

namespace detail {
/// The shape facts the fixed-size modules read from their tensor arguments:
/// an owning tensor or a view ("fixed tensor-like"): `tensor_type`, the tensor
/// of the same element type (without const) and extents, and its rank, element
/// count and last extent (read here without instantiating that tensor).
template <class X>
struct fixed_shape {
  static constexpr bool value = false;
};
template <class T, std::size_t... E>
struct fixed_extents {
  static constexpr bool value = true;
  using value_type = T;
  using tensor_type = tensor<T, E...>;
  static constexpr std::size_t rank = sizeof...(E);
  static constexpr std::size_t size = extent_product<E...>;
  static constexpr std::size_t last = [] {
    const std::size_t ext[] = {E..., 0};
    return ext[sizeof...(E) > 0 ? sizeof...(E) - 1 : 0];
  }();
};
template <class T, std::size_t... E>
struct fixed_shape<tensor<T, E...>> : fixed_extents<T, E...> {};
template <class T, std::size_t... E>
struct fixed_shape<tensor_view<T, E...>> : fixed_extents<std::remove_const_t<T>, E...> {};
/// An mha::tensor or an mha::tensor_view, const or not, a reference or not;
/// not volatile (their members are not volatile-qualified, so a forward could
/// not read or write it: such an argument matches no overload).
template <class X>
concept fixed_tensor_like =
    fixed_shape<std::remove_cvref_t<X>>::value && !std::is_volatile_v<std::remove_reference_t<X>>;
/// The tensor type of X's element type and shape (X a fixed_tensor_like).
template <class X>
using as_tensor_t = typename fixed_shape<std::remove_cvref_t<X>>::tensor_type;
/// An output argument of type Y (as deduced by a forwarding reference) can be
/// written: a non-const tensor lvalue, or a view (of any value category) of
/// non-const T.
template <class Y>
inline constexpr bool writable_output =
    std::is_lvalue_reference_v<Y> && !std::is_const_v<std::remove_reference_t<Y>>;
template <class T, std::size_t... E>
inline constexpr bool writable_output<tensor_view<T, E...>> = !std::is_const_v<T>;
template <class T, std::size_t... E>
inline constexpr bool writable_output<tensor_view<T, E...>&> = !std::is_const_v<T>;
template <class T, std::size_t... E>
inline constexpr bool writable_output<const tensor_view<T, E...>&> = !std::is_const_v<T>;

/// The static_asserts of mha::tensor<T, E...> hold (T floating-point, rank at
/// least 1, every extent > 0, the bytes within PTRDIFF_MAX and within Limit,
/// MHA_DETAIL_MAX_INLINE_BYTES() where read), computed from the template
/// arguments without instantiating the type. A rule added to mha::tensor must
/// be added here (test_introspection checks can_forward_v on each).
template <class T, std::size_t Limit, std::size_t... E>
consteval bool tensor_type_ok() noexcept {
  if constexpr (!std::is_floating_point_v<T> || sizeof...(E) == 0 || !all_greater_than_zero<E...>)
    return false;
  else if constexpr (!product_fits<sizeof(T), E...>)
    return false;
  else
    return within_inline_limit<sizeof(T) * extent_product<E...>, Limit>;
}
/// The static_asserts of mha::tensor_view<T, E...> hold (T float or double,
/// const or not, not volatile; rank at least 1, every extent > 0, the bytes
/// within PTRDIFF_MAX), without instantiating the type.
template <class T, std::size_t... E>
consteval bool tensor_view_type_ok() noexcept {
  if constexpr (!std::is_floating_point_v<std::remove_const_t<T>> || std::is_volatile_v<T> ||
                sizeof...(E) == 0 || !all_greater_than_zero<E...>)
    return false;
  else
    return product_fits<sizeof(T), E...>;
}
template <class X, std::size_t Limit>
inline constexpr bool fixed_type_ok_ = false;
template <class T, std::size_t Limit, std::size_t... E>
inline constexpr bool fixed_type_ok_<tensor<T, E...>, Limit> = tensor_type_ok<T, Limit, E...>();
template <class T, std::size_t Limit, std::size_t... E>
inline constexpr bool fixed_type_ok_<tensor_view<T, E...>, Limit> = tensor_view_type_ok<T, E...>();
/// X (cv/ref ignored) names a tensor or tensor_view type whose own
/// static_asserts hold, with Limit for MHA_MAX_INLINE_BYTES; read without
/// instantiating X, so that mha::can_forward_v can be false where a forward
/// reports the type (report_type_error).
template <class X, std::size_t Limit>
inline constexpr bool fixed_type_ok = fixed_type_ok_<std::remove_cvref_t<X>, Limit>;

/// Instantiates X's tensor or tensor_view type (precondition: fixed_type_ok
/// is false) so that its own static_assert reports the mistake: once, as a
/// class is instantiated once (no second error when the caller's object of
/// that type already did). For a forward given, by reference, an argument
/// whose type was never instantiated (e.g. a zero-extent view in a template).
template <class X>
constexpr void report_type_error() noexcept {
  // (an unevaluated sizeof: it instantiates the type, and a constant
  // evaluation that calls this reads nothing of it, so clang++ does not add
  // "not a constant expression" errors after the type's own)
  using bytes_type = decltype(sizeof(std::remove_cvref_t<X>));
  static_cast<void>(bytes_type{});
}

/// Bytes of the elements of X's shape (sizeof of the tensor of that shape),
/// read without instantiating X (precondition: X is fixed_tensor_like).
template <class X>
inline constexpr std::size_t tensor_bytes =
    sizeof(typename fixed_shape<std::remove_cvref_t<X>>::value_type) *
    fixed_shape<std::remove_cvref_t<X>>::size;

/// An output argument of type Y (as a forwarding reference deduces it) is one
/// that a forward writing a tensor of type Expected accepts: a
/// fixed_tensor_like of a valid type (fixed_type_ok, with Limit), writable
/// (writable_output), of tensor type Expected. The forwards static_assert the
/// last two with their messages and return this; mha::can_forward_v reads it.
template <class Y, class Expected, std::size_t Limit>
consteval bool output_argument_ok() noexcept {
  if constexpr (!fixed_tensor_like<Y>)
    return false;
  else
    return fixed_type_ok<Y, Limit> && writable_output<Y> &&
           std::is_same_v<as_tensor_t<Y>, Expected>;
}
}  // namespace detail

}  // namespace mha

#endif  // MHA_DETAIL_NO_CXX20
