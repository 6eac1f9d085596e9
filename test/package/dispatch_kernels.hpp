// dispatch_kernels.hpp -- the package consumer's dispatched function
// (mha_dispatch_sources from the installed package; docs/dispatch.md).
#pragma once

#include <mha/causal_attention.hpp>
#include <mha/dispatch.hpp>

namespace consumer {
/// The book's CausalAttention shape: d_in 3, d_out 2, context 6.
using model = mha::causal_attention<float, 3, 2, 6>;
/// out = m.forward(x) with the active level's kernels.
MHA_DISPATCH_DECLARE(forward, void(const model& m, const mha::tensor<float, 6, 3>& x,
                                   mha::tensor<float, 6, 2>& out));
}  // namespace consumer
