// mha/detail/kernels/weights.hpp -- weight access: how the kernels read a
// weight matrix, the seam for weight formats.
//
// A weight W [rows][cols] is in nn.Linear layout (a row per output feature, a
// column per input feature). The modules name their weights with
// weight_access (the module headers and mha::dynamic's), the pipeline
// (engine/attention.hpp) passes the accessor on untouched, taking row blocks
// with weight_rows (a group's or a key/value head's rows), and the kernel
// entries that read weights take it: project_rows, project_rows_t and
// linear_rows (kernels.hpp), gemv::project (gemv.hpp) and token_major's
// project (token_major.hpp). Every weight is dense_weights<T> today. A weight
// format (f16, bf16, q8_0: mha/formats.hpp) is another accessor type here,
// its weight_access and weight_rows, and those kernel entries' code for it;
// the module headers, the pipeline and the API stay as they are.
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <cstddef>
#include <type_traits>

#include <mha/detail/macros.hpp>

namespace mha::detail {
MHA_DETAIL_ISA_NAMESPACE {

/// A weight of T elements, row-major and contiguous: element [r][c] of a
/// [rows][cols] weight at data[r * cols + c].
template <class T>
struct dense_weights {
  using element_type = T;
  const T* data;
};

/// The accessor of a weight's storage `w` (an mha::tensor, an
/// mha::dynamic::tensor, a std::array...: anything whose data() is its
/// elements in nn.Linear layout, float or double).
template <class Storage>
constexpr auto weight_access(const Storage& w) noexcept {
  using T = std::remove_cv_t<std::remove_pointer_t<decltype(w.data())>>;
  return dense_weights<T>{w.data()};
}

/// Rows first .. of w, a weight of `cols` columns: the accessor of the
/// [rows - first][cols] weight they form.
template <class T>
constexpr dense_weights<T> weight_rows(dense_weights<T> w, std::size_t first,
                                       std::size_t cols) noexcept {
  return {w.data + first * cols};
}

}  // namespace MHA_DETAIL_ISA
}  // namespace mha::detail

#include <mha/detail/macros_undef.hpp>
