// benchmark/bench_cutoff.cpp -- the grid behind token_major::tokens_limit: the
// fixed-size multi_head_attention (token-major path up to the limit, blocked
// path beyond) against mha::dynamic (always the blocked path) for d 32..1024
// and N 8..256, batch 1, float inference, random weights. Timings, not a test.
// Build it with each target's flags (docs/token-major-cutoff.md):
//   cmake --build --preset bench --target mha_bench_cutoff
// and run with --benchmark_enable_random_interleaving=true: on no row may the
// fixed-size time exceed the dynamic one (beyond the machine's noise).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <mha/mha.hpp>

namespace {

/// Registers fixed/D.._H.._N.. and dynamic/D.._H.._N.. for one shape (d_in =
/// d_out = D, H heads, N tokens), same weights and input in both.
template <std::size_t N, std::size_t D, std::size_t H>
void register_shape() {
  using model = mha::multi_head_attention<float, D, D, N, H>;
  auto m = std::make_shared<model>();
  auto x = std::make_shared<mha::tensor<float, 1, N, D>>();
  auto out = std::make_shared<mha::tensor<float, 1, N, D>>();
  auto ws = std::make_shared<typename model::template workspace<1, N>>();
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> u(-0.05f, 0.05f);
  for (auto* w : {&m->w_query.weight, &m->w_key.weight, &m->w_value.weight, &m->out_proj.weight})
    for (auto& e : w->elements) e = u(gen);
  for (auto& e : x->elements) e = 20.0f * u(gen);
  auto dm = std::make_shared<mha::dynamic::multi_head_attention<float>>(D, D, N, H);
  const auto copy = [](const auto& from, auto& to) {
    std::copy(std::begin(from.elements), std::end(from.elements), to.begin());
  };
  copy(m->w_query.weight, dm->w_query.weight);
  copy(m->w_key.weight, dm->w_key.weight);
  copy(m->w_value.weight, dm->w_value.weight);
  copy(m->out_proj.weight, dm->out_proj.weight);
  auto dx = std::make_shared<mha::dynamic::tensor<float>>(std::vector<std::size_t>{1, N, D});
  copy(*x, *dx);
  auto dout = std::make_shared<mha::dynamic::tensor<float>>(std::vector<std::size_t>{1, N, D});
  auto dws = std::make_shared<mha::dynamic::workspace<float>>();
  const std::string name =
      "D" + std::to_string(D) + "_H" + std::to_string(H) + "_N" + std::to_string(N);
  benchmark::RegisterBenchmark(("BM_cutoff/fixed/" + name).c_str(),
                               [=](benchmark::State& s) {
                                 for (auto _ : s) {
                                   m->forward(*x, *out, *ws);
                                   benchmark::DoNotOptimize(out->data());
                                   benchmark::ClobberMemory();
                                 }
                               })
      ->Unit(benchmark::kMicrosecond)->MinTime(0.05)->Repetitions(5)->ReportAggregatesOnly(true);
  benchmark::RegisterBenchmark(("BM_cutoff/dynamic/" + name).c_str(),
                               [=](benchmark::State& s) {
                                 for (auto _ : s) {
                                   dm->forward(*dx, *dout, *dws);
                                   benchmark::DoNotOptimize(dout->data());
                                   benchmark::ClobberMemory();
                                 }
                               })
      ->Unit(benchmark::kMicrosecond)->MinTime(0.05)->Repetitions(5)->ReportAggregatesOnly(true);
}

/// One row of the grid: d = D, H heads, the token counts N....
template <std::size_t D, std::size_t H, std::size_t... N>
void register_row() {
  (register_shape<N, D, H>(), ...);
}

}  // namespace

int main(int argc, char** argv) {
  register_row<32, 2, 128, 256>();
  register_row<64, 4, 96, 128, 192, 256>();
  register_row<128, 4, 32, 64, 96, 128, 256>();
  register_row<256, 8, 16, 32, 64, 128, 256>();
  register_row<384, 6, 16, 96, 160, 192, 256>();
  register_row<768, 12, 8, 16, 64, 96, 128>();
  register_row<1024, 16, 32, 64, 96>();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
}
