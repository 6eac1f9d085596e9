// examples/generate.cpp -- token-by-token streaming through a GPT-2-size
// attention layer (d_in = d_out = 768, 12 heads, context 1024) with a KV cache:
// a prefill of the prompt, then one decode step per generated token, printing
// each step's latency. The "next token" fed back is a stand-in (a fixed
// function of the layer's output row: there is no vocabulary or language-model
// head here); what matters is the call pattern and its cost.
//
//   build/default/examples/generate [--prompt P] [--tokens N] [--check]
//
// --check also recomputes every step with a whole-sequence forward over all
// tokens so far and reports the largest difference (the cached rows equal the
// plain forward's rows to rounding); it exits with 1 above 2e-6.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>

#include <mha/mha.hpp>

namespace {
constexpr std::size_t d_model = 768, heads = 12, context = 1024;
using layer = mha::multi_head_attention<float, d_model, d_model, context, heads>;
using clock_type = std::chrono::steady_clock;

double micros(clock_type::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}
}  // namespace

int main(int argc, char** argv) {
  std::size_t prompt = 32, tokens = 64;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--prompt" && i + 1 < argc) {
      prompt = std::strtoul(argv[++i], nullptr, 10);
    } else if (a == "--tokens" && i + 1 < argc) {
      tokens = std::strtoul(argv[++i], nullptr, 10);
    } else if (a == "--check") {
      check = true;
    } else {
      std::fprintf(stderr, "usage: %s [--prompt P] [--tokens N] [--check]\n", argv[0]);
      return 2;
    }
  }
  if (prompt == 0 || prompt + tokens > context) {
    std::fprintf(stderr, "need 1 <= prompt and prompt + tokens <= %zu\n", context);
    return 2;
  }

  // Everything large lives on the heap, allocated once up front (the layer is
  // 9.4 MB, its KV cache 6 MB); the streaming calls themselves allocate nothing.
  auto model = std::make_unique<layer>();
  auto cache = std::make_unique<layer::kv_cache<1>>();                 // empty
  auto ws = std::make_unique<layer::workspace<1, context>>();         // any n <= context
  auto x = std::make_unique<mha::tensor<float, 1, context, d_model>>();    // the new tokens' rows
  auto out = std::make_unique<mha::tensor<float, 1, context, d_model>>();  // their outputs

  // Random weights (nn.Linear's default range) and a random prompt.
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> w(-1.0f / std::sqrt(float(d_model)), 1.0f / std::sqrt(float(d_model)));
  for (auto* t : {model->w_query.weight.data(), model->w_key.weight.data(), model->w_value.weight.data(),
                  model->out_proj.weight.data()})
    for (std::size_t i = 0; i < d_model * d_model; ++i) t[i] = w(rng);
  for (float& b : model->out_proj.bias) b = w(rng);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  // --check: every token so far, and the whole-sequence forward's output
  std::unique_ptr<mha::tensor<float, 1, context, d_model>> history, full;
  if (check) {
    history = std::make_unique<mha::tensor<float, 1, context, d_model>>();
    full = std::make_unique<mha::tensor<float, 1, context, d_model>>();
  }
  for (std::size_t i = 0; i < prompt * d_model; ++i) x->elements[i] = u(rng);
  if (check) std::memcpy(history->data(), x->data(), prompt * d_model * sizeof(float));

  // Prefill: the whole prompt in one call.
  auto t0 = clock_type::now();
  mha::status s = model->forward(*x, prompt, *out, *cache, *ws);
  auto t1 = clock_type::now();
  if (s != mha::status::ok) {
    std::fprintf(stderr, "prefill failed: %s\n", mha::to_string(s));
    return 1;
  }
  std::printf("prefill of %zu tokens: %.1f us (%.1f us/token)\n", prompt, micros(t1 - t0),
              micros(t1 - t0) / double(prompt));

  // Decode: one token per call; the next input row is made from the last output row.
  double total = 0, worst = 0, max_diff = 0;
  std::size_t last_row = prompt - 1;
  for (std::size_t step = 0; step < tokens; ++step) {
    for (std::size_t f = 0; f < d_model; ++f)
      x->elements[f] = std::tanh(out->elements[last_row * d_model + f] * 4.0f + 0.1f * float(f % 7));
    if (check) std::memcpy(history->data() + cache->size() * d_model, x->data(), d_model * sizeof(float));
    t0 = clock_type::now();
    s = model->forward(*x, 1, *out, *cache, *ws);
    t1 = clock_type::now();
    if (s != mha::status::ok) {
      std::fprintf(stderr, "decode step %zu failed: %s\n", step, mha::to_string(s));
      return 1;
    }
    last_row = 0;
    const double us = micros(t1 - t0);
    total += us;
    worst = us > worst ? us : worst;
    std::printf("token %4zu (position %4zu): %8.1f us\n", step, cache->size() - 1, us);
    if (check) {
      // the same row from a whole-sequence forward over every token so far
      const std::size_t n = cache->size();
      if (model->forward(*history, n, *full, *ws) != mha::status::ok) return 1;
      for (std::size_t f = 0; f < d_model; ++f) {
        const double e = full->elements[(n - 1) * d_model + f];
        const double diff = std::abs(double(out->elements[f]) - e) / std::max(1.0, std::abs(e));
        max_diff = diff > max_diff ? diff : max_diff;
      }
    }
  }
  std::printf("%zu decode steps: mean %.1f us, worst %.1f us; cache holds %zu of %zu tokens\n", tokens,
              tokens ? total / double(tokens) : 0.0, worst, cache->size(), layer::kv_cache<1>::capacity);
  if (check) {
    std::printf("largest |cached - recomputed| / max(1, |recomputed|): %.3g\n", max_diff);
    if (!(max_diff <= 2e-6)) return 1;  // the library's float tolerance against PyTorch
  }
  return 0;
}
