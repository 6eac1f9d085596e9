// benchmark/torch_impl.hpp -- the book's MultiHeadAttention and its Llama
// GroupedQueryAttention through libtorch (compiled only when
// find_package(Torch) succeeds; MHA_BENCH_HAVE_TORCH).
#pragma once

#include <cstddef>
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
/// A grouped-query attention layer in PyTorch layout (nn.Linear weight
/// [out][in]; no qkv bias, out_proj with bias), RoPE base theta_base on a
/// context of `context` positions; head_dim = d_out / heads.
struct gqa_weights {
  std::size_t d_in = 0, d_out = 0, heads = 0, kv_heads = 0, context = 0;
  double theta_base = 0;
  std::vector<float> w_query;         ///< [d_out][d_in]
  std::vector<float> w_key, w_value;  ///< [kv_heads * head_dim][d_in]
  std::vector<float> w_out, b_out;    ///< [d_out][d_out], [d_out]
};
/// One KV-cached decode step of the book's Llama GroupedQueryAttention
/// (LLMs-from-scratch ch05/07_gpt_to_llama: RoPE in the rotate-half layout,
/// key/value heads shared by groups of query heads), batch 1, with
/// preallocated K/V caches [1][kv_heads][context][head_dim] written in place,
/// and the query heads viewed per key/value group instead of the book's
/// repeat_interleave of the keys and values. The constructor runs a cached
/// prefill of `prefix` [1][cached][d_in]; step() decodes `token` [1][1][d_in]
/// at position `cached` and rolls the cache back.
std::unique_ptr<decode_runner> make_torch_gqa_decode_runner(const gqa_weights& w,
                                                            const std::vector<float>& prefix,
                                                            std::size_t cached,
                                                            const std::vector<float>& token);
/// Limits libtorch to one intra-op and one inter-op thread.
void torch_single_thread();
/// "1.13.0" and the like.
std::string torch_version();
}  // namespace bench
