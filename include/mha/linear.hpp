// mha/linear.hpp -- torch.nn.Linear with fixed sizes.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>
#include <type_traits>
#include <utility>

#include <mha/detail/contracts.hpp>
#include <mha/detail/kernels.hpp>
#include <mha/tensor.hpp>

#include <mha/detail/macros.hpp>

namespace mha {

namespace detail {
MHA_DETAIL_ISA_NAMESPACE {
/// `tensor<T, E..., Out>` for an input `tensor<T, E..., In>`.
template <class T, std::size_t Out, class Extents, class Seq>
struct replace_last;
template <class T, std::size_t Out, std::size_t... E, std::size_t... I>
struct replace_last<T, Out, tensor<T, E...>, std::index_sequence<I...>> {
  static constexpr std::size_t nth(std::size_t i) noexcept {
    const std::size_t ext[] = {E...};
    return ext[i];
  }
  using type = tensor<T, (I + 1 == sizeof...(E) ? Out : nth(I))...>;
};
template <class X, std::size_t Out>
using with_last_extent_t =
    typename replace_last<typename X::value_type, Out, X, std::make_index_sequence<X::rank>>::type;

/// The contracts of linear<T, In, ...>::forward for an input of element type U
/// and last extent Last (template arguments, so both compilers print them).
template <class U, class T, std::size_t Last, std::size_t In>
constexpr bool check_linear_input() noexcept {
  static_assert(same_element_type<U, T>,
                "mha::linear::forward: input element type must equal the layer's T "
                "(no implicit float/double conversion)");
  static_assert(equals<Last, In>, "mha::linear::forward: input last extent must equal InFeatures");
  return std::is_same_v<U, T> && Last == In;
}

/// Shared compile-time checks and body of linear<...>::forward.
template <class T, std::size_t In, std::size_t Out, class Bias, class U, std::size_t... E>
constexpr auto linear_forward(const T* weight, Bias bias, const tensor<U, E...>& x) noexcept {
  using X = tensor<U, E...>;
  constexpr bool ok = check_linear_input<U, T, X::extents[X::rank - 1], In>();
  with_last_extent_t<tensor<T, E...>, Out> y;
  if constexpr (ok)
    linear_rows(x.data(), size_c<X::size / In>{}, size_c<In>{}, weight, bias, size_c<Out>{},
                y.data());
  return y;
}
}  // namespace MHA_DETAIL_ISA
}  // namespace detail

/// torch.nn.Linear(InFeatures, OutFeatures, bias=Bias) with fixed sizes:
/// y = x * weight^T + bias (PyTorch docs, torch.nn.Linear).
///
/// Members: `weight` [OutFeatures][InFeatures] (PyTorch layout, row o holds
/// the weights of output feature o) and, only when `Bias`, `bias`
/// [OutFeatures]. An aggregate: `linear<float, 3, 2> l{};` is all zeros.
/// Compile-time errors ("mha::linear: ..."): InFeatures or OutFeatures zero;
/// forward with an input of another element type or whose last extent is not
/// InFeatures; a weight or bias tensor of another shape (see mha::tensor).
template <class T, std::size_t InFeatures, std::size_t OutFeatures, bool Bias = true>
struct linear {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "mha::linear: T must be float or double");
  static_assert(detail::greater_than_zero<InFeatures>,
                "mha::linear: InFeatures must be greater than 0");
  static_assert(detail::greater_than_zero<OutFeatures>,
                "mha::linear: OutFeatures must be greater than 0");
  using value_type = T;
  static constexpr std::size_t in_features = InFeatures;
  static constexpr std::size_t out_features = OutFeatures;
  static constexpr bool has_bias = Bias;
  static constexpr std::size_t parameter_count = OutFeatures * InFeatures + OutFeatures;

  /// [out_features][in_features] (the `at_least_1` only keeps a zero size
  /// down to the one error above; it is the identity for valid sizes).
  tensor<T, detail::at_least_1<OutFeatures>, detail::at_least_1<InFeatures>> weight;
  tensor<T, detail::at_least_1<OutFeatures>> bias;  ///< [out_features]

  /// y[..][o] = bias[o] + sum_i x[..][i] * weight[o][i], for x of any rank
  /// whose last extent is InFeatures; returns the same shape with last extent
  /// OutFeatures. Rows of y: [rows][OutFeatures] with rows = x.size / In.
  template <class U, std::size_t... E>
  MHA_DETAIL_ISA_TAG constexpr auto forward(const tensor<U, E...>& x) const noexcept {
    return detail::linear_forward<T, InFeatures, OutFeatures>(
        weight.data(), detail::present_bias<T>{bias.data()}, x);
  }
  /// Same as forward(x).
  template <class U, std::size_t... E>
  MHA_DETAIL_ISA_TAG constexpr auto operator()(const tensor<U, E...>& x) const noexcept {
    return forward(x);
  }
  /// Applies the layer to `rows` contiguous rows: x [rows][In] -> y [rows][Out].
  template <class Rows>
  MHA_DETAIL_ISA_TAG constexpr void apply_rows(const T* x, Rows rows, T* y) const noexcept {
    detail::linear_rows(x, rows, detail::size_c<InFeatures>{}, weight.data(),
                        detail::present_bias<T>{bias.data()}, detail::size_c<OutFeatures>{}, y);
  }
  /// Assigning a linear layer of another element type, shape or bias setting
  /// is a compile-time error with our message (instead of "no match for
  /// operator="); same-type assignment uses the implicit copy assignment.
  template <class U, std::size_t I, std::size_t O, bool B>
  constexpr linear& operator=(const linear<U, I, O, B>&) noexcept {
    static_assert(detail::same_module_type<linear<U, I, O, B>, linear>,
                  "mha::linear: cannot assign a linear layer of a different element type, shape "
                  "or bias setting");
    return *this;
  }
  /// Initialising a linear layer from one of another type is a compile-time
  /// error with our message, like assignment.
  template <class U, std::size_t I, std::size_t O, bool B>
    requires(!std::is_same_v<linear<U, I, O, B>, linear>)
  constexpr operator linear<U, I, O, B>() const noexcept {
    static_assert(detail::same_module_type<linear, linear<U, I, O, B>>,
                  "mha::linear: cannot initialise a linear layer from one of a different element "
                  "type, shape or bias setting");
    return {};
  }
};

/// torch.nn.Linear(InFeatures, OutFeatures, bias=False): y = x * weight^T.
/// Member `weight` [OutFeatures][InFeatures]; no `bias` member.
template <class T, std::size_t InFeatures, std::size_t OutFeatures>
struct linear<T, InFeatures, OutFeatures, false> {
  static_assert(detail::greater_than_zero<InFeatures>,
                "mha::linear: InFeatures must be greater than 0");
  static_assert(detail::greater_than_zero<OutFeatures>,
                "mha::linear: OutFeatures must be greater than 0");
  using value_type = T;
  static constexpr std::size_t in_features = InFeatures;
  static constexpr std::size_t out_features = OutFeatures;
  static constexpr bool has_bias = false;
  static constexpr std::size_t parameter_count = OutFeatures * InFeatures;

  /// [out_features][in_features]
  tensor<T, detail::at_least_1<OutFeatures>, detail::at_least_1<InFeatures>> weight;

  /// y[..][o] = sum_i x[..][i] * weight[o][i] (see the Bias = true overload).
  template <class U, std::size_t... E>
  MHA_DETAIL_ISA_TAG constexpr auto forward(const tensor<U, E...>& x) const noexcept {
    return detail::linear_forward<T, InFeatures, OutFeatures>(weight.data(), nullptr, x);
  }
  /// Same as forward(x).
  template <class U, std::size_t... E>
  MHA_DETAIL_ISA_TAG constexpr auto operator()(const tensor<U, E...>& x) const noexcept {
    return forward(x);
  }
  /// Applies the layer to `rows` contiguous rows: x [rows][In] -> y [rows][Out].
  template <class Rows>
  MHA_DETAIL_ISA_TAG constexpr void apply_rows(const T* x, Rows rows, T* y) const noexcept {
    detail::linear_rows(x, rows, detail::size_c<InFeatures>{}, weight.data(),
                        nullptr, detail::size_c<OutFeatures>{}, y);
  }
  /// Assigning a linear layer of another element type, shape or bias setting
  /// is a compile-time error with our message (instead of "no match for
  /// operator="); same-type assignment uses the implicit copy assignment.
  template <class U, std::size_t I, std::size_t O, bool B>
  constexpr linear& operator=(const linear<U, I, O, B>&) noexcept {
    static_assert(detail::same_module_type<linear<U, I, O, B>, linear>,
                  "mha::linear: cannot assign a linear layer of a different element type, shape "
                  "or bias setting");
    return *this;
  }
  /// Initialising a linear layer from one of another type is a compile-time
  /// error with our message, like assignment.
  template <class U, std::size_t I, std::size_t O, bool B>
    requires(!std::is_same_v<linear<U, I, O, B>, linear>)
  constexpr operator linear<U, I, O, B>() const noexcept {
    static_assert(detail::same_module_type<linear, linear<U, I, O, B>>,
                  "mha::linear: cannot initialise a linear layer from one of a different element "
                  "type, shape or bias setting");
    return {};
  }
};

}  // namespace mha

#include <mha/detail/macros_undef.hpp>

#endif  // MHA_DETAIL_NO_CXX20
