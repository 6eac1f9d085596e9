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
/// One KV-cached decode step of the same module (the book's bonus code,
/// LLMs-from-scratch ch04/03_kv-cache, with preallocated K/V caches
/// [batch][heads][context_length][head_dim] written in place instead of
/// torch.cat; context_length = max(c.tokens, cached + 1)). The constructor runs
/// a cached prefill of `prefix` [c.batch][cached][c.d_in]; step() decodes
/// `token` [c.batch][1][c.d_in] at position `cached` and rolls the cache back.
std::unique_ptr<decode_runner> make_torch_decode_runner(const config& c, const weights& w,
                                                        const std::vector<float>& prefix,
                                                        std::size_t cached,
                                                        const std::vector<float>& token);
/// Limits libtorch to one intra-op and one inter-op thread.
void torch_single_thread();
/// "1.13.0" and the like.
std::string torch_version();
}  // namespace bench
