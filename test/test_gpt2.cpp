// test_gpt2.cpp -- the GPT-2 small attention configuration at full context
// (issue 2, section 4): multi_head_attention<float, 768, 768, 1024, 12> with
// N = MHA_GPT2_TOKENS tokens (1024, the full context, unless the build sets
// fewer: the conformance presets of the emulated targets run 300, docs/ci.md),
// B = 1, model, input, output and workspace in caller-owned heap storage,
// forward(x, out, ws) on a thread whose stack is exactly 8 MiB (the usual
// default), so the bound holds whatever `ulimit -s` the test runs under.
// Its outputs must be finite and bit-identical to mha::dynamic on the same
// weights (the two share their kernels). Labelled "slow" in CTest.
// Second case: the README's owned-storage one-liners at GPT-2 size on a
// 1 MiB thread stack (std::make_unique value-initialises in place, and
// fuse_qkv(m, out) writes the 9.4 MB fused model straight into heap storage;
// the by-value std::make_unique<F>(fuse_qkv(m)) crashed there, and on an 8 MiB
// stack, because its result is a stack temporary; it no longer compiles at
// this size).
#include <catch2/catch.hpp>

#include <cstddef>
#include <memory>
#include <random>

#include <pthread.h>

#include <mha/mha.hpp>

#include "test_support.hpp"

namespace {

/// Runs f() on a new thread with a stack of `bytes` and waits for it.
template <class F>
bool run_on_stack(F& f, std::size_t bytes) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return false;
  if (pthread_attr_setstacksize(&attr, bytes) != 0) return false;
  pthread_t thread;
  auto trampoline = [](void* arg) -> void* {
    (*static_cast<F*>(arg))();
    return nullptr;
  };
  const bool started = pthread_create(&thread, &attr, trampoline, &f) == 0;
  pthread_attr_destroy(&attr);
  return started && pthread_join(thread, nullptr) == 0;
}

/// Runs f() on a new thread with an 8 MiB stack and waits for it.
template <class F>
bool run_on_8mib_stack(F& f) {
  return run_on_stack(f, std::size_t{8} << 20);
}

}  // namespace

#ifndef MHA_GPT2_TOKENS
#define MHA_GPT2_TOKENS 1024
#endif
#define MHA_GPT2_TEXT_(n) #n
#define MHA_GPT2_TEXT(n) MHA_GPT2_TEXT_(n)

TEST_CASE("GPT-2 small attention, N = " MHA_GPT2_TEXT(MHA_GPT2_TOKENS) ", caller-owned storage",
          "[gpt2][slow]") {
  using model_t = mha::multi_head_attention<float, 768, 768, 1024, 12>;
  constexpr std::size_t B = 1, N = MHA_GPT2_TOKENS;
  // (more tokens than the token-major path takes at this width on any target:
  // the general path's blocked kernels, on K = 768 projections of several panels)
  static_assert(N > mha::detail::token_major::max_tokens && N <= model_t::context_length);
  static_assert(model_t::head_dim == 64);
  static_assert(model_t::parameter_count == 2360064);

  auto model = std::make_unique<model_t>();  // value-initialised: all-zero weights
  REQUIRE(model->w_query.weight(767, 767) == 0.0f);
  std::mt19937 rng(768);
  mha_test::randomize(*model, rng);  // nn.Linear-style U(-1/sqrt(768), 1/sqrt(768))

  auto x = std::make_unique<mha::tensor<float, B, N, 768>>();
  mha_test::fill_uniform(*x, rng, 1.0);
  auto out = std::make_unique<mha::tensor<float, B, N, 768>>();
  auto ws = std::make_unique<model_t::workspace<B, N>>();

  auto run = [&] { model->forward(*x, *out, *ws); };
  REQUIRE(run_on_8mib_stack(run));
  REQUIRE(mha_test::all_finite(out->data(), out->size));

  // The runtime-sized twin on the same weights gives the same bits.
  const auto dyn = mha_test::to_dynamic(*model);
  const auto dy = dyn.forward(mha_test::to_dynamic(*x));
  for (const std::size_t row : {std::size_t{0}, std::size_t{1}, N / 2 - 1, N - 1}) {
    INFO("row " << row);
    REQUIRE(mha_test::same_bits(&(*out)(0, row, 0), &dy(0, row, 0), 768));
  }
  REQUIRE(mha_test::same_bits(*out, dy));
}

TEST_CASE("GPT-2 size: make_unique and fuse_qkv(m, out) on a 1 MiB stack", "[gpt2][slow]") {
  using model_t = mha::multi_head_attention<float, 768, 768, 1024, 12, true>;  // GPT-2: qkv bias
  using fused_t = mha::fused_multi_head_attention<float, 768, 768, 1024, 12, true>;
  constexpr std::size_t B = 1, N = 64;
  static_assert(sizeof(fused_t) > std::size_t{1} << 20);  // larger than the thread's stack

  std::unique_ptr<model_t> model;
  std::unique_ptr<fused_t> fused;
  auto x = std::make_unique<mha::tensor<float, B, N, 768>>();
  auto out = std::make_unique<mha::tensor<float, B, N, 768>>();
  auto fused_out = std::make_unique<mha::tensor<float, B, N, 768>>();
  std::mt19937 rng(769);
  mha_test::fill_uniform(*x, rng, 1.0);
  bool zero_init = false;
  auto run = [&] {
    model = std::make_unique<model_t>();  // value-initialised in place: all zeros
    zero_init = model->w_value.bias(767) == 0.0f && model->out_proj.weight(767, 767) == 0.0f &&
                model->dropout == 0.0f;
    mha_test::randomize(*model, rng);
    model->dropout = 0.125f;
    fused = std::make_unique<fused_t>();
    mha::fuse_qkv(*model, *fused);
    auto ws = std::make_unique<model_t::workspace<B, N>>();
    model->forward(*x, *out, *ws);
    auto fused_ws = std::make_unique<fused_t::workspace<B, N>>();
    fused->forward(*x, *fused_out, *fused_ws);
  };
  REQUIRE(run_on_stack(run, std::size_t{1} << 20));
  REQUIRE(zero_init);
  // The fused weight is [W_query; W_key; W_value], the biases likewise.
  for (const std::size_t r : {std::size_t{0}, std::size_t{383}, std::size_t{767}})
    for (const std::size_t c : {std::size_t{0}, std::size_t{767}}) {
      REQUIRE(fused->w_qkv.weight(r, c) == model->w_query.weight(r, c));
      REQUIRE(fused->w_qkv.weight(768 + r, c) == model->w_key.weight(r, c));
      REQUIRE(fused->w_qkv.weight(2 * 768 + r, c) == model->w_value.weight(r, c));
    }
  REQUIRE(mha_test::same_bits(fused->w_qkv.bias.data() + 2 * 768, model->w_value.bias.data(), 768));
  REQUIRE(mha_test::same_bits(fused->out_proj.weight, model->out_proj.weight));
  REQUIRE(fused->dropout == 0.125f);
  REQUIRE(mha_test::all_finite(out->data(), out->size));
  REQUIRE(mha_test::same_bits(*fused_out, *out));
}
