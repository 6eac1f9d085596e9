// benchmark/bench_highway.cpp -- mha's x86-64 run-time dispatch against
// Google Highway's (issue 10, item 6; docs/dispatch.md, "Why not Google Highway (measured)"),
// one process built for the baseline (-march=x86-64), single-threaded,
// outputs consumed with benchmark::DoNotOptimize:
//   BM_highway/linear/mha/<level>   mha::linear<float, 768, 768, true>::forward
//                                   on 1024 tokens, the copy of each x86-64
//                                   level the CPU runs (mha::dispatch::force_level)
//   BM_highway/linear/hwy/<target>  the same product in Highway, each target
//                                   the CPU runs (SCALAR is its baseline:
//                                   Highway 1.0.3 has no SSE2 target, and
//                                   with g++ 12 no EMU128)
//   BM_highway/dot16/{mha,hwy,direct}  a 16-element dot product through each
//                                   dispatch, and called directly (the cost of
//                                   a dispatched call)
// Before timing, it prints each pair's largest difference (mha's level
// against Highway's target of the same instruction set), so that the two
// compute the same thing.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "highway_compare.hpp"

namespace {

using namespace bench_highway;
using mha::dispatch::isa_level;

struct data {
  std::unique_ptr<layer> l = std::make_unique<layer>();
  std::unique_ptr<input> x = std::make_unique<input>();
  std::unique_ptr<output> y = std::make_unique<output>();
  std::vector<float> weight_t = std::vector<float>(d_model * d_model);  // panels [out/32][in][32]
  std::vector<float> y_hwy = std::vector<float>(tokens * d_model);
  float a[16]{}, b[16]{};
  data() {
    std::mt19937 gen(123);
    std::uniform_real_distribution<float> w(-0.036f, 0.036f), u(-1.0f, 1.0f);  // 1/sqrt(768)
    for (float& v : l->weight) v = w(gen);
    for (float& v : l->bias) v = w(gen);
    for (float& v : *x) v = u(gen);
    for (std::size_t o = 0; o < d_model; ++o)
      for (std::size_t i = 0; i < d_model; ++i)
        weight_t[(o / 32) * d_model * 32 + i * 32 + o % 32] = l->weight(o, i);
    for (int i = 0; i < 16; ++i) a[i] = u(gen), b[i] = u(gen);
  }
};

data& shared() {
  static data d;
  return d;
}

void run_hwy_linear(data& d) {
  hwy_linear(d.weight_t.data(), d.l->bias.data(), d.x->data(), d.y_hwy.data(), tokens, d_model,
             d_model);
}

/// Highway's target for the same instruction set as an mha level.
const char* hwy_target_of(isa_level level) {
  switch (level) {
    case isa_level::baseline: return "SCALAR";
    case isa_level::x86_64_v2: return "SSE4";
    case isa_level::x86_64_v3: return "AVX2";
    case isa_level::x86_64_v4: return "AVX3";
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  data& d = shared();
  const isa_level cpu = mha::dispatch::cpu_level();
  std::printf("mha_bench_highway: cpu_level %s; Highway's dispatch picks %s\n",
              mha::dispatch::level_name(cpu), hwy_current());
  hwy_print_targets();
  // The same product on both sides: the largest difference per level pair.
  for (int i = 1; i <= static_cast<int>(cpu); ++i) {
    const auto level = static_cast<isa_level>(i);
    if (!mha::dispatch::force_level(level) || !hwy_force(hwy_target_of(level))) continue;
    linear(*d.l, *d.x, *d.y);
    run_hwy_linear(d);
    float diff = 0.0f, largest = 0.0f;
    for (std::size_t k = 0; k < d.y_hwy.size(); ++k) {
      diff = std::max(diff, std::fabs(d.y->data()[k] - d.y_hwy[k]));
      largest = std::max(largest, std::fabs(d.y_hwy[k]));
    }
    std::printf("  mha %s (ran %s) vs Highway %s (ran %s): largest |difference| %.3g, largest "
                "|y| %.3g\n",
                mha::dispatch::level_name(level), mha::dispatch::level_name(linear.level()),
                hwy_target_of(level), hwy_current(), static_cast<double>(diff),
                static_cast<double>(largest));
  }
  mha::dispatch::reset_level();
  hwy_force(nullptr);

  for (int i = 1; i <= static_cast<int>(cpu); ++i) {
    const auto level = static_cast<isa_level>(i);
    benchmark::RegisterBenchmark(
        (std::string("BM_highway/linear/mha/") + mha::dispatch::level_name(level)).c_str(),
        [level](benchmark::State& s) {
          data& dd = shared();
          mha::dispatch::force_level(level);
          for (auto _ : s) {
            linear(*dd.l, *dd.x, *dd.y);
            benchmark::DoNotOptimize(dd.y->data());
            benchmark::ClobberMemory();
          }
          mha::dispatch::reset_level();
        })
        ->Unit(benchmark::kMillisecond);
    const char* target = hwy_target_of(level);
    if (!hwy_force(target)) continue;
    hwy_force(nullptr);
    benchmark::RegisterBenchmark((std::string("BM_highway/linear/hwy/") + target).c_str(),
                                 [target](benchmark::State& s) {
                                   data& dd = shared();
                                   hwy_force(target);
                                   for (auto _ : s) {
                                     run_hwy_linear(dd);
                                     benchmark::DoNotOptimize(dd.y_hwy.data());
                                     benchmark::ClobberMemory();
                                   }
                                   hwy_force(nullptr);
                                 })
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark("BM_highway/dot16/mha", [](benchmark::State& s) {
    data& dd = shared();
    for (auto _ : s) {
      benchmark::DoNotOptimize(dd.a);
      benchmark::DoNotOptimize(dot16(dd.a, dd.b));
    }
  });
  benchmark::RegisterBenchmark("BM_highway/dot16/hwy", [](benchmark::State& s) {
    data& dd = shared();
    for (auto _ : s) {
      benchmark::DoNotOptimize(dd.a);
      benchmark::DoNotOptimize(hwy_dot16(dd.a, dd.b));
    }
  });
  benchmark::RegisterBenchmark("BM_highway/dot16/direct", [](benchmark::State& s) {
    data& dd = shared();
    for (auto _ : s) {
      benchmark::DoNotOptimize(dd.a);
      float sum = 0.0f;
      for (int k = 0; k < 16; ++k) sum += dd.a[k] * dd.b[k];
      benchmark::DoNotOptimize(sum);
    }
  });
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
