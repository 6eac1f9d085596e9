// benchmark/torch_impl.hpp -- the book's MultiHeadAttention through libtorch
// (compiled only when find_package(Torch) succeeds; MHA_BENCH_HAVE_TORCH).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common.hpp"

namespace bench {
/// libtorch implementation with the given weights copied in (eval mode, no grad).
std::unique_ptr<runner> make_torch_runner(const config& c, const weights& w,
                                          const std::vector<float>& x);
/// Limits libtorch to one intra-op and one inter-op thread.
void torch_single_thread();
/// "1.13.0" and the like.
std::string torch_version();
}  // namespace bench
