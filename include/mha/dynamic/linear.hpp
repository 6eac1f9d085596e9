// mha/dynamic/linear.hpp -- torch.nn.Linear with run-time sizes.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#include <mha/detail/dynamic_needs_exceptions.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include <mha/detail/api/contracts.hpp>
#include <mha/detail/api/dynamic_output_check.hpp>
#include <mha/detail/api/dynamic_parameter_count.hpp>
#include <mha/detail/kernels/kernels.hpp>
#include <mha/detail/params/parameter_description.hpp>
#include <mha/dynamic/tensor.hpp>
#include <mha/dynamic/tensor_view.hpp>

#include <mha/detail/macros.hpp>

namespace mha::dynamic {

/// torch.nn.Linear(in_features, out_features, bias) with run-time sizes:
/// y = x weight^T + bias. Members `weight` [out_features][in_features]
/// (PyTorch layout) and `bias` [out_features] (shape {0} when constructed
/// without bias). Zero-initialised. Same arithmetic as mha::linear.
///
/// Errors: T other than float or double is a compile-time error ("mha::dynamic::linear:
/// T must be float or double", as mha::linear); anything but a bool as
/// with_bias is a deleted constructor (compile time); the constructor throws
/// std::invalid_argument for a zero size; forward throws std::invalid_argument
/// when x's last extent is not in_features, when weight/bias were replaced by
/// tensors of another shape, or when a layer built without bias was given one
/// (it would be ignored otherwise).
template <class T>
class linear : public detail::walked_parameter_count<linear<T>> {
  static_assert(detail::float_or_double<T>, "mha::dynamic::linear: T must be float or double");
  /// The element type of the members (T; float after the static_assert above
  /// failed, so that it stays the one error).
  using element_type_ = detail::element_or_float<T>;

 public:
  using value_type = T;

  /// A zero-initialised layer. Throws std::invalid_argument if a size is 0.
  MHA_DETAIL_ISA_TAG
  linear(std::size_t in_features, std::size_t out_features, bool with_bias = true)
      : weight(check_sizes(in_features, out_features)),
        bias(with_bias ? std::vector<std::size_t>{out_features} : std::vector<std::size_t>{0}),
        in_features_(in_features),
        out_features_(out_features),
        has_bias_(with_bias) {}
  /// Anything but a bool where with_bias goes (an integer, a floating-point
  /// number, a pointer) would convert to bool silently: deleted (a third size
  /// by mistake, linear(3, 2, 4), would otherwise be a layer with bias).
  template <class WithBiasMustBeBool>
    requires detail::converts_to_bool_silently<WithBiasMustBeBool>
  linear(std::size_t, std::size_t, WithBiasMustBeBool) = delete;

  tensor<element_type_> weight;  ///< tensor<T>: [out_features][in_features]
  tensor<element_type_> bias;    ///< tensor<T>: [out_features], or shape {0} without bias

  std::size_t in_features() const noexcept { return in_features_; }
  std::size_t out_features() const noexcept { return out_features_; }
  bool has_bias() const noexcept { return has_bias_; }
  // parameter_count() (the walk's sum: weight, and bias when has_bias())
  // comes from detail::walked_parameter_count.
  /// The members for mha::for_each_parameter (nn.Linear's named_parameters():
  /// `weight`, and `bias` when has_bias()).
  static constexpr auto parameter_description() noexcept {
    return detail::describe(
        BOOST_HANA_STRING("mha::dynamic::linear"),
        detail::member(BOOST_HANA_STRING("weight"), &linear::weight),
        detail::optional_member(BOOST_HANA_STRING("bias"), &linear::bias,
                                [](const linear& l) { return l.has_bias(); }));
  }

  /// y[..][o] = bias[o] + sum_i x[..][i] weight[o][i] for x of any rank whose
  /// last extent is in_features; returns the same shape with last extent
  /// out_features. x: a tensor_view<const T> of the caller's memory or a
  /// dynamic::tensor (converts implicitly).
  MHA_DETAIL_ISA_TAG tensor<T> forward(tensor_view<const T> x) const {
    check_input_(x);
    std::vector<std::size_t> shape(x.shape().begin(), x.shape().end());
    shape.back() = out_features_;
    tensor<T> y(shape);
    apply_rows(x.data(), x.size() / in_features_, y.data());
    return y;
  }
  /// Same as forward(x).
  MHA_DETAIL_ISA_TAG tensor<T> operator()(tensor_view<const T> x) const { return forward(x); }
  /// forward(x) written into `out` (a tensor_view<T> of the caller's memory or
  /// a dynamic::tensor) of x's shape with last extent out_features; no
  /// allocation. Throws std::invalid_argument for x's last extent (as
  /// forward(x)) or an output of another shape, before writing anything.
  MHA_DETAIL_ISA_TAG void forward(tensor_view<const T> x, tensor_view<T> out) const {
    check_input_(x);
    detail::check_dynamic_output("mha::dynamic::linear", x, out, out_features_);
    apply_rows(x.data(), x.size() / in_features_, out.data());
  }

  /// Applies the layer to `rows` contiguous rows: x [rows][in] -> y [rows][out].
  /// Checks the weight and bias shapes first (std::invalid_argument).
  MHA_DETAIL_ISA_TAG void apply_rows(const T* x, std::size_t rows, T* y) const {
    check_parameters();
    if constexpr (detail::float_or_double<T>)
      detail::linear_rows(x, rows, in_features_, detail::weight_access(weight),
                          has_bias_ ? bias.data() : nullptr,
                          out_features_, y);
  }

  /// Throws std::invalid_argument if weight or bias no longer have the shapes
  /// implied by the constructor's sizes ("mha::dynamic::linear: weight is
  /// [3][2], expected [2][3]").
  MHA_DETAIL_ISA_TAG void check_parameters() const {
    check_parameters([] { return std::string("mha::dynamic::linear: "); });
  }
  /// Same check for a layer that is a member of a module: the message starts
  /// with `where()` (a callable returning a std::string, called only when the
  /// check fails: the valid path allocates nothing) instead of
  /// "mha::dynamic::linear: ", e.g. "mha::dynamic::multi_head_attention:
  /// w_query." gives "mha::dynamic::multi_head_attention: w_query.weight is
  /// [3][2], expected [2][3]".
  template <class Where>
  MHA_DETAIL_ISA_TAG void check_parameters(const Where& where) const {
    const auto& ws = weight.shape();  // compared in place: no allocation on the valid path
    if (ws.size() != 2 || ws[0] != out_features_ || ws[1] != in_features_)
      throw std::invalid_argument(where() + "weight is " + shape_string(weight.shape()) +
                                  ", expected [" + std::to_string(out_features_) + "][" +
                                  std::to_string(in_features_) + "]");
    if (has_bias_ && (bias.shape().size() != 1 || bias.shape()[0] != out_features_))
      throw std::invalid_argument(where() + "bias is " + shape_string(bias.shape()) +
                                  ", expected [" + std::to_string(out_features_) + "]");
    if (!has_bias_ && bias.numel() != 0)  // a bias given to a layer built without one
      throw std::invalid_argument(where() + "bias is " + shape_string(bias.shape()) +
                                  ", expected none (the layer was built with bias = false)");
  }

  // Copies, moves and destruction as the compiler would generate them,
  // declared only to carry the ISA's ABI tag (their code moves T values;
  // docs/design.md, "ISA namespaces").
  MHA_DETAIL_ISA_TAG linear(const linear&) = default;
  MHA_DETAIL_ISA_TAG linear(linear&&) = default;
  MHA_DETAIL_ISA_TAG linear& operator=(const linear&) = default;
  MHA_DETAIL_ISA_TAG linear& operator=(linear&&) = default;
  MHA_DETAIL_ISA_TAG ~linear() = default;

 private:
  /// std::invalid_argument unless x's last extent is in_features.
  MHA_DETAIL_ISA_TAG void check_input_(const tensor_view<const T>& x) const {
    if (x.shape().back() != in_features_)
      throw std::invalid_argument("mha::dynamic::linear::forward: input " +
                                  shape_string(x.shape()) +
                                  " must have last extent in_features = " +
                                  std::to_string(in_features_));
  }
  MHA_DETAIL_ISA_TAG static std::vector<std::size_t> check_sizes(std::size_t in, std::size_t out) {
    if (in == 0 || out == 0)
      throw std::invalid_argument("mha::dynamic::linear: in_features (" + std::to_string(in) +
                                  ") and out_features (" + std::to_string(out) +
                                  ") must be greater than 0");
    return {out, in};
  }

  std::size_t in_features_;
  std::size_t out_features_;
  bool has_bias_;
};

}  // namespace mha::dynamic

#include <mha/detail/macros_undef.hpp>

#endif  // MHA_DETAIL_NO_CXX20
