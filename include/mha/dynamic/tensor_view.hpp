// mha/dynamic/tensor_view.hpp -- non-owning runtime-shaped view of caller memory.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#include <mha/detail/dynamic_needs_exceptions.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <mha/config.hpp>
#include <mha/dynamic/tensor.hpp>

#include <mha/detail/macros.hpp>

namespace mha::dynamic {

/// Non-owning, row-major, contiguous view of the caller's memory with a shape
/// chosen at run time: the twin of mha::tensor_view, a `std::mdspan<T,
/// std::dextents<std::size_t, R>>` whose rank R is a run-time value too.
/// `T` is `float` or `double`, `const` for a read-only view (an input). Every
/// mha::dynamic forward takes a view wherever it takes a dynamic::tensor (an
/// owning tensor converts implicitly), with the same run-time checks and
/// messages, and writes into a view where it writes into a tensor:
///
///   std::vector<float> samples(frames * d_in);           // the caller's buffer
///   mha::dynamic::tensor_view<const float> x(samples.data(), {frames, d_in});
///   m.forward(x, mha::dynamic::tensor_view<float>(out.data(), {frames, d_out}));
///
/// The shape is stored in the view (up to max_rank dimensions; a view of a
/// tensor of a higher rank refers to the tensor's shape), so a view allocates
/// nothing and may outlive the list it was built from, and a view of a tensor
/// keeps the shape the tensor had when the view was made (as std::span keeps
/// its size). Copying a view copies the pointer and the shape. The caller
/// keeps the memory alive while the view is used: a view of a tensor is
/// invalidated, like a std::span of a std::vector, by whatever reallocates
/// the tensor's elements (a reshape to more elements than capacity(),
/// assignment, destruction). Make the view again after a reshape. Element `v(i, j, k)` is `data()[(i * e1 + j) * e2 + k]`.
///
/// Alignment: `data` must be aligned for T (`alignof(T)`, as any `T*`); the
/// kernels assume nothing more (unaligned vector loads), so a view at any
/// element offset of a buffer gives the same bits as an owning tensor.
///
/// Errors: the constructor from a pointer throws std::invalid_argument for a
/// rank of 0 or above max_rank, for an element count that overflows
/// std::size_t and for a null pointer with a shape that holds elements;
/// operator() throws std::invalid_argument when the number of indices differs
/// from the rank and std::out_of_range for an index out of range (as
/// dynamic::tensor).
template <class T>
class tensor_view {
  static_assert(std::is_floating_point_v<std::remove_const_t<T>> && !std::is_volatile_v<T>,
                "mha::dynamic::tensor_view: T must be float or double, or const float or const "
                "double");

 public:
  using element_type = T;
  using value_type = std::remove_cv_t<T>;
  using index_type = std::size_t;
  using size_type = std::size_t;
  /// Most dimensions of a view built from a pointer and a shape.
  static constexpr std::size_t max_rank = 8;

  /// A view of `data` with the given shape (outermost first), e.g.
  /// `tensor_view<const float>(p, {frames, d_in})`. Precondition: data points
  /// to at least the product of the extents elements, aligned for T. Throws
  /// std::invalid_argument for rank 0 or above max_rank, an element count
  /// that overflows std::size_t, or a null data with a shape that holds
  /// elements (a null pointer with an extent 0 is an empty view).
  MHA_DETAIL_ISA_TAG tensor_view(T* data, std::initializer_list<std::size_t> shape)
      : tensor_view(data, std::span<const std::size_t>(shape.begin(), shape.size())) {}
  /// A view of `data` with the shape `shape` (copied into the view).
  MHA_DETAIL_ISA_TAG tensor_view(T* data, std::span<const std::size_t> shape)
      : data_(data), rank_(shape.size()), shape_(inline_) {
    if (shape.empty() || shape.size() > max_rank)
      throw std::invalid_argument("mha::dynamic::tensor_view: rank " +
                                  std::to_string(shape.size()) + " must be in 1.." +
                                  std::to_string(max_rank));
    MHA_ASSERT(reinterpret_cast<std::uintptr_t>(data) % alignof(T) == 0);
    bool zero = false;
    for (std::size_t d = 0; d < rank_; ++d) {
      inline_[d] = shape[d];
      zero = zero || shape[d] == 0;
    }
    size_ = zero ? 0 : 1;
    for (std::size_t d = 0; d < rank_ && !zero; ++d) {
      if (size_ > static_cast<std::size_t>(-1) / shape[d])
        throw std::invalid_argument(
            "mha::dynamic::tensor_view: element count overflows std::size_t");
      size_ *= shape[d];
    }
    if (data == nullptr && size_ != 0)
      throw std::invalid_argument("mha::dynamic::tensor_view: data is a null pointer, but the "
                                  "shape " + shape_string(shape) + " holds " +
                                  std::to_string(size_) + (size_ == 1 ? " element" : " elements"));
  }
  /// A view of an owning tensor: its elements and its present shape (copied
  /// into the view, as with a pointer; a later reshape of the tensor does not
  /// change the view). Throws std::invalid_argument for a tensor of rank
  /// above max_rank (a view holds at most max_rank extents).
  MHA_DETAIL_ISA_TAG tensor_view(tensor<value_type>& t)
      : data_(t.data()), rank_(t.rank()), size_(t.size()), shape_(inline_) {
    copy_shape_(viewable_(t.shape()));
  }
  /// A read-only view of an owning tensor (shape copied, as above; the same
  /// error).
  MHA_DETAIL_ISA_TAG tensor_view(const tensor<value_type>& t)
    requires std::is_const_v<T>
      : data_(t.data()), rank_(t.rank()), size_(t.size()), shape_(inline_) {
    copy_shape_(viewable_(t.shape()));
  }
  /// A read-only view of a writable view.
  template <class U>
    requires(std::is_const_v<T> && std::is_same_v<U, value_type>)
  MHA_DETAIL_ISA_TAG tensor_view(const tensor_view<U>& v) noexcept
      : data_(v.data()), rank_(v.rank()), size_(v.size()), shape_(inline_) {
    copy_shape_(v.shape());
  }
  MHA_DETAIL_ISA_TAG tensor_view(const tensor_view& v) noexcept
      : data_(v.data_), rank_(v.rank_), size_(v.size_), shape_(inline_) {
    copy_shape_(v.shape());
  }
  MHA_DETAIL_ISA_TAG tensor_view& operator=(const tensor_view& v) noexcept {
    if (this != &v) {
      data_ = v.data_;
      rank_ = v.rank_;
      size_ = v.size_;
      shape_ = inline_;
      copy_shape_(v.shape());
    }
    return *this;
  }
  ~tensor_view() = default;

  /// Shape, outermost dimension first.
  std::span<const std::size_t> shape() const noexcept { return {shape_, rank_}; }
  /// Number of dimensions.
  std::size_t rank() const noexcept { return rank_; }
  /// Extent of dimension r (precondition: r < rank()).
  std::size_t extent(std::size_t r) const noexcept { return shape_[r]; }
  /// Number of elements (product of the extents).
  std::size_t size() const noexcept { return size_; }
  /// Number of elements (PyTorch's `Tensor.numel()`), = size().
  std::size_t numel() const noexcept { return size_; }
  /// Pointer to the first of size() contiguous elements.
  T* data() const noexcept { return data_; }
  /// Same as data() (std::mdspan's name).
  T* data_handle() const noexcept { return data_; }
  T* begin() const noexcept { return data_; }
  T* end() const noexcept { return data_ + size_; }

  /// Element access, one index per dimension (bounds-checked, see class doc).
  template <class... Index>
  MHA_DETAIL_ISA_TAG T& operator()(Index... index) const {
    const std::size_t idx[] = {static_cast<std::size_t>(index)..., 0};
    if (sizeof...(Index) != rank_)
      throw std::invalid_argument("mha::dynamic::tensor_view: " +
                                  std::to_string(sizeof...(Index)) +
                                  " indices given for a view of rank " + std::to_string(rank_));
    std::size_t off = 0;
    for (std::size_t d = 0; d < rank_; ++d) {
      if (idx[d] >= shape_[d])
        throw std::out_of_range("mha::dynamic::tensor_view: index " + std::to_string(idx[d]) +
                                " out of range for dimension " + std::to_string(d) +
                                " of extent " + std::to_string(shape_[d]));
      off = off * shape_[d] + idx[d];
    }
    return data_[off];
  }

 private:
  // (Until 2026-12-03 a view of a tensor of rank above max_rank kept pointing
  // at the tensor's own shape: a later reshape changed the view, and a view
  // that outlived its tensor read freed memory.)
  /// s, after checking that a view can hold it (a tensor's shape).
  MHA_DETAIL_ISA_TAG static std::span<const std::size_t> viewable_(
      std::span<const std::size_t> s) {
    if (s.size() > max_rank)
      throw std::invalid_argument("mha::dynamic::tensor_view: a view of a tensor of rank " +
                                  std::to_string(s.size()) + " (at most " +
                                  std::to_string(max_rank) + ")");
    return s;
  }
  /// Copies s (at most max_rank extents) into the view.
  MHA_DETAIL_ISA_TAG void copy_shape_(std::span<const std::size_t> s) noexcept {
    MHA_ASSERT(s.size() <= max_rank);
    for (std::size_t d = 0; d < s.size(); ++d) inline_[d] = s[d];
  }

  T* data_;
  std::size_t rank_;
  std::size_t size_ = 0;
  const std::size_t* shape_;  ///< inline_
  std::size_t inline_[max_rank] = {};
};

/// A view of a whole tensor: tensor_view v{t}; (const for a const tensor).
template <class T>
tensor_view(tensor<T>&) -> tensor_view<T>;
template <class T>
tensor_view(const tensor<T>&) -> tensor_view<const T>;

}  // namespace mha::dynamic

#include <mha/detail/macros_undef.hpp>

#endif  // MHA_DETAIL_NO_CXX20
