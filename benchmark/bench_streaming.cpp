// benchmark/bench_streaming.cpp -- streaming inference at GPT-2 size (d_in =
// d_out = 768, 12 heads), single-threaded, float:
//
//   BM_decode/<impl>/gpt2/<N>   one new token after N cached (B = 1), impl in
//                               fixed (mha::multi_head_attention, KV cache),
//                               dynamic (mha::dynamic, KV cache), libtorch (the
//                               book's KV-cache code with preallocated K/V) and
//                               fixed_recompute (a full forward over N+1 tokens);
//   BM_forward_n/fixed/gpt2/<n> the run-time-count forward of a ContextLength-1024
//                               model, beside BM_forward_n/fixed_static/gpt2/<n>,
//                               the compile-time-N forward at the same n;
//   BM_bytes/<N>                this core's time to read once the bytes a
//                               decode step must read (the four weight
//                               matrices, out_proj's bias and N cached keys
//                               and values): the memory-traffic bound.
//   BM_decode/<impl>/llama/1024 grouped-query decode at a Llama-like size
//                               (d_model 2048, 32 query heads, 8 key/value
//                               heads, head_dim 64, RoPE base 500000, 1024
//                               cached tokens): impl gqa_fixed, gqa_dynamic,
//                               mha_fixed (multi_head_attention of the
//                               same width: 32 key/value heads) and
//                               torch_gqa (the book's Llama
//                               GroupedQueryAttention in libtorch, KV cache,
//                               query heads grouped per key/value head),
//                               beside BM_bytes/llama_gqa/1024 and
//                               BM_bytes/llama_mha/1024 (their bounds).
//
// Every decode step is followed by truncate(N), so each iteration does the
// same work. Decode outputs are cross-checked before timing: fixed == dynamic
// bit for bit, both within 1e-5 of libtorch and of the plain forward's row
// (the Llama-size step: within 1e-5 of the plain forward's row, 1e-4 of
// torch_gqa, whose RoPE tables are float32 torch.cos/sin).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <mha/mha.hpp>

#include "common.hpp"
#include "streaming.hpp"
#if MHA_BENCH_HAVE_TORCH
#include "torch_impl.hpp"
#endif

namespace bench {
namespace {

constexpr std::size_t d = 768, heads = 12;
/// The decode model's context: room for the token after N = 1024 cached ones
/// (1024 + 64, so K^T rows stay 64-byte multiples).
constexpr std::size_t decode_context = 1088;
using decode_model = mha::multi_head_attention<float, d, d, decode_context, heads>;
using gpt2_model = mha::multi_head_attention<float, d, d, 1024, heads>;

template <class M>
void load(M& m, const weights& w) {
  std::memcpy(m.w_query.weight.data(), w.w_query.data(), w.w_query.size() * sizeof(float));
  std::memcpy(m.w_key.weight.data(), w.w_key.data(), w.w_key.size() * sizeof(float));
  std::memcpy(m.w_value.weight.data(), w.w_value.data(), w.w_value.size() * sizeof(float));
  std::memcpy(m.out_proj.weight.data(), w.w_out.data(), w.w_out.size() * sizeof(float));
  std::memcpy(m.out_proj.bias.data(), w.b_out.data(), w.b_out.size() * sizeof(float));
}

/// Everything the decode benchmarks share: weights, the token stream (N + 1
/// tokens), the fixed and dynamic models with caches holding N tokens.
struct decode_setup {
  std::size_t cached;
  config c;
  weights w;
  std::vector<float> x;  // [1][cached + 1][d]
  std::unique_ptr<decode_model> fixed = std::make_unique<decode_model>();
  std::unique_ptr<decode_model::kv_cache<1>> cache = std::make_unique<decode_model::kv_cache<1>>();
  std::unique_ptr<decode_model::workspace<1, decode_context>> ws =
      std::make_unique<decode_model::workspace<1, decode_context>>();
  std::unique_ptr<mha::tensor<float, 1, decode_context, d>> xt =
      std::make_unique<mha::tensor<float, 1, decode_context, d>>();
  std::unique_ptr<mha::tensor<float, 1, decode_context, d>> out =
      std::make_unique<mha::tensor<float, 1, decode_context, d>>();
  std::unique_ptr<mha::tensor<float, 1, decode_context, d>> token =
      std::make_unique<mha::tensor<float, 1, decode_context, d>>();
  mha::dynamic::multi_head_attention<float> dyn{d, d, decode_context, heads};
  mha::dynamic::kv_cache<float> dcache{dyn, 1};
  mha::dynamic::workspace<float> dws;
  mha::dynamic::tensor<float> dtoken{{1, 1, d}}, dout{{1, 1, d}};

  explicit decode_setup(std::size_t n) : cached(n), c{"gpt2", 1, n + 1, d, d, heads} {
    w = make_weights(c);
    x = make_input(c);
    load(*fixed, w);
    std::copy(w.w_query.begin(), w.w_query.end(), dyn.w_query.weight.begin());
    std::copy(w.w_key.begin(), w.w_key.end(), dyn.w_key.weight.begin());
    std::copy(w.w_value.begin(), w.w_value.end(), dyn.w_value.weight.begin());
    std::copy(w.w_out.begin(), w.w_out.end(), dyn.out_proj.weight.begin());
    std::copy(w.b_out.begin(), w.b_out.end(), dyn.out_proj.bias.begin());
    std::copy(x.begin(), x.end(), xt->begin());
    std::copy(x.begin() + std::ptrdiff_t(n * d), x.end(), token->begin());
    std::copy(x.begin() + std::ptrdiff_t(n * d), x.end(), dtoken.begin());
    // prefill the N cached tokens (fixed and dynamic)
    if (fixed->forward(*xt, n, *out, *cache, *ws) != mha::status::ok) std::abort();
    mha::dynamic::tensor<float> prefix({1, n, d}), pout({1, n, d});
    std::copy(x.begin(), x.begin() + std::ptrdiff_t(n * d), prefix.begin());
    dyn.forward(prefix, pout, dcache, dws);
  }
  void fixed_step() noexcept {
    const auto s = fixed->forward(*token, 1, *out, *cache, *ws);
    benchmark::DoNotOptimize(s);
    cache->truncate(cached);
  }
  void dynamic_step() {
    dyn.forward(dtoken, dout, dcache, dws);
    dcache.truncate(cached);
  }
};

void configure(benchmark::internal::Benchmark* b) {
  b->Unit(benchmark::kMicrosecond)->ReportAggregatesOnly(true)->Repetitions(5)->MinTime(0.2);
}

/// Sum of every float of the buffers (vectorised, 4 independent chains):
/// reads each byte once.
float read_all(const std::vector<std::pair<const float*, std::size_t>>& buffers) noexcept {
  using V = mha::detail::simd::vec<float>;
  constexpr std::size_t L = mha::detail::simd::lanes<float>;
  V acc[4] = {};
  for (const auto& [p, n] : buffers) {
    std::size_t i = 0;
    for (; i + 4 * L <= n; i += 4 * L)
      for (std::size_t k = 0; k < 4; ++k) acc[k] += mha::detail::simd::load(p + i + k * L);
    for (; i < n; ++i) acc[0][0] += p[i];
  }
  return mha::detail::simd::reduce_sum<float>(acc[0] + acc[1] + acc[2] + acc[3]);
}

void add_decode(std::size_t n, std::vector<std::string>& report) {
  auto s = std::make_shared<decode_setup>(n);
  // cross-check: fixed == dynamic bit for bit, against the plain forward's row and libtorch
  s->fixed_step();
  s->dynamic_step();
  const std::vector<float> fixed_out(s->out->data(), s->out->data() + d);
  const std::vector<float> dyn_out(s->dout.begin(), s->dout.end());
  auto ref = std::make_unique<mha::tensor<float, 1, decode_context, d>>();
  if (s->fixed->forward(*s->xt, n + 1, *ref, *s->ws) != mha::status::ok) std::abort();
  const std::vector<float> plain_row(ref->data() + n * d, ref->data() + (n + 1) * d);
  char line[256];
  double torch_diff = -1;
  std::shared_ptr<decode_runner> torch;
#if MHA_BENCH_HAVE_TORCH
  torch = make_torch_decode_runner(s->c, s->w, std::vector<float>(s->x.begin(), s->x.begin() + std::ptrdiff_t(n * d)),
                                   n, std::vector<float>(s->x.begin() + std::ptrdiff_t(n * d), s->x.end()));
  torch->step();
  torch_diff = max_rel_diff(fixed_out, torch->output());
#endif
  const double plain_diff = max_rel_diff(fixed_out, plain_row);
  std::snprintf(line, sizeof line,
                "cross-check decode/gpt2/%zu: max|a-b|/max|b| fixed vs plain forward %.2e, vs libtorch %.2e; %s",
                n, plain_diff, torch_diff,
                fixed_out == dyn_out ? "fixed == dynamic bit for bit" : "fixed != dynamic (NOT bit-identical)");
  report.push_back(line);
  if (plain_diff > 1e-5 || torch_diff > 1e-5 || fixed_out != dyn_out) {
    std::fprintf(stderr, "%s\nerror: decode outputs disagree, not timing them\n", line);
    std::exit(1);
  }
  const std::string suffix = "/gpt2/" + std::to_string(n);
  configure(benchmark::RegisterBenchmark(("BM_decode/fixed" + suffix).c_str(), [s](benchmark::State& st) {
    for (auto _ : st) {
      s->fixed_step();
      benchmark::DoNotOptimize(s->out->data());
      benchmark::ClobberMemory();
    }
  }));
  configure(benchmark::RegisterBenchmark(("BM_decode/dynamic" + suffix).c_str(), [s](benchmark::State& st) {
    for (auto _ : st) {
      s->dynamic_step();
      benchmark::DoNotOptimize(s->dout.data());
      benchmark::ClobberMemory();
    }
  }));
  if (torch)
    configure(benchmark::RegisterBenchmark(("BM_decode/libtorch" + suffix).c_str(), [torch](benchmark::State& st) {
      for (auto _ : st) {
        torch->step();
        benchmark::ClobberMemory();
      }
    }));
  configure(benchmark::RegisterBenchmark(("BM_decode/fixed_recompute" + suffix).c_str(), [s, n](benchmark::State& st) {
    for (auto _ : st) {
      const auto r = s->fixed->forward(*s->xt, n + 1, *s->out, *s->ws);
      benchmark::DoNotOptimize(r);
      benchmark::DoNotOptimize(s->out->data());
      benchmark::ClobberMemory();
    }
  }));
  configure(benchmark::RegisterBenchmark(("BM_bytes/" + std::to_string(n)).c_str(), [s, n](benchmark::State& st) {
    const decode_model& m = *s->fixed;
    // the four weight matrices, out_proj's bias, the N cached keys (N entries
    // of each K^T row) and the N cached values (each head's first N rows)
    std::vector<std::pair<const float*, std::size_t>> exact = {
        {m.w_query.weight.data(), d * d}, {m.w_key.weight.data(), d * d},
        {m.w_value.weight.data(), d * d}, {m.out_proj.weight.data(), d * d},
        {m.out_proj.bias.data(), d}};
    for (std::size_t f = 0; f < d; ++f) exact.emplace_back(s->cache->keys_transposed(0) + f * decode_context, n);
    for (std::size_t h = 0; h < heads; ++h)  // V: [heads][decode_context][head_dim]
      exact.emplace_back(s->cache->values(0) + h * decode_context * (d / heads), n * (d / heads));
    double bytes = 0;
    for (const auto& b : exact) bytes += double(b.second) * sizeof(float);
    for (auto _ : st) benchmark::DoNotOptimize(read_all(exact));
    st.counters["bytes"] = bytes;
    st.counters["bytes/s"] = benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
  }));
}

/// The run-time-count forward of a ContextLength-1024 GPT-2 layer at n, and
/// the compile-time forward at N = n.
struct forward_n_setup {
  std::unique_ptr<gpt2_model> m = std::make_unique<gpt2_model>();
  std::unique_ptr<mha::tensor<float, 1, 1024, d>> x = std::make_unique<mha::tensor<float, 1, 1024, d>>();
  std::unique_ptr<mha::tensor<float, 1, 1024, d>> out = std::make_unique<mha::tensor<float, 1, 1024, d>>();
  std::unique_ptr<gpt2_model::workspace<1, 1024>> ws = std::make_unique<gpt2_model::workspace<1, 1024>>();
  weights w;
  std::vector<float> input;
  forward_n_setup() {
    const config c{"gpt2", 1, 1024, d, d, heads};
    w = make_weights(c);
    input = make_input(c);
    load(*m, w);
    std::copy(input.begin(), input.end(), x->begin());
  }
};

template <std::size_t N>
void add_forward_n(const std::shared_ptr<forward_n_setup>& s, std::vector<std::string>& report) {
  struct fixed_n {
    std::unique_ptr<mha::tensor<float, 1, N, d>> x = std::make_unique<mha::tensor<float, 1, N, d>>();
    std::unique_ptr<mha::tensor<float, 1, N, d>> out = std::make_unique<mha::tensor<float, 1, N, d>>();
    std::unique_ptr<typename gpt2_model::template workspace<1, N>> ws =
        std::make_unique<typename gpt2_model::template workspace<1, N>>();
  };
  auto f = std::make_shared<fixed_n>();
  std::copy(s->input.begin(), s->input.begin() + std::ptrdiff_t(N * d), f->x->begin());
  s->m->forward(*f->x, *f->out, *f->ws);
  if (s->m->forward(*s->x, N, *s->out, *s->ws) != mha::status::ok) std::abort();
  const bool same = std::memcmp(f->out->data(), s->out->data(), N * d * sizeof(float)) == 0;
  report.push_back("cross-check forward_n/gpt2/" + std::to_string(N) + ": " +
                   (same ? "run-time n == compile-time N bit for bit" : "run-time n != compile-time N (NOT bit-identical)"));
  if (!same) {
    std::fprintf(stderr, "error: forward(x, n, out, ws) differs from the compile-time forward at n = %zu\n", N);
    std::exit(1);
  }
  configure(benchmark::RegisterBenchmark(("BM_forward_n/fixed/gpt2/" + std::to_string(N)).c_str(), [s](benchmark::State& st) {
    for (auto _ : st) {
      const auto r = s->m->forward(*s->x, N, *s->out, *s->ws);
      benchmark::DoNotOptimize(r);
      benchmark::DoNotOptimize(s->out->data());
      benchmark::ClobberMemory();
    }
  }));
  configure(benchmark::RegisterBenchmark(("BM_forward_n/fixed_static/gpt2/" + std::to_string(N)).c_str(), [s, f](benchmark::State& st) {
    for (auto _ : st) {
      s->m->forward(*f->x, *f->out, *f->ws);
      benchmark::DoNotOptimize(f->out->data());
      benchmark::ClobberMemory();
    }
  }));
}

// ------------------------------------------------------------------ grouped-query decode

constexpr std::size_t llama_d = 2048, llama_heads = 32, llama_kv_heads = 8;
using llama_gqa = mha::grouped_query_attention<float, llama_d, llama_d, decode_context, llama_heads,
                                               llama_kv_heads, false, mha::rope<500000>>;
using llama_mha = mha::multi_head_attention<float, llama_d, llama_d, decode_context, llama_heads>;

/// One model of the Llama-size decode benchmarks with N cached tokens.
template <class M>
struct llama_state {
  std::unique_ptr<M> m = std::make_unique<M>();
  std::unique_ptr<typename M::template kv_cache<1>> cache =
      std::make_unique<typename M::template kv_cache<1>>();
  std::unique_ptr<typename M::template workspace<1, decode_context>> ws =
      std::make_unique<typename M::template workspace<1, decode_context>>();
  std::unique_ptr<mha::tensor<float, 1, decode_context, llama_d>> out =
      std::make_unique<mha::tensor<float, 1, decode_context, llama_d>>();
  std::size_t cached = 0;
  void step(const mha::tensor<float, 1, decode_context, llama_d>& token) noexcept {
    const auto st = m->forward(token, 1, *out, *cache, *ws);
    benchmark::DoNotOptimize(st);
    cache->truncate(cached);
  }
  /// The bytes a decode step must read: the four weight matrices, out_proj's
  /// bias, the N cached keys and values of the key/value heads.
  std::vector<std::pair<const float*, std::size_t>> step_bytes() const {
    constexpr std::size_t kv = M::num_kv_heads * M::head_dim;
    std::vector<std::pair<const float*, std::size_t>> b = {
        {m->w_query.weight.data(), llama_d * llama_d}, {m->w_key.weight.data(), kv * llama_d},
        {m->w_value.weight.data(), kv * llama_d},      {m->out_proj.weight.data(), llama_d * llama_d},
        {m->out_proj.bias.data(), llama_d}};
    for (std::size_t f = 0; f < kv; ++f) b.emplace_back(cache->keys_transposed(0) + f * decode_context, cached);
    for (std::size_t h = 0; h < M::num_kv_heads; ++h)
      b.emplace_back(cache->values(0) + h * decode_context * M::head_dim, cached * M::head_dim);
    return b;
  }
};

void add_llama_decode(std::size_t n, std::vector<std::string>& report) {
  struct setup {
    llama_state<llama_gqa> gqa;
    llama_state<llama_mha> mha;
    mha::dynamic::grouped_query_attention<float> dyn{llama_d, llama_d, decode_context, llama_heads,
                                                     llama_kv_heads, false,
                                                     mha::dynamic::rope_config{500000}};
    std::unique_ptr<mha::dynamic::kv_cache<float>> dcache;
    mha::dynamic::workspace<float> dws;
    mha::dynamic::tensor<float> dtoken{{1, 1, llama_d}}, dout{{1, 1, llama_d}};
    std::unique_ptr<mha::tensor<float, 1, decode_context, llama_d>> x =
        std::make_unique<mha::tensor<float, 1, decode_context, llama_d>>();
    std::unique_ptr<mha::tensor<float, 1, decode_context, llama_d>> token =
        std::make_unique<mha::tensor<float, 1, decode_context, llama_d>>();
    std::size_t cached = 0;
  };
  auto s = std::make_shared<setup>();
  s->cached = s->gqa.cached = s->mha.cached = n;
  // weights as nn.Linear's initialisation (uniform, 1/sqrt(fan_in)); W_key and
  // W_value of the GQA model are the first 8 heads' rows of the MHA model's
  const config c{"llama", 1, n + 1, llama_d, llama_d, llama_heads};
  const weights w = make_weights(c);
  const std::vector<float> input = make_input(c);
  load(*s->mha.m, w);
  std::copy(w.w_query.begin(), w.w_query.end(), s->gqa.m->w_query.weight.begin());
  std::copy_n(w.w_key.begin(), s->gqa.m->w_key.weight.size, s->gqa.m->w_key.weight.begin());
  std::copy_n(w.w_value.begin(), s->gqa.m->w_value.weight.size, s->gqa.m->w_value.weight.begin());
  std::copy(w.w_out.begin(), w.w_out.end(), s->gqa.m->out_proj.weight.begin());
  std::copy(w.b_out.begin(), w.b_out.end(), s->gqa.m->out_proj.bias.begin());
  mha::copy_parameters(*s->gqa.m, s->dyn);
  s->dcache = std::make_unique<mha::dynamic::kv_cache<float>>(s->dyn, 1);
  std::copy(input.begin(), input.end(), s->x->begin());
  std::copy(input.begin() + std::ptrdiff_t(n * llama_d), input.end(), s->token->begin());
  std::copy(input.begin() + std::ptrdiff_t(n * llama_d), input.end(), s->dtoken.begin());
  // prefill N tokens
  if (s->gqa.m->forward(*s->x, n, *s->gqa.out, *s->gqa.cache, *s->gqa.ws) != mha::status::ok ||
      s->mha.m->forward(*s->x, n, *s->mha.out, *s->mha.cache, *s->mha.ws) != mha::status::ok)
    std::abort();
  {
    mha::dynamic::tensor<float> prefix({1, n, llama_d}), pout({1, n, llama_d});
    std::copy(input.begin(), input.begin() + std::ptrdiff_t(n * llama_d), prefix.begin());
    s->dyn.forward(prefix, pout, *s->dcache, s->dws);
  }
  // cross-check: fixed == dynamic bit for bit, and the plain forward's row
  s->gqa.step(*s->token);
  s->dyn.forward(s->dtoken, s->dout, *s->dcache, s->dws);
  s->dcache->truncate(n);
  const std::vector<float> fixed_out(s->gqa.out->data(), s->gqa.out->data() + llama_d);
  const std::vector<float> dyn_out(s->dout.begin(), s->dout.end());
  auto ref = std::make_unique<mha::tensor<float, 1, decode_context, llama_d>>();
  if (s->gqa.m->forward(*s->x, n + 1, *ref, *s->gqa.ws) != mha::status::ok) std::abort();
  const std::vector<float> plain_row(ref->data() + n * llama_d, ref->data() + (n + 1) * llama_d);
  const double plain_diff = max_rel_diff(fixed_out, plain_row);
  // libtorch's step (the same weights, copied from the gqa_fixed model; its
  // own prefill of the same N tokens), -1 when built without libtorch
  double torch_diff = -1;
  char torch_part[96] = "torch_gqa not built (no libtorch)";
  std::shared_ptr<decode_runner> torch;
#if MHA_BENCH_HAVE_TORCH
  {
    const llama_gqa& g = *s->gqa.m;
    gqa_weights tw;
    tw.d_in = tw.d_out = llama_d;
    tw.heads = llama_heads;
    tw.kv_heads = llama_kv_heads;
    tw.context = decode_context;
    tw.theta_base = 500000;
    tw.w_query.assign(g.w_query.weight.begin(), g.w_query.weight.end());
    tw.w_key.assign(g.w_key.weight.begin(), g.w_key.weight.end());
    tw.w_value.assign(g.w_value.weight.begin(), g.w_value.weight.end());
    tw.w_out.assign(g.out_proj.weight.begin(), g.out_proj.weight.end());
    tw.b_out.assign(g.out_proj.bias.begin(), g.out_proj.bias.end());
    torch = make_torch_gqa_decode_runner(
        tw, std::vector<float>(input.begin(), input.begin() + std::ptrdiff_t(n * llama_d)), n,
        std::vector<float>(input.begin() + std::ptrdiff_t(n * llama_d), input.end()));
    torch->step();
    const std::vector<float> torch_out = torch->output();
    // (max_rel_diff's std::max passes over NaN: a non-finite output fails here)
    const bool finite = std::all_of(torch_out.begin(), torch_out.end(), [](float v) { return std::isfinite(v); });
    torch_diff = finite ? max_rel_diff(torch_out, fixed_out) : INFINITY;
    std::snprintf(torch_part, sizeof torch_part, "torch_gqa vs fixed %.2e (vs plain forward %.2e)",
                  torch_diff, finite ? max_rel_diff(torch_out, plain_row) : INFINITY);
  }
#endif
  char line[384];
  std::snprintf(line, sizeof line,
                "cross-check decode/llama/%zu (GQA 32/8 heads, RoPE): max|a-b|/max|b| fixed vs plain "
                "forward %.2e, %s; %s",
                n, plain_diff, torch_part,
                fixed_out == dyn_out ? "fixed == dynamic bit for bit" : "fixed != dynamic (NOT bit-identical)");
  report.push_back(line);
  if (plain_diff > 1e-5 || torch_diff > 1e-4 || fixed_out != dyn_out) {
    std::fprintf(stderr, "%s\nerror: decode outputs disagree, not timing them\n", line);
    std::exit(1);
  }
  const std::string suffix = "/llama/" + std::to_string(n);
  configure(benchmark::RegisterBenchmark(("BM_decode/gqa_fixed" + suffix).c_str(), [s](benchmark::State& st) {
    for (auto _ : st) {
      s->gqa.step(*s->token);
      benchmark::DoNotOptimize(s->gqa.out->data());
      benchmark::ClobberMemory();
    }
  }));
  configure(benchmark::RegisterBenchmark(("BM_decode/gqa_dynamic" + suffix).c_str(), [s](benchmark::State& st) {
    for (auto _ : st) {
      s->dyn.forward(s->dtoken, s->dout, *s->dcache, s->dws);
      s->dcache->truncate(s->cached);
      benchmark::DoNotOptimize(s->dout.data());
      benchmark::ClobberMemory();
    }
  }));
  configure(benchmark::RegisterBenchmark(("BM_decode/mha_fixed" + suffix).c_str(), [s](benchmark::State& st) {
    for (auto _ : st) {
      s->mha.step(*s->token);
      benchmark::DoNotOptimize(s->mha.out->data());
      benchmark::ClobberMemory();
    }
  }));
  if (torch)
    configure(benchmark::RegisterBenchmark(("BM_decode/torch_gqa" + suffix).c_str(), [torch](benchmark::State& st) {
      for (auto _ : st) {
        torch->step();
        benchmark::DoNotOptimize(torch.get());
        benchmark::ClobberMemory();
      }
    }));
  const auto add_bytes = [&](const char* name, auto bytes_of) {
    configure(benchmark::RegisterBenchmark((std::string("BM_bytes/") + name + "/" + std::to_string(n)).c_str(),
                                           [s, bytes_of](benchmark::State& st) {
      const auto exact = bytes_of(*s);
      double bytes = 0;
      for (const auto& b : exact) bytes += double(b.second) * sizeof(float);
      for (auto _ : st) benchmark::DoNotOptimize(read_all(exact));
      st.counters["bytes"] = bytes;
      st.counters["bytes/s"] = benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
    }));
  };
  add_bytes("llama_gqa", [](const setup& t) { return t.gqa.step_bytes(); });
  add_bytes("llama_mha", [](const setup& t) { return t.mha.step_bytes(); });
}

}  // namespace

void register_streaming(std::vector<std::string>& report) {
  const char* only = std::getenv("MHA_BENCH_CONFIGS");
  if (only != nullptr && *only != '\0' && std::string(only).find("streaming") == std::string::npos) return;
  for (const std::size_t n : {128, 512, 1024}) add_decode(n, report);
  auto s = std::make_shared<forward_n_setup>();
  add_forward_n<1>(s, report);
  add_forward_n<64>(s, report);
  add_forward_n<333>(s, report);
  add_forward_n<1024>(s, report);
  add_llama_decode(1024, report);
}

}  // namespace bench
