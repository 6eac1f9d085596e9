// benchmark/bench_dispatch.cpp -- x86-64 run-time dispatch (issue 10, item 6;
// docs/dispatch.md): a program built for the baseline (-march=x86-64) runs
// the GPT-2-size forward through mha::dispatch, against the same forward
// built with -march=native, in one process:
//   BM_dispatch/gpt2/native      the -march=native copy (what a program built
//                                for this machine runs)
//   BM_dispatch/gpt2/dispatched  the level CPUID picks (mha::dispatch)
//   BM_dispatch/gpt2/<level>     each level the CPU runs, forced
// The target: dispatched within 1.1x of native. Single-threaded; outputs
// consumed with benchmark::DoNotOptimize.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <random>
#include <string>

#include "dispatch_kernels.hpp"

namespace {

struct data {
  std::unique_ptr<bench_dispatch::model> m = std::make_unique<bench_dispatch::model>();
  std::unique_ptr<bench_dispatch::input> x = std::make_unique<bench_dispatch::input>();
  std::unique_ptr<bench_dispatch::output> out = std::make_unique<bench_dispatch::output>();
  std::unique_ptr<bench_dispatch::workspace> ws = std::make_unique<bench_dispatch::workspace>();
  data() {
    std::mt19937 gen(123);
    std::uniform_real_distribution<float> w(-0.036f, 0.036f), u(-1.0f, 1.0f);  // 1/sqrt(768)
    for (auto* l : {&m->w_query, &m->w_key, &m->w_value, &m->out_proj}) {
      for (float& v : l->weight) v = w(gen);
      for (float& v : l->bias) v = w(gen);
    }
    for (float& v : *x) v = u(gen);
  }
};

data& shared() {
  static data d;
  return d;
}

template <class F>
void run(benchmark::State& state, F forward) {
  data& d = shared();
  for (auto _ : state) {
    forward(*d.m, *d.x, *d.out, *d.ws);
    benchmark::DoNotOptimize(d.out->data());
    benchmark::ClobberMemory();
  }
}

}  // namespace

int main(int argc, char** argv) {
  using mha::dispatch::isa_level;
  const isa_level cpu = mha::dispatch::cpu_level();
  std::printf("mha_bench_dispatch: cpu_level %s, dispatched calls run %s\n",
              mha::dispatch::level_name(cpu),
              mha::dispatch::level_name(bench_dispatch::forward.level()));
  benchmark::RegisterBenchmark("BM_dispatch/gpt2/native", [](benchmark::State& s) {
    run(s, bench_dispatch::native::forward);
  })->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_dispatch/gpt2/dispatched", [](benchmark::State& s) {
    run(s, bench_dispatch::forward);
  })->Unit(benchmark::kMillisecond);
  for (int l = 1; l <= static_cast<int>(cpu); ++l) {
    const auto level = static_cast<isa_level>(l);
    const auto copy = bench_dispatch::forward.copy(level);
    if (copy == nullptr) continue;
    benchmark::RegisterBenchmark(
        (std::string("BM_dispatch/gpt2/") + mha::dispatch::level_name(level)).c_str(),
        [copy](benchmark::State& s) { run(s, copy); })
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
