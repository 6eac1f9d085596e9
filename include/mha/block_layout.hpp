// mha/block_layout.hpp -- compile-time layouts of blocks inside row-major buffers.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>

#include <mha/detail/api/contracts.hpp>

namespace mha {

/// Compile-time layout mapping of a [Batch][Rows][Cols] block that lives inside
/// a larger row-major buffer (in the spirit of std::layout_stride from mdspan,
/// with every extent, stride and the offset fixed at compile time):
///
///   element (b, r, c)  ->  Offset + b * BatchStride + r * RowStride + c
///
/// Columns are contiguous (column stride 1). A block_layout has no data; it is
/// only ever used as a type, so a view over it carries nothing but a pointer.
///
/// Compile-time errors ("mha::block_layout: ..."): a zero extent; a row or
/// batch stride too small for the block, which would make rows or batches
/// overlap; a block whose columns run past the end of a row
/// (Offset % RowStride + Cols > RowStride), i.e. lie outside the matrix.
template <std::size_t Batch, std::size_t Rows, std::size_t Cols, std::size_t BatchStride,
          std::size_t RowStride, std::size_t Offset>
struct block_layout {
  static_assert(detail::all_greater_than_zero<Batch, Rows, Cols>,
                "mha::block_layout: Batch, Rows and Cols must be greater than 0");
  static_assert(detail::at_most<Cols, RowStride>,
                "mha::block_layout: RowStride must be at least Cols");
  static_assert(Batch == 1 || detail::at_most<Rows * RowStride, BatchStride>,
                "mha::block_layout: BatchStride must be at least Rows * RowStride");
  static_assert(detail::block_columns_within_row<Offset, Cols, RowStride>,
                "mha::block_layout: the block's columns run past the end of a row "
                "(Offset % RowStride + Cols must be at most RowStride)");

  static constexpr std::size_t batch = Batch;               ///< extent of dimension 0
  static constexpr std::size_t rows = Rows;                 ///< extent of dimension 1
  static constexpr std::size_t cols = Cols;                 ///< extent of dimension 2
  static constexpr std::size_t batch_stride = BatchStride;  ///< elements between batches
  static constexpr std::size_t row_stride = RowStride;      ///< elements between rows
  static constexpr std::size_t col_stride = 1;              ///< columns are contiguous
  static constexpr std::size_t offset = Offset;             ///< element (0,0,0)'s index

  /// Index of element (b, r, c) in the underlying buffer.
  static constexpr std::size_t map(std::size_t b, std::size_t r, std::size_t c) noexcept {
    return Offset + b * BatchStride + r * RowStride + c;
  }
  /// One past the largest index the layout maps to: the buffer must hold at
  /// least this many elements.
  static constexpr std::size_t required_span_size =
      Offset + (Batch - 1) * BatchStride + (Rows - 1) * RowStride + Cols;
};

/// Layout of head `H`'s block of a [Batch][Tokens][Width] tensor whose last
/// dimension is split into `NumHeads` equal column blocks of width
/// head_dim = Width / NumHeads (the book's `view(b, n, num_heads, head_dim)`):
/// columns [H * head_dim, (H + 1) * head_dim) of every row.
///
/// Used for head h's queries, keys and values inside Q, K, V = x W^T (book
/// section 3.6.2) and for head h's block of the concatenated context.
/// Compile-time errors ("mha::head_layout: ..."): NumHeads == 0, Width not
/// divisible by NumHeads, H >= NumHeads (the block would lie outside the
/// rows); zero Batch or Tokens (from block_layout). In the base, an invalid
/// H or NumHeads is replaced by a valid stand-in so that only the
/// head_layout message is reported.
template <std::size_t H, std::size_t NumHeads, std::size_t Batch, std::size_t Tokens,
          std::size_t Width>
struct head_layout
    : block_layout<Batch, Tokens, detail::quotient_or_1<Width, NumHeads>, Tokens * Width, Width,
                   detail::clamp_index<H, NumHeads> * detail::quotient_or_1<Width, NumHeads>> {
  static_assert(detail::greater_than_zero<NumHeads>,
                "mha::head_layout: NumHeads must be greater than 0");
  static_assert(detail::divisible_by<Width, detail::at_least_1<NumHeads>>,
                "mha::head_layout: Width must be divisible by NumHeads");
  static_assert(detail::index_below<H, detail::at_least_1<NumHeads>>,
                "mha::head_layout: head index H must be less than NumHeads");
  static constexpr std::size_t head = H;                  ///< which head
  static constexpr std::size_t num_heads = NumHeads;      ///< heads in the split
  static constexpr std::size_t head_dim = Width / (NumHeads == 0 ? 1 : NumHeads);  ///< block width
};

/// Layout of head `H`'s rows of a PyTorch-layout weight [Out][In] whose output
/// features are split into `NumHeads` blocks: rows [H * head_dim, (H+1) * head_dim),
/// i.e. the [head_dim][In] matrix that produces head H's queries (or keys, or
/// values). This is the "weight split" of book section 3.6.2. Batch extent is 1.
/// Compile-time errors ("mha::weight_split_layout: ..."): NumHeads == 0, Out
/// not divisible by NumHeads, H >= NumHeads.
template <std::size_t H, std::size_t NumHeads, std::size_t Out, std::size_t In>
struct weight_split_layout
    : block_layout<1, detail::quotient_or_1<Out, NumHeads>, In,
                   detail::quotient_or_1<Out, NumHeads> * In, In,
                   detail::clamp_index<H, NumHeads> * detail::quotient_or_1<Out, NumHeads> * In> {
  static_assert(detail::greater_than_zero<NumHeads>,
                "mha::weight_split_layout: NumHeads must be greater than 0");
  static_assert(detail::divisible_by<Out, detail::at_least_1<NumHeads>>,
                "mha::weight_split_layout: Out must be divisible by NumHeads");
  static_assert(detail::index_below<H, detail::at_least_1<NumHeads>>,
                "mha::weight_split_layout: head index H must be less than NumHeads");
  static constexpr std::size_t head = H;
  static constexpr std::size_t num_heads = NumHeads;
  static constexpr std::size_t head_dim = Out / (NumHeads == 0 ? 1 : NumHeads);
};

}  // namespace mha

#endif  // MHA_DETAIL_NO_CXX20
