// Concurrency (issue 12, section 4; docs/threads.md): several std::threads
// share ONE const model, fixed-size and mha::dynamic, and each thread has its
// own input, output, workspace and KV cache. Every thread runs the
// whole-sequence forward, the training-mode forward (dropout decided by the
// call's seed, no shared random state) and a KV-cache prefill plus decode
// steps, several rounds, started together; each result must equal, bit for
// bit, the same calls made on one thread before the threads start (same code,
// same operation order, so any difference is a data race or shared state).
// Built by every preset; the `tsan` preset builds it with
// -fsanitize=thread, where a race is reported and fails the run.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <latch>
#include <memory>
#include <thread>
#include <vector>

#include <mha/mha.hpp>

namespace {

constexpr int thread_count = 4;
constexpr int rounds = 3;
constexpr std::size_t batch = 2, tokens = 12, d = 16, heads = 4;
constexpr std::size_t prefill = 5, decode_steps = 4;

using fixed = mha::multi_head_attention<float, d, d, tokens, heads, true>;
using x_type = mha::tensor<float, batch, tokens, d>;
using y_type = mha::tensor<float, batch, tokens, d>;

/// Deterministic values in [-0.5, 0.5) (a 64-bit LCG's high bits).
void fill(float* p, std::size_t n, std::uint64_t seed) {
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (std::size_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    p[i] = static_cast<float>(s >> 40) / static_cast<float>(1ULL << 24) - 0.5f;
  }
}

/// Everything one thread computes: the fixed module's forward, training
/// forward and cached outputs, and the dynamic module's forward and cached
/// outputs (prefill rows, then one row per decode step).
struct results {
  std::vector<float> values;
};

/// One thread's work on the shared models; x is this thread's input.
results run_all(const fixed& fm, const mha::dynamic::multi_head_attention<float>& dm,
                const x_type& x, std::uint64_t seed) {
  results r;
  const auto keep = [&r](const float* p, std::size_t n) { r.values.insert(r.values.end(), p, p + n); };
  auto y = std::make_unique<y_type>();
  auto ws = std::make_unique<fixed::workspace<batch, tokens>>();
  fm.forward(x, *y, *ws);
  keep(y->data(), y->size());
  fm.forward_training(x, *y, *ws, seed);
  keep(y->data(), y->size());

  // KV cache: a prefill of `prefill` tokens, then decode steps of one token,
  // each from the rows of x at its position.
  auto cache = std::make_unique<fixed::kv_cache<batch>>();
  auto step_x = std::make_unique<x_type>();
  auto cws = std::make_unique<fixed::workspace<batch, tokens>>();
  std::size_t pos = 0;
  for (std::size_t n : {prefill, std::size_t{1}, std::size_t{1}, std::size_t{1}, std::size_t{1}}) {
    for (std::size_t b = 0; b < batch; ++b)
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t f = 0; f < d; ++f) (*step_x)(b, i, f) = x(b, pos + i, f);
    if (fm.forward(*step_x, n, *y, *cache, *cws) != mha::status::ok) {
      r.values.clear();  // cannot equal the reference
      return r;
    }
    for (std::size_t b = 0; b < batch; ++b) keep(&(*y)(b, 0, 0), n * d);
    pos += n;
  }

  mha::dynamic::tensor<float> dx({batch, tokens, d}), dy({batch, tokens, d});
  std::memcpy(dx.data(), x.data(), x.size() * sizeof(float));
  mha::dynamic::workspace<float> dws;
  dm.forward(dx, dy, dws);
  keep(dy.data(), dy.size());
  mha::dynamic::kv_cache<float> dcache(dm, batch);
  mha::dynamic::tensor<float> sx({batch, prefill, d}), sy({batch, prefill, d});
  pos = 0;
  for (std::size_t n : {prefill, std::size_t{1}, std::size_t{1}, std::size_t{1}, std::size_t{1}}) {
    sx.reshape({batch, n, d});
    sy.reshape({batch, n, d});
    for (std::size_t b = 0; b < batch; ++b)
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t f = 0; f < d; ++f) sx(b, i, f) = x(b, pos + i, f);
    dm.forward(sx, sy, dcache, dws);
    keep(sy.data(), sy.size());
    pos += n;
  }
  static_assert(prefill + decode_steps <= tokens);
  return r;
}

}  // namespace

int main() {
  // The shared models, made and filled on this thread before any other starts.
  auto fm_owned = std::make_unique<fixed>();
  fm_owned->dropout = 0.25f;
  std::uint64_t k = 1;
  for (auto* l : {&fm_owned->w_query, &fm_owned->w_key, &fm_owned->w_value, &fm_owned->out_proj}) {
    fill(l->weight.data(), l->weight.size(), k++);
    fill(l->bias.data(), l->bias.size(), k++);
  }
  mha::dynamic::multi_head_attention<float> dm_owned(d, d, tokens, heads, true);
  for (auto* l : {&dm_owned.w_query, &dm_owned.w_key, &dm_owned.w_value, &dm_owned.out_proj}) {
    auto& src = l == &dm_owned.w_query ? fm_owned->w_query
                : l == &dm_owned.w_key ? fm_owned->w_key
                : l == &dm_owned.w_value ? fm_owned->w_value
                                         : fm_owned->out_proj;
    std::memcpy(l->weight.data(), src.weight.data(), src.weight.size() * sizeof(float));
    std::memcpy(l->bias.data(), src.bias.data(), src.bias.size() * sizeof(float));
  }
  const fixed& fm = *fm_owned;
  const mha::dynamic::multi_head_attention<float>& dm = dm_owned;

  std::vector<std::unique_ptr<x_type>> inputs;
  std::vector<results> expected;
  for (int t = 0; t < thread_count; ++t) {
    inputs.push_back(std::make_unique<x_type>());
    fill(inputs.back()->data(), inputs.back()->size(), 100 + static_cast<std::uint64_t>(t));
    expected.push_back(run_all(fm, dm, *inputs.back(), 7 + static_cast<std::uint64_t>(t)));
  }

  std::vector<std::vector<results>> got(thread_count);
  std::latch start(thread_count);
  std::vector<std::thread> pool;
  for (int t = 0; t < thread_count; ++t)
    pool.emplace_back([&, t] {
      start.arrive_and_wait();  // all threads run at once
      for (int round = 0; round < rounds; ++round)
        got[static_cast<std::size_t>(t)].push_back(
            run_all(fm, dm, *inputs[static_cast<std::size_t>(t)], 7 + static_cast<std::uint64_t>(t)));
    });
  for (auto& th : pool) th.join();

  int failures = 0;
  for (std::size_t t = 0; t < thread_count; ++t) {
    const auto& e = expected[t].values;
    if (e.empty()) {
      std::printf("thread %zu: the single-threaded reference failed\n", t);
      ++failures;
    }
    for (std::size_t round = 0; round < rounds; ++round) {
      const auto& g = got[t][round].values;
      if (g.size() != e.size() || std::memcmp(g.data(), e.data(), e.size() * sizeof(float)) != 0) {
        std::printf("thread %zu, round %zu: result differs from the single-threaded one\n", t, round);
        ++failures;
      }
    }
  }
  // the threads' inputs differ, so must their results (the comparison is not vacuous)
  if (expected[0].values == expected[1].values) {
    std::printf("threads 0 and 1 computed the same values\n");
    ++failures;
  }
  std::printf("%d threads x %d rounds, %zu values each: %s\n", thread_count, rounds,
              expected[0].values.size(), failures == 0 ? "all equal" : "MISMATCH");
  return failures == 0 ? 0 : 1;
}
