// mha/dynamic/workspace.hpp -- reusable scratch memory of mha::dynamic forwards.
#pragma once

#include <mha/detail/cxx20_check.hpp>
#include <mha/detail/dynamic_needs_exceptions.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <cstddef>
#include <vector>

#include <mha/detail/kernels/gemm.hpp>

#include <mha/detail/macros.hpp>

namespace mha::dynamic {

/// Intermediates of mha::dynamic forward calls: `storage` holds the queries,
/// the keys (transposed) and values of a whole-sequence call, and the
/// concatenated context, of one sequence at a time (a KV-cache call: the
/// queries and context of all new rows); `scores` one block of
/// mha::detail::gemm::mr score rows. Pass the same workspace to repeated calls:
/// the first call sizes it for the module's context_length (and the batch), so
/// later calls with any token count allocate nothing (a later call with a
/// larger batch grows it once).
template <class T>
struct workspace {
  std::vector<T> storage;  ///< Q, K^T, V, context (see above)
  std::vector<T> scores;   ///< gemm::mr rows of up to context_length scores

  /// Grows `storage` to at least `elements` and `scores` to gemm::mr *
  /// `keys` elements (allocates only when they are smaller).
  MHA_DETAIL_ISA_TAG void reserve_for(std::size_t elements, std::size_t keys) {
    if (storage.size() < elements) storage.resize(elements);
    if (scores.size() < detail::gemm::mr * keys) scores.resize(detail::gemm::mr * keys);
  }

  // Construction, copies, moves and destruction as the compiler would
  // generate them, declared only to carry the ISA's ABI tag (their code moves
  // T values; docs/design.md, "ISA namespaces").
  MHA_DETAIL_ISA_TAG workspace() = default;
  MHA_DETAIL_ISA_TAG workspace(const workspace&) = default;
  MHA_DETAIL_ISA_TAG workspace(workspace&&) = default;
  MHA_DETAIL_ISA_TAG workspace& operator=(const workspace&) = default;
  MHA_DETAIL_ISA_TAG workspace& operator=(workspace&&) = default;
  MHA_DETAIL_ISA_TAG ~workspace() = default;
};

}  // namespace mha::dynamic

#include <mha/detail/macros_undef.hpp>

#endif  // MHA_DETAIL_NO_CXX20
