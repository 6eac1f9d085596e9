// mha/block_view.hpp -- a pointer-sized view whose layout is a compile-time type.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>
#include <type_traits>

#include <mha/block_layout.hpp>
#include <mha/config.hpp>
#include <mha/tensor.hpp>

namespace mha {

namespace detail {
/// The contracts of head_view<H, NumHeads> on a tensor of last extent Width.
template <std::size_t H, std::size_t NumHeads, std::size_t Width>
constexpr bool check_head_split() noexcept {
  static_assert(greater_than_zero<NumHeads>, "mha::head_view: NumHeads must be greater than 0");
  if constexpr (NumHeads > 0) {
    static_assert(divisible_by<Width, NumHeads>,
                  "mha::head_view: the tensor's last extent must be divisible by NumHeads");
    static_assert(index_below<H, NumHeads>,
                  "mha::head_view: head index H must be less than NumHeads");
  }
  return NumHeads > 0 && Width % (NumHeads > 0 ? NumHeads : 1) == 0 && H < NumHeads;
}
}  // namespace detail

/// Non-owning view of a block of a row-major buffer, shape
/// [Layout::batch][Layout::rows][Layout::cols]. Its only member is the pointer
/// to the buffer's first element; offset and strides come from `Layout` (a
/// mha::block_layout), so `sizeof(block_view) == sizeof(T*)` and every index
/// computation folds to constants.
template <class T, class Layout>
class block_view {
 public:
  using value_type = std::remove_const_t<T>;
  using layout_type = Layout;

  /// View over the buffer that starts at `base` (not at the block's first
  /// element: the layout's offset is applied on access). Precondition: the
  /// buffer holds at least Layout::required_span_size elements.
  constexpr explicit block_view(T* base) noexcept : base_(base) {}

  /// View over a tensor. Compile-time error if the block does not fit in it.
  template <class U, std::size_t... E>
    requires std::is_same_v<std::remove_const_t<U>, value_type>
  constexpr explicit block_view(tensor<U, E...>& t) noexcept : base_(t.data()) {
    static_assert(detail::block_within_tensor<Layout::required_span_size, tensor<U, E...>::size>,
                  "mha::block_view: the block lies (partly) outside the tensor");
  }
  /// View over a const tensor (for views of const T).
  template <class U, std::size_t... E>
    requires std::is_same_v<std::remove_const_t<U>, value_type> && std::is_const_v<T>
  constexpr explicit block_view(const tensor<U, E...>& t) noexcept : base_(t.data()) {
    static_assert(detail::block_within_tensor<Layout::required_span_size, tensor<U, E...>::size>,
                  "mha::block_view: the block lies (partly) outside the tensor");
  }

  /// Element (b, r, c). Precondition: b < batch, r < rows, c < cols.
  constexpr T& operator()(std::size_t b, std::size_t r, std::size_t c) const noexcept {
    MHA_ASSERT(b < Layout::batch && r < Layout::rows && c < Layout::cols);
    return base_[Layout::map(b, r, c)];
  }
  /// Pointer to the `cols` contiguous elements of row r of batch b.
  constexpr T* row(std::size_t b, std::size_t r) const noexcept {
    return base_ + Layout::map(b, r, 0);
  }
  /// The underlying buffer's first element (not the block's).
  constexpr T* base() const noexcept { return base_; }

  static constexpr std::size_t batch = Layout::batch;
  static constexpr std::size_t rows = Layout::rows;
  static constexpr std::size_t cols = Layout::cols;

 private:
  T* base_;
};

/// View of head `H` of `NumHeads` in a [Batch][Tokens][Width] tensor (see
/// mha::head_layout): columns [H*head_dim, (H+1)*head_dim) of every row.
/// Compile-time errors ("mha::head_view: ..."): NumHeads == 0, Width not
/// divisible by NumHeads, H >= NumHeads.
template <std::size_t H, std::size_t NumHeads, class U, std::size_t Batch, std::size_t Tokens,
          std::size_t Width>
constexpr auto head_view(tensor<U, Batch, Tokens, Width>& t) noexcept {
  if constexpr (detail::check_head_split<H, NumHeads, Width>())
    return block_view<U, head_layout<H, NumHeads, Batch, Tokens, Width>>(t);
  else
    return t.data();  // unreachable: a contract above failed to compile
}
/// Read-only view of head `H` of `NumHeads` in a [Batch][Tokens][Width] tensor.
template <std::size_t H, std::size_t NumHeads, class U, std::size_t Batch, std::size_t Tokens,
          std::size_t Width>
constexpr auto head_view(const tensor<U, Batch, Tokens, Width>& t) noexcept {
  if constexpr (detail::check_head_split<H, NumHeads, Width>())
    return block_view<const U, head_layout<H, NumHeads, Batch, Tokens, Width>>(t);
  else
    return t.data();  // unreachable: a contract above failed to compile
}

/// Read-only view of head `H`'s rows [head_dim][In] of a PyTorch-layout weight
/// [Out][In] (see mha::weight_split_layout). Compile-time errors
/// ("mha::weight_split_view: ..."): as for head_view, with Out for Width.
template <std::size_t H, std::size_t NumHeads, class U, std::size_t Out, std::size_t In>
constexpr auto weight_split_view(const tensor<U, Out, In>& w) noexcept {
  static_assert(detail::greater_than_zero<NumHeads>,
                "mha::weight_split_view: NumHeads must be greater than 0");
  if constexpr (NumHeads > 0) {
    static_assert(detail::divisible_by<Out, NumHeads>,
                  "mha::weight_split_view: the weight's Out extent must be divisible by NumHeads");
    static_assert(detail::index_below<H, NumHeads>,
                  "mha::weight_split_view: head index H must be less than NumHeads");
  }
  if constexpr (NumHeads > 0 && Out % (NumHeads > 0 ? NumHeads : 1) == 0 && H < NumHeads)
    return block_view<const U, weight_split_layout<H, NumHeads, Out, In>>(w);
  else
    return w.data();  // unreachable: a contract above failed to compile
}

}  // namespace mha

#endif  // MHA_DETAIL_NO_CXX20
