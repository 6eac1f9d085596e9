// mha/linear.hpp -- torch.nn.Linear with fixed sizes.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <mha/config.hpp>
#include <mha/detail/api/contracts.hpp>
#include <mha/detail/kernels/kernels.hpp>
#include <mha/detail/params/parameter_description.hpp>
#include <mha/detail/arch/stack_bound.hpp>
#include <mha/tensor.hpp>
#include <mha/tensor_view.hpp>

#include <mha/detail/macros.hpp>

namespace mha {

/// The `bias` member of a layer without bias (linear<T, In, Out, false>): an
/// empty placeholder that takes no storage, as PyTorch's nn.Linear(bias=False)
/// has `bias = None`. Compares equal to any other no_bias.
struct no_bias {
  friend constexpr bool operator==(no_bias, no_bias) noexcept { return true; }
};

namespace detail {
MHA_DETAIL_ISA_NAMESPACE {
/// `tensor<T, E..., Out>` for an input `tensor<T, E..., In>` (a zero extent
/// of E... becomes 1: the input's type reported it, see linear_input_ok).
template <class T, std::size_t Out, class Extents, class Seq>
struct replace_last;
template <class T, std::size_t Out, class U, std::size_t... E, std::size_t... I>
struct replace_last<T, Out, tensor<U, E...>, std::index_sequence<I...>> {
  static constexpr std::size_t nth(std::size_t i) noexcept {
    const std::size_t ext[] = {E...};
    return ext[i];
  }
  using type = tensor<T, (I + 1 == sizeof...(E) ? Out : at_least_1<nth(I)>)...>;
};
/// The output tensor type of a linear layer of element type T and Out
/// features for an input X (a tensor or tensor_view): X's shape with last
/// extent Out.
template <class T, std::size_t Out, class X>
using linear_output_t =
    typename replace_last<T, Out, as_tensor_t<X>,
                          std::make_index_sequence<fixed_shape<std::remove_cvref_t<X>>::rank>>::type;

/// The input rules of linear<T, In, ...>::forward, computed once: x of type
/// X is a fixed_tensor_like of a valid type (fixed_type_ok with Limit: no
/// zero extent), of element type T, with last extent In. check_linear_argument
/// asserts them and returns this; mha::can_forward_v reads it.
template <class X, class T, std::size_t In, std::size_t Limit>
consteval bool linear_input_ok() noexcept {
  if constexpr (!fixed_tensor_like<X>) {
    return false;
  } else {
    using XS = fixed_shape<std::remove_cvref_t<X>>;
    return fixed_type_ok<X, Limit> && same_element_type<typename XS::value_type, T> &&
           XS::last == In;
  }
}

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
/// The contracts of linear<T, In, ...>::forward for an input x of type X, in
/// order: a valid type (else the type's own static_assert reports it,
/// report_type_error), then check_linear_input. Returns linear_input_ok.
template <class T, std::size_t In, class X>
constexpr bool check_linear_argument() noexcept {
  if constexpr (!fixed_type_ok<X, MHA_DETAIL_MAX_INLINE_BYTES()>) {
    report_type_error<X>();
    return false;
  } else {
    using XS = fixed_shape<std::remove_cvref_t<X>>;
    static_cast<void>(check_linear_input<typename XS::value_type, T, XS::last, In>());
    return linear_input_ok<X, T, In, MHA_DETAIL_MAX_INLINE_BYTES()>();
  }
}
/// The contracts of linear<T, In, Out, ...>::forward(x, out): those of the
/// input, then an output Y of a valid type (else reported by that type),
/// writable, of x's shape with last extent Out. Returns output_argument_ok.
template <class T, std::size_t In, std::size_t Out, class X, class Y>
constexpr bool check_linear_output() noexcept {
  if constexpr (!check_linear_argument<T, In, X>()) {
    return false;
  } else if constexpr (!fixed_type_ok<Y, MHA_DETAIL_MAX_INLINE_BYTES()>) {
    report_type_error<Y>();
    return false;
  } else {
    static_assert(writable_output<Y>,
                  "mha::linear::forward: output must be writable: a non-const tensor lvalue, or "
                  "a tensor_view of non-const T");
    if constexpr (!writable_output<Y>) {
      return false;
    } else {
      static_assert(same_tensor_type<as_tensor_t<Y>, linear_output_t<T, Out, X>>,
                    "mha::linear::forward: output must have the input's shape with last extent "
                    "OutFeatures (and the layer's T)");
      return output_argument_ok<Y, linear_output_t<T, Out, X>, MHA_DETAIL_MAX_INLINE_BYTES()>();
    }
  }
}

/// What linear<T, In, ...>::forward(x) puts on the stack besides its input:
/// the output Y (a tensor type) it returns, the packed weight panel of
/// gemm::gemm_abt (depth In) and the register tiles (bounds of
/// detail/arch/stack_bound.hpp, the same on every target); read without
/// instantiating Y.
template <class T, std::size_t In, class Y>
inline constexpr std::size_t linear_stack_bytes =
    tensor_bytes<Y> + stack_bound::gemm_panel<In> + stack_bound::register_tiles;

/// linear<T, In, Out, ...>::forward(x) (no Y) or forward(x, out) (one Y, the
/// type forward's forwarding reference deduces) compiles, by the rules its
/// body reads: linear_input_ok; for forward(x) a valid output type and
/// linear_stack_bytes within MHA_STACK_WORKSPACE_LIMIT; for forward(x, out)
/// output_argument_ok. Read by mha::can_forward_v.
template <class T, std::size_t In, std::size_t Out, std::size_t Limit, class X, class... Y>
consteval bool linear_forward_ok() noexcept {
  if constexpr (!linear_input_ok<X, T, In, Limit>()) {
    return false;
  } else if constexpr (sizeof...(Y) == 0) {
    using R = linear_output_t<T, Out, X>;
    if constexpr (!fixed_type_ok<R, Limit>)
      return false;
    else
      return linear_stack_bytes<T, In, R> <= MHA_STACK_WORKSPACE_LIMIT;
  } else {
    return (output_argument_ok<Y, linear_output_t<T, Out, X>, Limit>() && ...);
  }
}

/// Shared compile-time checks and body of linear<...>::forward: y = x W^T (+ b)
/// returned by value, so its stack use (linear_stack_bytes) is bounded by
/// MHA_STACK_WORKSPACE_LIMIT.
template <class T, std::size_t In, std::size_t Out, class Bias, class X>
constexpr auto linear_forward(dense_weights<T> weight, Bias bias, const X& x) noexcept {
  using XS = fixed_shape<std::remove_cvref_t<X>>;
  using Y = linear_output_t<T, Out, X>;
  constexpr bool ok = check_linear_argument<T, In, X>();
  Y y;
  if constexpr (ok && fixed_type_ok<Y, MHA_DETAIL_MAX_INLINE_BYTES()>) {
    // (above MHA_MAX_INLINE_BYTES, Y's own static_assert has reported it)
    static_assert(at_most<linear_stack_bytes<T, In, Y>, MHA_STACK_WORKSPACE_LIMIT>,
                  "mha::linear::forward: the stack use of forward(x) (the output it returns by "
                  "value, one packed weight panel and the register tiles; the numbers: bytes, "
                  "limit) exceeds MHA_STACK_WORKSPACE_LIMIT bytes; use forward(x, out) or "
                  "apply_rows(x, rows, y) into caller-owned storage");
    if constexpr (linear_stack_bytes<T, In, Y> <= MHA_STACK_WORKSPACE_LIMIT)
      linear_rows(x.data(), size_c<XS::size / In>{}, size_c<In>{}, weight, bias, size_c<Out>{},
                  y.data());
  }
  return y;
}
}  // namespace MHA_DETAIL_ISA

/// The type of linear<T, In, Out, Bias>::bias: a [Out] tensor when Bias, else
/// mha::no_bias (no storage). (`element_or_float` and `at_least_1` keep an
/// invalid T or a zero size down to linear's one error; they are the identity
/// for every valid layer.)
template <class T, std::size_t Out, bool Bias>
using linear_bias_t =
    std::conditional_t<Bias, tensor<element_or_float<T>, at_least_1<Out>>, no_bias>;
}  // namespace detail

/// torch.nn.Linear(InFeatures, OutFeatures, bias=Bias) with fixed sizes:
/// y = x * weight^T + bias (PyTorch docs, torch.nn.Linear), or y = x * weight^T
/// without bias.
///
/// Members: `weight` [OutFeatures][InFeatures] (PyTorch layout, row o holds
/// the weights of output feature o) and `bias`: [OutFeatures] when `Bias`,
/// else an empty mha::no_bias (PyTorch's `bias = None`; no storage). One
/// definition for both settings, so every check and function is written once.
/// An aggregate: `linear<float, 3, 2> l{};` is all zeros, `l{w, b}`,
/// `l{{1, 2, 3, 4, 5, 6}, {7, 8}}` and `l{.weight = w, .bias = b}` take a
/// weight and a bias; `linear<float, 3, 2, false> l{w};` a weight.
/// Compile-time errors ("mha::linear: ..."), one per mistake: T not float or
/// double; InFeatures or OutFeatures zero; forward with an input of another
/// element type or whose last extent is not InFeatures; a by-value forward
/// whose stack use exceeds MHA_STACK_WORKSPACE_LIMIT; a layer above MHA_MAX_INLINE_BYTES
/// (when defined); assigning a layer of another type; a weight or bias tensor
/// of another shape (see mha::tensor).
template <class T, std::size_t InFeatures, std::size_t OutFeatures, bool Bias = true>
struct linear {
  static_assert(detail::float_or_double<T>, "mha::linear: T must be float or double");
  static_assert(detail::greater_than_zero<InFeatures>,
                "mha::linear: InFeatures must be greater than 0");
  static_assert(detail::greater_than_zero<OutFeatures>,
                "mha::linear: OutFeatures must be greater than 0");
  /// [out_features][in_features] (PyTorch's layout: row o holds the weights
  /// of output feature o)
  tensor<detail::element_or_float<T>, detail::at_least_1<OutFeatures>,
         detail::at_least_1<InFeatures>>
      weight;
  /// [out_features] when Bias; else mha::no_bias, which takes no storage
  /// (sizeof(linear<T, In, Out, false>) is that of the weight).
  [[no_unique_address]] detail::linear_bias_t<T, OutFeatures, Bias> bias{};

  static_assert(
      detail::within_inline_limit<sizeof(weight) + (Bias ? sizeof(bias) : 0),
                                  MHA_DETAIL_MAX_INLINE_BYTES(), sizeof(weight)>,
      "mha::linear: sizeof exceeds MHA_MAX_INLINE_BYTES (the numbers: sizeof, limit); the limit "
      "refuses the type wherever the object lives, like Eigen's stack allocation limit: keep large "
      "layers in owned storage (std::make_unique) in code built without MHA_MAX_INLINE_BYTES, or "
      "use mha::dynamic");
  using value_type = T;
  static constexpr std::size_t in_features = InFeatures;
  static constexpr std::size_t out_features = OutFeatures;
  static constexpr bool has_bias = Bias;
  /// OutFeatures * InFeatures weights, plus OutFeatures biases when Bias.
  static constexpr std::size_t parameter_count =
      OutFeatures * InFeatures + (Bias ? OutFeatures : 0);
  /// The members for mha::for_each_parameter (nn.Linear's named_parameters():
  /// `weight`, `bias`; a no_bias bias is no parameter).
  static constexpr auto parameter_description() noexcept {
    return detail::describe(BOOST_HANA_STRING("mha::linear"),
                            detail::member(BOOST_HANA_STRING("weight"), &linear::weight),
                            detail::member(BOOST_HANA_STRING("bias"), &linear::bias));
  }

  /// y[..][o] = bias[o] (when Bias) + sum_i x[..][i] * weight[o][i], for x of
  /// any rank whose last extent is InFeatures; returns the same shape with
  /// last extent OutFeatures, by value: its stack use (the output, one
  /// packed weight panel and the register tiles, detail::linear_stack_bytes)
  /// at most MHA_STACK_WORKSPACE_LIMIT bytes, else a compile-time error; use
  /// forward(x, out) or apply_rows for large outputs.
  /// Rows of y: [rows][OutFeatures] with rows = x.size / In.
  /// x is an mha::tensor or an mha::tensor_view (e.g. of caller memory).
  template <detail::fixed_tensor_like X>
  MHA_DETAIL_ISA_TAG constexpr auto forward(const X& x) const noexcept {
    if constexpr (valid_)
      return detail::linear_forward<T, InFeatures, OutFeatures>(
          detail::weight_access(this->weight), bias_(), x);
    else  // the class's static_assert has reported the mistake
      return detail::linear_output_t<detail::element_or_float<T>, detail::at_least_1<OutFeatures>,
                                     X>{};
  }
  /// Same as forward(x).
  template <detail::fixed_tensor_like X>
  MHA_DETAIL_ISA_TAG constexpr auto operator()(const X& x) const noexcept {
    return forward(x);
  }
  /// y = forward(x) written into a caller-provided `out` (any size: nothing
  /// on the stack): x a tensor or tensor_view [..][InFeatures], out a
  /// non-const tensor or a tensor_view of T of x's shape with last extent
  /// OutFeatures. Precondition: x and out do not overlap (the layer reads x
  /// while it writes out; checked by MHA_ASSERT in debug builds), unlike the
  /// attention modules' forward, which may write over its input.
  /// Compile-time errors ("mha::linear::forward: ..."): those of
  /// forward(x), an output that is not writable, an output of another shape.
  template <detail::fixed_tensor_like X, detail::fixed_tensor_like Y>
  MHA_DETAIL_ISA_TAG constexpr void forward(const X& x, Y&& out) const noexcept {
    if constexpr (valid_) {
      if constexpr (detail::check_linear_output<T, InFeatures, OutFeatures, X, Y>()) {
        MHA_ASSERT(std::is_constant_evaluated() ||
                   reinterpret_cast<std::uintptr_t>(x.data() + x.size()) <=
                       reinterpret_cast<std::uintptr_t>(out.data()) ||
                   reinterpret_cast<std::uintptr_t>(out.data() + out.size()) <=
                       reinterpret_cast<std::uintptr_t>(x.data()));
        apply_rows(x.data(), detail::size_c<detail::fixed_shape<std::remove_cvref_t<X>>::size / InFeatures>{},
                   out.data());
      }
    }
  }
  /// Applies the layer to `rows` contiguous rows: x [rows][In] -> y [rows][Out]
  /// (caller-owned y, any size, not overlapping x).
  template <class Rows>
  MHA_DETAIL_ISA_TAG constexpr void apply_rows(const T* x, Rows rows, T* y) const noexcept {
    if constexpr (valid_)
      detail::linear_rows(x, rows, detail::size_c<InFeatures>{},
                          detail::weight_access(this->weight), bias_(),
                          detail::size_c<OutFeatures>{}, y);
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

 private:
  /// The class-level contracts hold (else no kernel is instantiated, so the
  /// failed contract stays the only error).
  static constexpr bool valid_ =
      detail::float_or_double<T> && InFeatures > 0 && OutFeatures > 0;
  /// The bias argument of the kernels: the bias, or none.
  constexpr auto bias_() const noexcept {
    if constexpr (Bias)
      return detail::present_bias<T>{this->bias.data()};
    else
      return nullptr;
  }
};

}  // namespace mha

#include <mha/detail/macros_undef.hpp>

#endif  // MHA_DETAIL_NO_CXX20
