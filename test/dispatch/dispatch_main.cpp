// dispatch_main.cpp -- x86-64 run-time dispatch test (issue 10, item 6;
// include/mha/dispatch.hpp, docs/dispatch.md). Built for the baseline
// (-march=x86-64, the program's own level) and linked with the copies of
// dispatch_kernels.cpp for x86-64, x86-64-v2, x86-64-v3 and x86-64-v4.
//
// Checks, exit status 0 when all hold:
//  * cpu_level() against GCC's own level test (__builtin_cpu_supports("x86-64-vN"),
//    GCC 12 and later; Clang has no such names);
//  * for every level the CPU runs: force_level() selects it, the call runs the
//    copy built for it (its ISA namespace: isa_sse2, isa_sse4_2, isa_avx2_fma,
//    isa_avx512), whose output is within float tolerance (|a - e| <= 1e-5 *
//    max(1, |e|)) of a double-precision reference written here from the
//    definitions (book section 3.6, PyTorch's causal SDPA), and whose run-time
//    token count gives the bits of its compile-time one;
//  * the FMA levels (v3, v4) give other last bits than the baseline (their own
//    kernels ran);
//  * for a level the CPU does not run: force_level() refuses it and changes
//    nothing;
//  * with `--env <level>` (ctest sets MHA_ISA_LEVEL=<level>): the first call
//    runs that level.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "dispatch_kernels.hpp"

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::printf("FAIL: %s\n", what);
    ++failures;
  }
}

/// Deterministic values in [-0.5, 0.5) (a 64-bit LCG, Knuth's MMIX constants).
struct lcg {
  std::uint64_t state;
  float next() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<float>(static_cast<double>(state >> 11) / 9007199254740992.0 - 0.5);
  }
};

using dispatch_test::model;
constexpr std::size_t n = 32, d = 64, heads = 4, hd = 16;

/// The causal multi-head attention in double from the definitions:
/// Q = x Wq^T + bq (K, V alike), per head softmax(Q_h K_h^T / sqrt(hd)) with
/// keys j > i masked, times V_h; the heads concatenated, then out_proj.
std::vector<double> reference(const model& m, const dispatch_test::input& x) {
  const auto linear = [&](const float* w, const float* b, const std::vector<double>& in) {
    std::vector<double> o(n * d);
    for (std::size_t t = 0; t < n; ++t)
      for (std::size_t r = 0; r < d; ++r) {
        double s = b[r];
        for (std::size_t c = 0; c < d; ++c) s += double(w[r * d + c]) * in[t * d + c];
        o[t * d + r] = s;
      }
    return o;
  };
  const std::vector<double> xd(x.data(), x.data() + n * d);
  const auto q = linear(m.w_query.weight.data(), m.w_query.bias.data(), xd);
  const auto k = linear(m.w_key.weight.data(), m.w_key.bias.data(), xd);
  const auto v = linear(m.w_value.weight.data(), m.w_value.bias.data(), xd);
  std::vector<double> context(n * d, 0.0);
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<double> p(i + 1);
      double top = -INFINITY, sum = 0;
      for (std::size_t j = 0; j <= i; ++j) {
        double s = 0;
        for (std::size_t e = 0; e < hd; ++e) s += q[i * d + h * hd + e] * k[j * d + h * hd + e];
        p[j] = s / std::sqrt(double(hd));
        top = std::fmax(top, p[j]);
      }
      for (double& s : p) sum += (s = std::exp(s - top));
      for (std::size_t j = 0; j <= i; ++j)
        for (std::size_t e = 0; e < hd; ++e)
          context[i * d + h * hd + e] += p[j] / sum * v[j * d + h * hd + e];
    }
  return linear(m.out_proj.weight.data(), m.out_proj.bias.data(), context);
}

const char* expected_namespace(mha::dispatch::isa_level level) {
  switch (level) {
    case mha::dispatch::isa_level::x86_64_v2: return "isa_sse4_2";
    case mha::dispatch::isa_level::x86_64_v3: return "isa_avx2_fma";
    case mha::dispatch::isa_level::x86_64_v4: return "isa_avx512";
    default: return "isa_sse2";
  }
}

model m;
dispatch_test::input x;
dispatch_test::output out;
dispatch_test::output baseline_out;  // the x86-64 copy's output

/// One dispatched call at the active level: the copy it ran and its output.
void run_and_check(mha::dispatch::isa_level level, const std::vector<double>& expected) {
  const char* name = mha::dispatch::level_name(level);
  std::memset(out.data(), 0xff, sizeof(out));  // NaNs: a call that writes nothing fails
  const dispatch_test::report r = dispatch_test::forward(m, x, out);
  std::printf("%s: ran %s\n", name, r.isa_namespace);
  check(std::strcmp(r.isa_namespace, expected_namespace(level)) == 0,
        "the call ran the copy of the active level");
  check(r.runtime_n_mismatches == 0, "forward(x, n, out, ws) gives forward(x, out, ws)'s bits");
  std::size_t bad = 0;
  double worst = 0;
  for (std::size_t i = 0; i < n * d; ++i) {
    const double a = out.data()[i], e = expected[i];
    const double allowed = 1e-5 * std::fmax(1.0, std::fabs(e));
    if (!(std::fabs(a - e) <= allowed)) ++bad;
    worst = std::fmax(worst, std::fabs(a - e) / allowed);
  }
  std::printf("%s: %zu of %zu values out of tolerance (worst error / allowed %.3g)\n", name, bad,
              n * d, worst);
  check(bad == 0, "output within float tolerance of the double reference");
  if (level == mha::dispatch::isa_level::baseline) baseline_out = out;
  // the FMA levels fuse their multiply-adds, the baseline does not: their
  // bits differ somewhere (a copy that ran the baseline's kernels would not)
  if (static_cast<int>(level) >= 3)
    check(std::memcmp(out.data(), baseline_out.data(), sizeof(out)) != 0,
          "an FMA level's output differs in its last bits from the baseline's");
}

}  // namespace

int main(int argc, char** argv) {
  using mha::dispatch::isa_level;
  lcg g{42};
  for (auto* l : {&m.w_query, &m.w_key, &m.w_value}) {
    for (float& w : l->weight) w = g.next() * 0.25f;
    for (float& b : l->bias) b = g.next() * 0.1f;
  }
  for (float& w : m.out_proj.weight) w = g.next() * 0.25f;
  for (float& b : m.out_proj.bias) b = g.next() * 0.1f;
  for (float& v : x) v = g.next();
  const std::vector<double> expected = reference(m, x);

  const isa_level cpu = mha::dispatch::cpu_level();
  std::printf("cpu_level: %s\n", mha::dispatch::level_name(cpu));
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
  __builtin_cpu_init();
  const isa_level gcc = __builtin_cpu_supports("x86-64-v4")   ? isa_level::x86_64_v4
                        : __builtin_cpu_supports("x86-64-v3") ? isa_level::x86_64_v3
                        : __builtin_cpu_supports("x86-64-v2") ? isa_level::x86_64_v2
                                                              : isa_level::baseline;
  check(cpu == gcc, "cpu_level() agrees with __builtin_cpu_supports(\"x86-64-vN\")");
#endif

  if (argc == 3 && std::strcmp(argv[1], "--env") == 0) {
    // MHA_ISA_LEVEL=argv[2] was set by ctest: the first call runs that level
    // (or the CPU's, when the CPU does not run it)
    const isa_level wanted = mha::dispatch::parse_level(argv[2]);
    check(wanted != isa_level{0}, "--env names a level");
    const isa_level expected_level = static_cast<int>(wanted) <= static_cast<int>(cpu) ? wanted : cpu;
    check(mha::dispatch::active_level() == expected_level, "MHA_ISA_LEVEL sets the active level");
    check(dispatch_test::forward.level() == expected_level, "the dispatcher uses it");
    run_and_check(expected_level, expected);
  } else {
    check(mha::dispatch::active_level() == cpu, "without MHA_ISA_LEVEL the CPU's level is active");
    for (int l = 1; l <= 4; ++l) {
      const auto level = static_cast<isa_level>(l);
      if (l <= static_cast<int>(cpu)) {
        check(mha::dispatch::force_level(level), "force_level accepts a level the CPU runs");
        check(mha::dispatch::active_level() == level, "force_level sets the active level");
        check(dispatch_test::forward.level() == level, "the dispatcher has a copy of every level");
        run_and_check(level, expected);
      } else {
        const isa_level before = mha::dispatch::active_level();
        check(!mha::dispatch::force_level(level), "force_level refuses a level the CPU lacks");
        check(mha::dispatch::active_level() == before, "a refused level changes nothing");
        std::printf("%s: not run (the CPU lacks it)\n", mha::dispatch::level_name(level));
      }
    }
    check(!mha::dispatch::force_level(isa_level{7}), "force_level refuses a non-level");
    mha::dispatch::reset_level();
    check(mha::dispatch::active_level() == cpu, "reset_level returns to the CPU's level");
  }
  std::printf(failures == 0 ? "dispatch: all checks passed\n" : "dispatch: %d failure(s)\n",
              failures);
  return failures == 0 ? 0 : 1;
}
