// mha/detail/api/contracts.hpp -- the predicates behind mha's compile-time shape
// contracts.
//
// Every shape rule of the library is a `static_assert(detail::<rule><numbers>,
// "mha::<api>: <rule in words>")`. The predicate is a variable template whose
// name states the rule and whose template arguments are the values being
// checked, so both compilers print the offending numbers right at our message:
//
//   g++ 12:     error: static assertion failed: mha::multi_head_attention: DOut must be ...
//               note: 'mha::detail::divisible_by<5, 2>' evaluates to false
//   clang++ 14: error: static_assert failed due to requirement
//               'mha::detail::divisible_by<5, 2>' "mha::multi_head_attention: DOut must be ..."
//
// (A plain `a % b == 0` condition would show "5 % 2 == 0" on g++ but only the
// unsubstituted expression on clang++.) The predicates are trivial constant
// expressions: no class template is instantiated to evaluate them.
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace mha {
template <class T, std::size_t... Extents>
struct tensor;
}  // namespace mha

namespace mha::detail {

/// T is float or double (the element types the kernels are written for).
template <class T>
inline constexpr bool float_or_double = std::is_same_v<T, float> || std::is_same_v<T, double>;

/// T when float_or_double<T>, else float: the element type of member tensors
/// of a template whose "T must be float or double" static_assert has fired, so
/// that the user sees that one error (T itself for every valid instantiation).
template <class T>
using element_or_float = std::conditional_t<float_or_double<T>, T, float>;

/// A type that converts to bool implicitly but is not bool (an integer, a
/// floating-point number, an unscoped enumeration, a pointer): the type of an
/// argument that the dynamic modules' deleted constructors refuse where
/// qkv_bias (mha::dynamic::linear: with_bias) goes, since it would silently
/// become a bool (the book's `MultiHeadAttention(3, 2, 6, 0, 2)` with an
/// integer dropout would take 0 as num_heads and 2 as qkv_bias).
template <class B>
concept converts_to_bool_silently = !std::same_as<B, bool> && std::convertible_to<B, bool>;

/// Value > 0.
template <std::size_t Value>
inline constexpr bool greater_than_zero = Value > 0;

/// Every one of Values... is > 0 (e.g. the extents of a tensor).
template <std::size_t... Values>
inline constexpr bool all_greater_than_zero = ((Values > 0) && ...);

/// The largest object, in bytes, that g++ and clang++ accept (PTRDIFF_MAX:
/// g++ "exceeds maximum object size", clang++ "array is too large"), and the
/// largest distance that pointer subtraction defines. A size between it and
/// SIZE_MAX fits std::size_t but no object.
inline constexpr std::size_t max_object_bytes = static_cast<std::size_t>(PTRDIFF_MAX);

/// The product of Values is at most Bound, computed without overflow.
template <std::size_t Bound, std::size_t... Values>
inline constexpr bool product_at_most = [] {
  std::size_t product = 1;
  bool fits = true;
  ((fits = fits && (Values == 0 || product <= Bound / Values), product *= Values), ...);
  return fits;
}();

/// The product of Values is at most max_object_bytes (a tensor's bytes, with
/// sizeof(T) as one of the values): an array of that many bytes can exist.
template <std::size_t... Values>
inline constexpr bool product_fits = product_at_most<max_object_bytes, Values...>;

/// Divisor > 0 and Value % Divisor == 0.
template <std::size_t Value, std::size_t Divisor>
inline constexpr bool divisible_by = Divisor > 0 && Value % Divisor == 0;

/// Got == Want.
template <std::size_t Got, std::size_t Want>
inline constexpr bool equals = Got == Want;

/// Value <= Limit.
template <std::size_t Value, std::size_t Limit>
inline constexpr bool at_most = Value <= Limit;

/// Index < Count.
template <std::size_t Index, std::size_t Count>
inline constexpr bool index_below = Index < Count;

/// Rank is 2 ([tokens][features]) or 3 ([batch][tokens][features]).
template <std::size_t Rank>
inline constexpr bool rank_is_2_or_3 = Rank == 2 || Rank == 3;

/// The number of indices given to an element access equals the tensor's rank.
template <std::size_t Given, std::size_t Rank>
inline constexpr bool index_count_equals_rank = Given == Rank;

/// Got and Want are the same element type (no implicit float/double conversion).
template <class Got, class Want>
inline constexpr bool same_element_type = std::is_same_v<Got, Want>;

/// Got and Want are the same type (used for whole tensor shapes, whose extents
/// then appear in the diagnostic: same_tensor_type<mha::tensor<float, 3, 2>, ...>).
template <class Got, class Want>
inline constexpr bool same_tensor_type = std::is_same_v<Got, Want>;

/// A tensor of type From may be assigned to a tensor of type To: only when
/// the element type and every extent agree (the diagnostic shows both types).
template <class From, class To>
inline constexpr bool assignable_tensor = std::is_same_v<From, To>;

/// A layer or module of type From may be assigned to one of type To: only
/// when they are the same type (the diagnostic shows both, with their sizes).
template <class From, class To>
inline constexpr bool same_module_type = std::is_same_v<From, To>;

/// The workspace's <Batch, Tokens> equals the input's <B, N>.
template <std::size_t WorkspaceBatch, std::size_t WorkspaceTokens, std::size_t InputBatch,
          std::size_t InputTokens>
inline constexpr bool workspace_matches_input =
    WorkspaceBatch == InputBatch && WorkspaceTokens == InputTokens;

/// The KV cache's batch equals the input's batch B.
template <std::size_t CacheBatch, std::size_t InputBatch>
inline constexpr bool cache_matches_input = CacheBatch == InputBatch;

/// The Offset % RowStride + Cols <= RowStride: a block's columns do not run
/// past the end of a row into the next one.
template <std::size_t Offset, std::size_t Cols, std::size_t RowStride>
inline constexpr bool block_columns_within_row =
    RowStride > 0 && Offset % RowStride + Cols <= RowStride;

/// A block whose layout needs RequiredSpan elements fits in a buffer of Size.
template <std::size_t RequiredSpan, std::size_t Size>
inline constexpr bool block_within_tensor = RequiredSpan <= Size;

/// Value, or 1 for 0: used in member types of a template whose parameters
/// already failed a "must be greater than 0" static_assert, so that the user
/// sees that one error instead of a second one from mha::tensor.
template <std::size_t Value>
inline constexpr std::size_t at_least_1 = Value > 0 ? Value : 1;

/// Index if Index < Count, else 0: keeps an out-of-range head index down to the
/// one static_assert that reports it.
template <std::size_t Index, std::size_t Count>
inline constexpr std::size_t clamp_index = Index < Count ? Index : 0;

/// Value / Divisor, or 1 when that is 0 or Divisor is 0 (a head width that
/// stays valid while a NumHeads static_assert reports the real problem).
template <std::size_t Value, std::size_t Divisor>
inline constexpr std::size_t quotient_or_1 =
    (Divisor == 0 || Value / (Divisor == 0 ? 1 : Divisor) == 0) ? 1 : Value / Divisor;

/// An object of Bytes bytes is within Limit (MHA_DETAIL_MAX_INLINE_BYTES(),
/// detail/macros.hpp: MHA_MAX_INLINE_BYTES or no limit), or one of its parts,
/// the largest of which has LargestPart bytes, already exceeds it (that part's
/// own static_assert reported it: one error per mistake).
template <std::size_t Bytes, std::size_t Limit, std::size_t LargestPart = 0>
inline constexpr bool within_inline_limit = Bytes <= Limit || LargestPart > Limit;

/// Always false, for a static_assert in a template that must not be used; the
/// template arguments show up in the diagnostic.
template <class...>
inline constexpr bool always_false = false;

}  // namespace mha::detail
