// mha/dynamic/tensor.hpp -- owning runtime-sized tensor.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#include <mha/detail/dynamic_needs_exceptions.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>
#include <initializer_list>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <mha/detail/macros.hpp>

namespace mha::dynamic {

/// Owning, row-major, contiguous tensor whose shape is chosen at run time:
/// the runtime-sized twin of mha::tensor. `tensor<float> x({2, 6, 3});` is a
/// zero-filled [2][6][3] tensor. Rank >= 1; zero extents are allowed (an empty
/// tensor). Allocates with std::vector. A moved-from tensor is empty, of
/// shape {0}, as tensor() (so a forward rejects it with std::invalid_argument).
///
/// Errors: operator() throws std::invalid_argument when the number of indices
/// differs from the rank and std::out_of_range when an index is out of range.
template <class T>
class tensor {
  static_assert(std::is_floating_point_v<T>,
                "mha::dynamic::tensor: T must be a floating-point type (float or double)");

 public:
  using value_type = T;

  /// An empty tensor of shape {0}.
  MHA_DETAIL_ISA_TAG tensor() : shape_{0} {}
  /// A zero-filled tensor of the given shape (outermost dimension first).
  /// Throws std::invalid_argument for an empty shape or when the element count
  /// overflows std::size_t.
  MHA_DETAIL_ISA_TAG explicit tensor(std::vector<std::size_t> shape) : shape_(std::move(shape)) {
    if (shape_.empty()) throw std::invalid_argument("mha::dynamic::tensor: shape must have rank >= 1");
    values_.assign(element_count(shape_.begin(), shape_.end()), T(0));
  }

  /// Gives the tensor a new shape in the same storage, e.g. a [B][n][d]
  /// input for another token count n: x.reshape({B, n, d}). Elements up to
  /// the smaller of the old and new counts keep their row-major positions
  /// (the first elements), added ones are zero. No allocation when the rank
  /// is unchanged and the new element count is at most capacity() (what the
  /// tensor held at its largest); otherwise the storage grows. Throws
  /// std::invalid_argument for an empty shape or an element count that
  /// overflows std::size_t, and what std::vector throws when it cannot grow
  /// (std::length_error, std::bad_alloc); the tensor is unchanged then.
  MHA_DETAIL_ISA_TAG void reshape(std::initializer_list<std::size_t> shape) {
    if (shape.size() == 0) throw std::invalid_argument("mha::dynamic::tensor::reshape: shape must have rank >= 1");
    const std::size_t n = element_count(shape.begin(), shape.end());
    // Everything that can throw (std::bad_alloc, std::length_error) comes
    // before the first change, so a failed reshape leaves the tensor as it was
    // (never a shape that claims more elements than the storage holds).
    shape_.reserve(shape.size());
    values_.resize(n, T(0));
    shape_.assign(shape.begin(), shape.end());  // within capacity: cannot throw
  }
  /// Elements the storage holds without allocating (see reshape).
  std::size_t capacity() const noexcept { return values_.capacity(); }

  /// Shape, outermost dimension first ({0} for a moved-from tensor).
  MHA_DETAIL_ISA_TAG const std::vector<std::size_t>& shape() const noexcept {
    // The moves stay noexcept and allocation-free: a moved-from shape_ is
    // empty, and reads as tensor()'s {0}.
    return shape_.empty() ? empty_shape() : shape_;
  }
  /// Number of dimensions.
  MHA_DETAIL_ISA_TAG std::size_t rank() const noexcept { return shape().size(); }
  /// Number of elements.
  std::size_t size() const noexcept { return values_.size(); }
  /// Number of elements (PyTorch's `Tensor.numel()`), = size().
  std::size_t numel() const noexcept { return values_.size(); }
  /// Pointer to the first of size() contiguous elements.
  T* data() noexcept { return values_.data(); }
  /// Pointer to the first of size() contiguous elements.
  const T* data() const noexcept { return values_.data(); }
  T* begin() noexcept { return values_.data(); }
  T* end() noexcept { return values_.data() + values_.size(); }
  const T* begin() const noexcept { return values_.data(); }
  const T* end() const noexcept { return values_.data() + values_.size(); }

  /// Element access, one index per dimension (bounds-checked, see class doc).
  template <class... Index>
  MHA_DETAIL_ISA_TAG T& operator()(Index... index) {
    return values_[offset_of({static_cast<std::size_t>(index)...})];
  }
  /// Element access, one index per dimension (bounds-checked, see class doc).
  template <class... Index>
  MHA_DETAIL_ISA_TAG const T& operator()(Index... index) const {
    return values_[offset_of({static_cast<std::size_t>(index)...})];
  }

  friend MHA_DETAIL_ISA_TAG bool operator==(const tensor& a, const tensor& b) {
    return a.shape() == b.shape() && a.values_ == b.values_;
  }

  // Copies and destruction as the compiler would generate them, declared only
  // to carry the ISA's ABI tag (their code moves T values; docs/design.md,
  // "ISA namespaces").
  MHA_DETAIL_ISA_TAG tensor(const tensor&) = default;
  MHA_DETAIL_ISA_TAG tensor& operator=(const tensor&) = default;
  MHA_DETAIL_ISA_TAG ~tensor() = default;
  /// Takes `other`'s shape and elements; `other` is left empty, of shape {0}
  /// (as tensor()). No allocation.
  MHA_DETAIL_ISA_TAG tensor(tensor&& other) noexcept
      : shape_(std::move(other.shape_)), values_(std::move(other.values_)) {
    other.shape_.clear();
    other.values_.clear();
  }
  /// Takes `other`'s shape and elements; `other` is left empty, of shape {0}.
  MHA_DETAIL_ISA_TAG tensor& operator=(tensor&& other) noexcept {
    if (this != &other) {
      shape_ = std::move(other.shape_);
      values_ = std::move(other.values_);
      other.shape_.clear();
      other.values_.clear();
    }
    return *this;
  }

 private:
  MHA_DETAIL_ISA_TAG static const std::vector<std::size_t>& empty_shape() noexcept {
    static const std::vector<std::size_t> shape{0};
    return shape;
  }
  /// Product of the extents; std::invalid_argument when it overflows std::size_t.
  template <class It>
  MHA_DETAIL_ISA_TAG static std::size_t element_count(It first, It last) {
    std::size_t n = 1;
    bool zero = false;
    for (It e = first; e != last; ++e) zero = zero || *e == 0;
    if (zero) return 0;  // empty, whatever the other extents
    for (It e = first; e != last; ++e) {
      if (n > static_cast<std::size_t>(-1) / *e)
        throw std::invalid_argument("mha::dynamic::tensor: element count overflows std::size_t");
      n *= *e;
    }
    return n;
  }
  MHA_DETAIL_ISA_TAG std::size_t offset_of(std::initializer_list<std::size_t> index) const {
    const auto& shape = this->shape();
    if (index.size() != shape.size())
      throw std::invalid_argument("mha::dynamic::tensor: " + std::to_string(index.size()) +
                                  " indices given for a tensor of rank " +
                                  std::to_string(shape.size()));
    std::size_t off = 0;
    std::size_t d = 0;
    for (const std::size_t i : index) {
      if (i >= shape[d])
        throw std::out_of_range("mha::dynamic::tensor: index " + std::to_string(i) +
                                " out of range for dimension " + std::to_string(d) + " of extent " +
                                std::to_string(shape[d]));
      off = off * shape[d] + i;
      ++d;
    }
    return off;
  }

  std::vector<std::size_t> shape_;
  std::vector<T> values_;
};

/// "[2][6][3]" for error messages (a tensor's or a tensor_view's shape).
MHA_DETAIL_ISA_TAG inline std::string shape_string(std::span<const std::size_t> shape) {
  std::string s;
  for (const std::size_t e : shape) {
    // appended piecewise: `"[" + std::to_string(e)` trips g++ 12's false
    // -Wrestrict at -O2/-O3 (GCC bug 105329)
    s += '[';
    s += std::to_string(e);
    s += ']';
  }
  return s;
}
/// "[2][6][3]" for error messages.
MHA_DETAIL_ISA_TAG inline std::string shape_string(const std::vector<std::size_t>& shape) {
  return shape_string(std::span<const std::size_t>(shape));
}

}  // namespace mha::dynamic

#include <mha/detail/macros_undef.hpp>

#endif  // MHA_DETAIL_NO_CXX20
