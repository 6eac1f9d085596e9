// dispatch_kernels.hpp -- the functions test/dispatch dispatches
// (MHA_DISPATCH_DECLARE), shared by dispatch_kernels.cpp (built once per
// x86-64 level by mha_dispatch_sources) and dispatch_main.cpp (built for the
// baseline, the program's own level).
#pragma once

#include <cstddef>

#include <mha/dispatch.hpp>
#include <mha/multi_head_attention.hpp>

namespace dispatch_test {

/// The model: d_in = d_out = 64, 4 heads of 16, up to 32 tokens, q/k/v biases.
using model = mha::multi_head_attention<float, 64, 64, 32, 4, true>;
/// One sequence of 32 tokens.
using input = mha::tensor<float, 1, 32, 64>;
using output = mha::tensor<float, 1, 32, 64>;

/// What one dispatched call did: the ISA namespace of the kernels it ran
/// (mha::detail::isa_name) and how many output values of forward(x, n, out,
/// ws) with n = 32 (the run-time token count) differ in their bits from
/// forward(x, out, ws) (the library promises none).
struct report {
  const char* isa_namespace;
  std::size_t runtime_n_mismatches;
};

/// out = m.forward(x) with this level's kernels.
MHA_DISPATCH_DECLARE(forward, report(const model& m, const input& x, output& out));

}  // namespace dispatch_test
