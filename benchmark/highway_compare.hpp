// benchmark/highway_compare.hpp -- mha's run-time dispatch against Google
// Highway's (issue 10, item 6; docs/dispatch.md, "Why not Google Highway (measured)"): the
// same two functions written once for each, each dispatched by its library.
//   linear: GPT-2's out_proj on a whole context, y[1024][768] = x[1024][768]
//           * weight^T + bias (weight [768][768], nn.Linear's layout): what
//           most of the GPT-2-size forward's time goes to (its four
//           projections are about 3/4 of its multiply-adds).
//   dot16:  a 16-element dot product, plain C++ in both: the cost of a call
//           through each dispatch mechanism.
#pragma once

#include <cstddef>

#include <mha/dispatch.hpp>
#include <mha/linear.hpp>
#include <mha/tensor.hpp>

namespace bench_highway {

inline constexpr std::size_t tokens = 1024;  ///< GPT-2's context_length
inline constexpr std::size_t d_model = 768;  ///< GPT-2 small's embedding size

using layer = mha::linear<float, d_model, d_model, true>;
using input = mha::tensor<float, tokens, d_model>;
using output = mha::tensor<float, tokens, d_model>;

/// mha: y = l.forward(x, y), built at each x86-64 level (highway_mha_kernels.cpp).
MHA_DISPATCH_DECLARE(linear, void(const layer& l, const input& x, output& y));
/// mha: sum of a[i] * b[i], i < 16, built at each level.
MHA_DISPATCH_DECLARE(dot16, float(const float* a, const float* b));

/// Highway (highway_kernels.cpp, foreach_target.h): y [rows][out] = x [rows][in]
/// * weight^T + bias, with weight_t [in][out] (the weight transposed once, at
/// load time, so the inner loop reads rows of it); rows % 4 == 0, out a
/// multiple of two vectors of the widest target (32 floats).
void hwy_linear(const float* weight_t, const float* bias, const float* x, float* y,
                std::size_t rows, std::size_t in, std::size_t out);
/// Highway: the same dot product as dot16.
float hwy_dot16(const float* a, const float* b);
/// Restricts Highway's dispatch to one target by name ("SCALAR", "SSSE3",
/// "SSE4", "AVX2", "AVX3"; hwy::TargetName), or lifts the restriction
/// (nullptr); false when the CPU lacks it or the name is unknown.
bool hwy_force(const char* target_name);
/// Prints the targets Highway built into this program that the CPU runs.
void hwy_print_targets();
/// The name of the target Highway's next dispatched call runs.
const char* hwy_current();

}  // namespace bench_highway
