// benchmark/dispatch_kernels.hpp -- the GPT-2-size forward that
// mha_bench_dispatch runs through mha::dispatch (issue 10, item 6), and the
// same function built with -march=native for comparison.
#pragma once

#include <mha/dispatch.hpp>
#include <mha/multi_head_attention.hpp>

namespace bench_dispatch {

/// GPT-2 small's attention: d_model 768, 12 heads, context 1024, q/k/v biases.
using model = mha::multi_head_attention<float, 768, 768, 1024, 12, true>;
using input = mha::tensor<float, 1, 1024, 768>;
using output = mha::tensor<float, 1, 1024, 768>;
using workspace = model::workspace<1, 1024>;

/// out = m.forward(x) for 1024 tokens, caller-owned workspace.
MHA_DISPATCH_DECLARE(forward, void(const model& m, const input& x, output& out, workspace& ws));

/// The same function, in dispatch_kernels.cpp built with -march=native.
namespace native {
void forward(const model& m, const input& x, output& out, workspace& ws);
}

}  // namespace bench_dispatch
