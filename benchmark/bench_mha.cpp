// benchmark/bench_mha.cpp -- BM_mha/<impl>/<config> for impl in fixed
// (mha::multi_head_attention), dynamic (mha::dynamic::multi_head_attention),
// libtorch (when built with it) and eigen, plus BM_peak_fma. Every
// implementation is cross-checked against the others before timing.
// See docs/benchmarks.md for how to run it and how to read the results.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <mha/mha.hpp>

#include "common.hpp"
#include "eigen_impl.hpp"
#include "streaming.hpp"
#if MHA_BENCH_HAVE_TORCH
#include "torch_impl.hpp"
#endif

namespace bench {
namespace {

/// mha::multi_head_attention<float, DIn, D, N, H> with caller-owned workspace.
template <std::size_t B, std::size_t N, std::size_t DIn, std::size_t D, std::size_t H>
class fixed_runner final : public runner {
  using model = mha::multi_head_attention<float, DIn, D, N, H>;

 public:
  fixed_runner(const weights& w, const std::vector<float>& x)
      : m_(std::make_unique<model>()),
        x_(std::make_unique<mha::tensor<float, B, N, DIn>>()),
        out_(std::make_unique<mha::tensor<float, B, N, D>>()),
        ws_(std::make_unique<typename model::template workspace<B, N>>()) {
    copy(w.w_query, m_->w_query.weight.data());
    copy(w.w_key, m_->w_key.weight.data());
    copy(w.w_value, m_->w_value.weight.data());
    copy(w.w_out, m_->out_proj.weight.data());
    copy(w.b_out, m_->out_proj.bias.data());
    copy(x, x_->data());
  }
  /// Non-virtual, so the timed loop calls the forward directly.
  void forward() noexcept { m_->forward(*x_, *out_, *ws_); }
  void run() override { forward(); }
  std::vector<float> output() override {
    return std::vector<float>(out_->data(), out_->data() + out_->size);
  }
  const float* out_data() const noexcept { return out_->data(); }

 private:
  static void copy(const std::vector<float>& from, float* to) {
    for (std::size_t i = 0; i < from.size(); ++i) to[i] = from[i];
  }
  std::unique_ptr<model> m_;
  std::unique_ptr<mha::tensor<float, B, N, DIn>> x_;
  std::unique_ptr<mha::tensor<float, B, N, D>> out_;
  std::unique_ptr<typename model::template workspace<B, N>> ws_;
};

/// mha::dynamic::multi_head_attention<float> with a reused dynamic::workspace.
class dynamic_runner final : public runner {
 public:
  dynamic_runner(const config& c, const weights& w, const std::vector<float>& x)
      : m_(c.d_in, c.d_out, c.tokens, c.heads),
        x_({c.batch, c.tokens, c.d_in}),
        out_({c.batch, c.tokens, c.d_out}) {
    std::copy(w.w_query.begin(), w.w_query.end(), m_.w_query.weight.begin());
    std::copy(w.w_key.begin(), w.w_key.end(), m_.w_key.weight.begin());
    std::copy(w.w_value.begin(), w.w_value.end(), m_.w_value.weight.begin());
    std::copy(w.w_out.begin(), w.w_out.end(), m_.out_proj.weight.begin());
    std::copy(w.b_out.begin(), w.b_out.end(), m_.out_proj.bias.begin());
    std::copy(x.begin(), x.end(), x_.begin());
  }
  void forward() { m_.forward(x_, out_, ws_); }
  void run() override { forward(); }
  std::vector<float> output() override { return std::vector<float>(out_.begin(), out_.end()); }
  const float* out_data() const noexcept { return out_.data(); }

 private:
  mha::dynamic::multi_head_attention<float> m_;
  mha::dynamic::tensor<float> x_, out_;
  mha::dynamic::workspace<float> ws_;
};

/// Counters shared by every BM_mha benchmark.
void set_counters(benchmark::State& state, const config& c) {
  using benchmark::Counter;
  state.counters["tokens/s"] =
      Counter(double(c.batch * c.tokens), Counter::kIsIterationInvariantRate);
  state.counters["FLOP/s_causal"] = Counter(c.causal_flops(), Counter::kIsIterationInvariantRate);
  state.counters["FLOP/s_dense"] = Counter(c.dense_flops(), Counter::kIsIterationInvariantRate);
}

/// Registration options: medians over repetitions; the big shapes get fewer,
/// shorter repetitions so that the whole suite stays around a few minutes.
void configure(benchmark::internal::Benchmark* b, const config& c) {
  const double flops = c.dense_flops();
  b->Unit(benchmark::kMicrosecond)->ReportAggregatesOnly(true);
  if (flops > 5e10)
    b->Repetitions(3)->MinTime(0.05);
  else if (flops > 1e9)
    b->Repetitions(5)->MinTime(0.2);
  else
    b->Repetitions(5)->MinTime(0.1);
}

template <class R>
void register_bm(const std::string& impl, const config& c, std::shared_ptr<R> r) {
  auto* b = benchmark::RegisterBenchmark(
      ("BM_mha/" + impl + "/" + c.name).c_str(), [c, r](benchmark::State& state) {
        for (auto _ : state) {
          r->forward();
          benchmark::DoNotOptimize(r->out_data());
          benchmark::ClobberMemory();
        }
        set_counters(state, c);
      });
  configure(b, c);
}

/// Adapter for runners reached through the virtual interface (libtorch).
struct virtual_runner {
  std::unique_ptr<runner> r;
  void forward() { r->run(); }
  const void* out_data() const noexcept { return r.get(); }
};

/// Builds every implementation for one configuration, cross-checks their
/// outputs, prints the differences and registers the benchmarks.
/// True unless the environment variable MHA_BENCH_CONFIGS (a comma-separated
/// list of configuration names, for quick partial runs) leaves `name` out.
bool selected(const std::string& name) {
  const char* only = std::getenv("MHA_BENCH_CONFIGS");
  if (only == nullptr || *only == '\0') return true;
  const std::string list = std::string(",") + only + ",";
  return list.find("," + name + ",") != std::string::npos;
}

template <std::size_t B, std::size_t N, std::size_t DIn, std::size_t D, std::size_t H>
void add_config(const char* name, std::vector<std::string>& report) {
  if (!selected(name)) return;
  const config c{name, B, N, DIn, D, H};
  const weights w = make_weights(c);
  const std::vector<float> x = make_input(c);

  auto fixed = std::make_shared<fixed_runner<B, N, DIn, D, H>>(w, x);
  auto dynamic = std::make_shared<dynamic_runner>(c, w, x);
  auto eigen = std::make_shared<virtual_runner>();
  eigen->r = std::make_unique<eigen_runner<int(B), int(N), int(DIn), int(D), int(H)>>(w, x);

  std::map<std::string, std::vector<float>> outputs;
  fixed->run();
  outputs["fixed"] = fixed->output();
  dynamic->run();
  outputs["dynamic"] = dynamic->output();
  eigen->forward();
  outputs["eigen"] = eigen->r->output();
#if MHA_BENCH_HAVE_TORCH
  auto torch = std::make_shared<virtual_runner>();
  torch->r = make_torch_runner(c, w, x);
  torch->forward();
  outputs["libtorch"] = torch->r->output();
#endif
  const std::string ref = outputs.count("libtorch") ? "libtorch" : "eigen";
  std::string line = std::string("cross-check ") + name + ": max|a-b|/max|b| vs " + ref + ":";
  double worst = 0;
  for (const auto& [impl, out] : outputs) {
    if (impl == ref) continue;
    const double d = max_rel_diff(out, outputs[ref]);
    worst = std::max(worst, d);
    char buf[64];
    std::snprintf(buf, sizeof buf, " %s %.2e", impl.c_str(), d);
    line += buf;
  }
  const bool bit_identical = outputs["fixed"] == outputs["dynamic"];
  line += bit_identical ? "; fixed == dynamic bit for bit" : "; fixed != dynamic (NOT bit-identical)";
  report.push_back(line);
  char value[64];
  std::snprintf(value, sizeof value, "%.3e", worst);
  benchmark::AddCustomContext(std::string("crosscheck_max_rel_diff/") + name, value);
  if (worst > 1e-4 || !bit_identical) {
    std::fprintf(stderr, "%s\nerror: implementations disagree, not timing them\n", line.c_str());
    std::exit(1);
  }

  register_bm("fixed", c, fixed);
  register_bm("dynamic", c, dynamic);
#if MHA_BENCH_HAVE_TORCH
  register_bm("libtorch", c, torch);
#endif
  register_bm("eigen", c, eigen);
}

/// This core's fp32 FMA peak: Chains independent accumulators of the
/// library's vector width (mha::detail::simd::vec<float>), each updated with
/// acc = acc * m + a, so every FMA waits only on its own chain.
template <int Chains>
void peak_fma(benchmark::State& state) {
  using V = mha::detail::simd::vec<float>;
  constexpr int inner = 1024;
  V acc[Chains];
  for (int i = 0; i < Chains; ++i) acc[i] = mha::detail::simd::broadcast(1.0f + 0.001f * float(i));
  const V m = mha::detail::simd::broadcast(0.999999f);
  const V a = mha::detail::simd::broadcast(1e-6f);
  for (auto _ : state) {
    for (int k = 0; k < inner; ++k) {
#pragma GCC unroll 32
      for (int i = 0; i < Chains; ++i) acc[i] = acc[i] * m + a;
    }
    benchmark::DoNotOptimize(acc);
  }
  const double flops = 2.0 * double(mha::detail::simd::lanes<float>) * Chains * inner;
  state.counters["FLOP/s"] =
      benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace
}  // namespace bench

#ifndef MHA_BENCH_FLAGS
#define MHA_BENCH_FLAGS "unknown"
#endif

int main(int argc, char** argv) {
  for (const char* v : {"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"}) {
    const char* e = std::getenv(v);
    if (e == nullptr || std::string(e) != "1")
      std::fprintf(stderr, "warning: %s is not 1; run through the documented command\n", v);
  }
#if MHA_BENCH_HAVE_TORCH
  bench::torch_single_thread();
  benchmark::AddCustomContext("libtorch", bench::torch_version());
#else
  benchmark::AddCustomContext("libtorch", "not found (skipped)");
#endif
  {
    std::FILE* f = std::fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f != nullptr && std::fgets(line, sizeof line, f) != nullptr) {
      const std::string l(line);
      if (l.rfind("model name", 0) == 0 && l.find(':') != std::string::npos) {
        std::string model = l.substr(l.find(':') + 2);
        if (!model.empty() && model.back() == '\n') model.pop_back();
        benchmark::AddCustomContext("cpu_model", model);
        break;
      }
    }
    if (f != nullptr) std::fclose(f);
  }
#if defined(__clang__)
  benchmark::AddCustomContext("compiler", std::string("clang++ ") + __clang_version__);
#elif defined(__GNUC__)
  benchmark::AddCustomContext("compiler", std::string("g++ ") + __VERSION__);
#endif
  benchmark::AddCustomContext("compiler_flags", MHA_BENCH_FLAGS);
  benchmark::AddCustomContext("eigen", std::to_string(EIGEN_WORLD_VERSION) + "." +
                                           std::to_string(EIGEN_MAJOR_VERSION) + "." +
                                           std::to_string(EIGEN_MINOR_VERSION));
  benchmark::AddCustomContext("mha_vector_bytes", std::to_string(mha::detail::simd::vector_bytes));
  benchmark::AddCustomContext("mha_tile", std::to_string(mha::detail::gemm::mr) + "x" +
                                              std::to_string(mha::detail::gemm::nc<float>));

  benchmark::RegisterBenchmark("BM_peak_fma", bench::peak_fma<16>)
      ->Repetitions(5)
      ->ReportAggregatesOnly(true);
  std::vector<std::string> report;
  // (batch, tokens N, d_in, d_out, heads), all causal, inference, float
  bench::add_config<2, 6, 3, 2, 2>("book", report);
  bench::add_config<1, 8, 16, 16, 2>("tiny", report);
  bench::add_config<1, 32, 64, 64, 4>("embedded", report);
  bench::add_config<1, 64, 128, 128, 4>("small", report);
  bench::add_config<1, 128, 256, 256, 8>("mid", report);
  // d = 384, 6 heads (the width where the token-major path stopped paying
  // first, issue 11.7): around token_major::tokens_limit on each target.
  bench::add_config<1, 128, 384, 384, 6>("d384_n128", report);
  bench::add_config<1, 192, 384, 384, 6>("d384_n192", report);
  bench::add_config<1, 256, 384, 384, 6>("d384_n256", report);
  bench::add_config<1, 1024, 768, 768, 12>("gpt2", report);
  bench::add_config<8, 1024, 768, 768, 12>("gpt2_b8", report);
  bench::register_streaming(report);
  for (const auto& line : report) std::printf("%s\n", line.c_str());
  std::fflush(stdout);

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
