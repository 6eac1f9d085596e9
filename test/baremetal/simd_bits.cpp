// simd_bits.cpp -- bare-metal test of the vector primitives whose per-target
// forms must give the scalar code's bits (test/test_math.cpp checks them on
// the hosts): on Cortex-M55 they are MVE-specific code (simd::exp_mve's
// vector-by-scalar arithmetic and its clamp formula, the in-place divisions
// through S0-S7, the gathers and scatters of the attention pairs), on the
// scalar cores the compiler's lane-by-lane lowering. Over every 16381st float
// bit pattern (all classes: zeros, subnormals, normals, infinities, NaN) and
// the neighbours of exp's constants, lanes mixed:
//  * simd::exp_of_nonpositive on a 4-float vector gives simd::exp's scalar
//    bits in every lane whose argument is <= 88, and a NaN for a NaN;
//  * simd::exp on a 4-float vector gives the scalar bits for every argument
//    <= 88 (above, the vector clamps to 88: exp(88) exactly);
//  * simd::divide_in_place of two vectors gives the scalar quotients' bits;
//  * simd::gather4 / scatter4 move the 4 floats at their offsets;
//  * multiply-adds, sums, differences, products and quotients with subnormal
//    operands or tiny exact results give the same bits at compile time, in
//    the scalar FPU and in vectors (all flushed on the M55, IEEE elsewhere).
// All of it under a flush_scope, as the library's kernels run. And the number
// formats (<mha/formats.hpp>) in the FPU's default mode: their run-time bits
// are those of constant evaluation.
// Exit status: the number of failed checks (0: all passed).
#include "mha_baremetal.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>

#include <mha/mha.hpp>

#include "report.hpp"

namespace {

namespace simd = mha::detail::simd;
using V = simd::float4;

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }
bool is_nan(float f) { return f != f; }

// MVE's floating-point vector instructions (Cortex-M55) flush subnormal
// inputs and results to zero (Arm's "standard FPSCR value"), so on that target
// the library flushes them on every path (detail/arch/subnormals.hpp): the scalar
// FPU under flush_scope (FPSCR.FZ), constant evaluation by emulation. The
// checks below run under a flush_scope and require the same bits everywhere;
// elsewhere flush_scope does nothing and everything keeps IEEE subnormals.
constexpr bool flushes_subnormals = mha::detail::flushes_subnormals;

// Float operations whose inputs or exact results are subnormal or tiny
// (Arm's flush-to-zero decides before rounding: 0.99999994 * 2^-126 is
// tiny, though it rounds up to 2^-126), evaluated by the compiler (fp:: and
// detail::fma in constant evaluation) and at run time by the scalar FPU and
// by 4-float vectors: all must give the same bits.
struct triple {
  float a, b, c;
};
constexpr triple cases[] = {
    {0.99999994f, 1.17549435e-38f, 0.0f},  // product tiny, rounds up to 2^-126
    {1e-39f, 1e10f, 0.0f},                 // subnormal input, normal product
    {1.0f, 1.0f, 1e-39f},                  // subnormal addend
    {1e-20f, 1e-20f, 0.0f},                // product 1e-40
    {-1e-20f, 1e-20f, 0.0f},               // product -1e-40: a negative zero
    {1e-19f, 2e-19f, -1e-38f},             // sum of normals 1e-38: tiny
    {3.0f, 4.0f, 5.0f},                    // nothing tiny
    {1.5e-38f, 1.0f, -1.2e-38f},           // difference 3e-39
    {1.17549435e-38f, 1.0000001f, 0.0f},   // product just above 2^-126
    {2.5e-38f, 0.5f, -1.17549435e-38f},    // 1.25e-38 - 2^-126: tiny
};
constexpr std::size_t case_count = sizeof cases / sizeof cases[0];
struct results {
  float fma[case_count], add[case_count], sub[case_count], mul[case_count], div[case_count];
};
constexpr results compile_time_results() {
  results r{};
  for (std::size_t i = 0; i < case_count; ++i) {
    const triple t = cases[i];
    r.fma[i] = mha::detail::fma<float>(t.a, t.b, t.c);
    r.add[i] = mha::detail::fp::add(t.a, t.c);
    r.sub[i] = mha::detail::fp::sub(t.c, t.a);
    r.mul[i] = mha::detail::fp::mul(t.a, t.b);
    r.div[i] = mha::detail::fp::div(t.a, t.b + t.c * 0.0f + 1.5f);
  }
  return r;
}
constexpr results compile_time = compile_time_results();

// The sample: every 16381st bit pattern, then the neighbours of the
// constants exp_impl clamps and scales at.
constexpr std::uint32_t stride = 16381;
constexpr std::uint32_t strided = 0xFFFFFFFFu / stride + 1;
constexpr float edges[] = {88.0f, -104.0f, 0.0f, -0.0f, -87.33f, -103.97f, 1.0f, -1.0f};
constexpr std::uint32_t edge_count = sizeof edges / sizeof edges[0] * 5 + 4;
std::uint32_t sample(std::uint32_t i) {
  if (i < strided) return i * stride;
  i -= strided;
  if (i < edge_count - 4) return bits(edges[i / 5]) + (i % 5) - 2;
  constexpr std::uint32_t extra[] = {0x7F800000u, 0xFF800000u, 0x7FC00001u, 0xFFC00001u};
  return extra[i - (edge_count - 4)];
}
constexpr std::uint32_t sample_count = strided + edge_count;

V vector_at(std::uint32_t i) {
  V v{};
  for (std::uint32_t l = 0; l < 4; ++l)
    v[l] = std::bit_cast<float>(sample((i + l * 7919u) % sample_count));
  return v;
}

}  // namespace

// Writes labels[0], the bits of values[0] in hex, labels[1], ..., a newline.
template <std::size_t N>
void write_bits(const char* const (&labels)[N], const float (&values)[N]) {
  for (std::size_t n = 0; n < N; ++n) {
    mha_bm::write(labels[n]);
    mha_bm::write_hex(bits(values[n]));
  }
  mha_bm::write("\n");
}

// The cases at run time: scalar (operands through volatiles: no constant
// folding) and lane 0 of 4-float vectors; failures counted.
unsigned long check_cases() {
  unsigned long failures = 0;
  for (std::size_t i = 0; i < case_count; ++i) {
    volatile float va = cases[i].a, vb = cases[i].b, vc = cases[i].c;
    const float a = va, b = vb, c = vc;
    const float d = b + c * 0.0f + 1.5f;
    const float scalar[5] = {mha::detail::fma<float>(a, b, c), mha::detail::fp::add(a, c),
                             mha::detail::fp::sub(c, a), mha::detail::fp::mul(a, b),
                             mha::detail::fp::div(a, d)};
    const V av = V{} + a, bv = V{} + b, cv = V{} + c, dv = V{} + d;
    V q = av;
    simd::divide_in_place(q, dv);
    const float vector[5] = {mha::detail::simd_fma::fma(av, bv, cv)[0], (av + cv)[0],
                             (cv - av)[0], (av * bv)[0], q[0]};
    const float ct[5] = {compile_time.fma[i], compile_time.add[i], compile_time.sub[i],
                         compile_time.mul[i], compile_time.div[i]};
    for (std::size_t k = 0; k < 5; ++k)
      if (bits(scalar[k]) != bits(ct[k]) || bits(vector[k]) != bits(ct[k])) {
        if (failures < 8) {
          mha_bm::write("tiny-value case ");
          mha_bm::write_uint(i);
          mha_bm::write(" operation ");
          mha_bm::write_uint(k);
          write_bits({": compile time ", ", scalar ", ", vector "}, {ct[k], scalar[k], vector[k]});
        }
        ++failures;
      }
  }
  return failures;
}

// The constant-evaluation emulation of flush-to-zero (detail/arch/subnormals.hpp:
// constexpr_fma_ftz, add_ftz, sub_ftz, mul_ftz, div_ftz; plain C++, so they
// also run at run time: here with FPSCR.FZ cleared, emulate_ieee, so that the
// emulation's own float and double operations keep IEEE subnormals as in
// constant evaluation and a wrong flush rule cannot be hidden by the FPU's
// flushing) against the FPU's own flush-to-zero under flush_scope, on random
// operands near the
// subnormal range (exponent fields 0-40 and, for a product's other factor or
// a quotient's divisor, 90-160, so that products and quotients land around
// 2^-126): the same bits, or both NaN. Only where the target flushes
// subnormals (elsewhere those functions are not used, and the FPU keeps IEEE
// subnormals). Returns the failures; `checked` counts the comparisons.
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
// The emulation's results for operands in[0..2] (a, b, c), computed with
// FPSCR.FZ cleared (IEEE subnormals in the FPU, single and double precision);
// the operands are read and the results written through volatile accesses
// between the FPSCR writes, so that the arithmetic stays between them.
[[gnu::noinline]] void emulate_ieee(const float (&in)[3], float (&out)[5]) {
  constexpr unsigned fz = 1u << 24;
  const unsigned saved = __builtin_arm_get_fpscr();
  __builtin_arm_set_fpscr(saved & ~fz);
  const volatile float* vin = in;
  const float a = vin[0], b = vin[1], c = vin[2];
  volatile float* vout = out;
  vout[0] = mha::detail::constexpr_fma_ftz(a, b, c);
  vout[1] = mha::detail::add_ftz(a, c);
  vout[2] = mha::detail::sub_ftz(a, c);
  vout[3] = mha::detail::mul_ftz(a, b);
  vout[4] = mha::detail::div_ftz(a, b);
  __builtin_arm_set_fpscr(saved);
}
#endif

unsigned long check_ftz_emulation(unsigned long& checked) {
#if !(defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2))
  static_assert(!flushes_subnormals);
  static_cast<void>(checked);
  return 0;
#else
  {
    std::uint32_t state = 0x2545F491u;
    const auto next = [&state] {  // xorshift32
      state ^= state << 13;
      state ^= state >> 17;
      state ^= state << 5;
      return state;
    };
    const auto random_float = [&next](std::uint32_t lowest_exponent, std::uint32_t span) {
      const std::uint32_t r = next();
      const std::uint32_t exponent = lowest_exponent + (next() % span);
      return std::bit_cast<float>((r & 0x80000000u) | (exponent << 23) | (r & 0x007FFFFFu));
    };
    unsigned long failures = 0;
    const auto same = [](float x, float y) { return bits(x) == bits(y) || (is_nan(x) && is_nan(y)); };
    for (std::uint32_t i = 0; i < 20000; ++i) {
      const float a = random_float(0, 41), b = random_float(90, 71), c = random_float(0, 41);
      volatile float va = a, vb = b, vc = c;  // (run-time FPU operations)
      const float hw[5] = {__builtin_fmaf(va, vb, vc), va + vc, va - vc, va * vb, va / vb};
      float sw[5];
      emulate_ieee({a, b, c}, sw);
      for (std::size_t k = 0; k < 5; ++k) {
        if (!same(hw[k], sw[k])) {
          if (failures < 8) {
            mha_bm::write("flush-to-zero emulation, operation ");
            mha_bm::write_uint(k);
            write_bits({" on ", " ", " ", ": FPU ", ", emulation "}, {a, b, c, hw[k], sw[k]});
          }
          ++failures;
        }
        ++checked;
      }
    }
    return failures;
  }
#endif
}

// The number formats of <mha/formats.hpp>, which run outside the library's
// kernels (so here before the flush_scope, in the FPU's default mode):
// to_f16 and to_bf16 of every 1048573rd float bit pattern (all classes, NaNs
// too) and quantize_q8_0 of four blocks give the bits of constant evaluation
// (which test/test_formats.cpp checks against PyTorch and ggml on the hosts).
constexpr std::uint32_t format_samples = 4097, format_step = 1048573u;
struct format_bits {
  std::uint16_t f16[format_samples];
  std::uint16_t bf16[format_samples];
  mha::q8_0_block q8_0[4];
};
/// Block k's value j: an LCG's draw in [-1, 1) times the block's scale
/// (GPT-2's 0.02, 1, a binary16-subnormal scale's 3e-6, 1e4).
constexpr float format_weight(std::uint32_t k, std::uint32_t j) {
  const float scales[4] = {0.02f, 1.0f, 3e-6f, 1e4f};
  const std::uint32_t state = (k * 32u + j + 1u) * 1664525u + 1013904223u;
  return scales[k] * (static_cast<float>(state >> 8) * 0x1p-23f - 1.0f);
}
constexpr format_bits format_table = [] {
  format_bits t{};
  for (std::uint32_t i = 0; i < format_samples; ++i) {
    const float x = std::bit_cast<float>(i * format_step);
    t.f16[i] = mha::to_f16(x).bits;
    t.bf16[i] = mha::to_bf16(x).bits;
  }
  for (std::uint32_t k = 0; k < 4; ++k) {
    float w[32] = {};
    for (std::uint32_t j = 0; j < 32; ++j) w[j] = format_weight(k, j);
    t.q8_0[k] = mha::quantize_q8_0(w);
  }
  return t;
}();
volatile std::uint32_t format_step_at_run_time = format_step;  // (not folded into the table)

unsigned long check_formats(unsigned long& checked) {
  unsigned long failures = 0;
  const std::uint32_t step = format_step_at_run_time;
  for (std::uint32_t i = 0; i < format_samples; ++i) {
    const float x = std::bit_cast<float>(i * step);
    failures += mha::to_f16(x).bits != format_table.f16[i];
    failures += mha::to_bf16(x).bits != format_table.bf16[i];
    checked += 2;
  }
  for (std::uint32_t k = 0; k < 4; ++k) {
    float w[32];
    for (std::uint32_t j = 0; j < 32; ++j) w[j] = format_weight(k + step - format_step, j);
    failures += !(mha::quantize_q8_0(w) == format_table.q8_0[k]);
    ++checked;
  }
  return failures;
}

int main() {
  unsigned long format_checked = 0;
  const unsigned long format_failures = check_formats(format_checked);
  const mha::detail::flush_scope<float> flush;  // (the library's treatment of subnormals)
  unsigned long ftz_checked = 0;
  unsigned long failures = format_failures + check_cases() + check_ftz_emulation(ftz_checked),
                exp_checked = 0, div_checked = 0, flushed_count = 0;
  for (std::uint32_t i = 0; i < sample_count; ++i) {
    const V x = vector_at(i);
    const V e_nonpositive = simd::exp_of_nonpositive(x);
    const V e = simd::exp(x);
    for (std::uint32_t l = 0; l < 4; ++l) {
      if (!(x[l] <= 88.0f) && !is_nan(x[l])) continue;  // unspecified above 88
      const float want = simd::exp(x[l]);
      // (a NaN argument: any NaN; which payload survives is the FPU's or the
      // soft-float library's choice, e.g. for a signalling NaN on the M3)
      const bool same = is_nan(want)
                            ? is_nan(e_nonpositive[l]) && is_nan(e[l])
                            : bits(e_nonpositive[l]) == bits(want) && bits(e[l]) == bits(want);
      // (arguments whose e^x is subnormal in IEEE arithmetic: 0 where flushed)
      if (flushes_subnormals && x[l] < -87.34f && x[l] > -103.97f) {
        ++flushed_count;
        if (bits(want) != 0) ++failures;  // (+0: flushed on the scalar path too)
      }
      if (!same) {
        if (failures < 8) {
          mha_bm::write("exp mismatch at x bits ");
          mha_bm::write_hex(bits(x[l]));
          mha_bm::write("\n");
        }
        ++failures;
      }
      ++exp_checked;
    }
    // quotients of two sample vectors, lane by lane
    V q = x;
    const V d = vector_at(i * 31u + 7u);
    simd::divide_in_place(q, d);
    for (std::uint32_t l = 0; l < 4; ++l) {
      const float want = x[l] / d[l];
      // (NaN quotients: any NaN; the payload is the FPU's choice in both)
      if (bits(q[l]) != bits(want) && !(is_nan(q[l]) && is_nan(want))) ++failures;
      ++div_checked;
    }
  }
  // gather4 / scatter4: lanes at offsets 0, 8, 16, 24 (the book's pairs)
  float m[32];
  for (std::uint32_t k = 0; k < 32; ++k) m[k] = static_cast<float>(k);
  const std::size_t at[4] = {0, 8, 16, 24};
  const simd::offsets4 off(at);
  const V g = simd::gather4(m + 3, off);
  for (std::uint32_t l = 0; l < 4; ++l)
    if (g[l] != static_cast<float>(3 + 8 * l)) ++failures;
  simd::scatter4(m + 5, off, g);
  for (std::uint32_t l = 0; l < 4; ++l)
    if (m[5 + 8 * l] != static_cast<float>(3 + 8 * l)) ++failures;
  bm_report::line("exp lanes checked", exp_checked);
  bm_report::line("quotients checked", div_checked);
  bm_report::line("exponentials in the subnormal range, flushed to 0 on every path", flushed_count);
  bm_report::line("flush-to-zero emulation comparisons", ftz_checked);
  bm_report::line("f16, bf16 and q8_0 conversions checked", format_checked);
  bm_report::line("failures", failures);
  return failures == 0 && exp_checked > 190000 ? 0 : 1;
}
