// mha/detail/engine/executor.hpp -- execution: how the pipeline runs the
// independent pieces of a call, the seam for multi-threading.
//
// The pieces are the sequences of a batch (engine/attention.hpp's
// forward_sequence, forward_padded, forward_cross and forward_cached): each
// reads its own rows of the input and the KV cache and writes its own rows of
// the output and of the attention weights, so they may run in any order or at
// once. The calls nest: forward_padded hands each sequence over, and each
// non-empty one runs forward_sequence as a batch of one, which hands it over
// again. The pieces share the call's scratch (the workspace's query, key,
// value and context blocks and its score rows), so an executor that runs
// several at once must give each worker its own scratch: worker w's at offset
// w of the per-worker blocks, which a workspace sized for `workers` sequences
// would hold (the multi-threading issue); and each worker thread must set the
// calling thread's treatment of subnormals (arch/subnormals.hpp's flush_scope,
// which sets it for the calling thread only). serial_executor, every call's
// today, runs them in order on the calling thread as worker 0. The spec
// carries its executor (attention_spec::executor, with_executor). Not through
// it: the token-major path (one piece for the whole batch) and a rolling KV
// cache's compaction (append_to_store's copy of each sequence's kept columns,
// bookkeeping between the forward's pieces).
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <cstddef>

#include <mha/detail/macros.hpp>

namespace mha::detail {
MHA_DETAIL_ISA_NAMESPACE {

/// f(i, 0) for i = 0 .. count-1, in order, on the calling thread (worker 0:
/// the only one).
struct serial_executor {
  /// Workers whose pieces may run at once (each needs its own scratch).
  static constexpr std::size_t workers = 1;
  template <class F>
  constexpr void for_each(std::size_t count, F&& f) const {
    for (std::size_t i = 0; i < count; ++i) f(i, std::size_t{0});
  }
};

}  // namespace MHA_DETAIL_ISA
}  // namespace mha::detail

#include <mha/detail/macros_undef.hpp>
