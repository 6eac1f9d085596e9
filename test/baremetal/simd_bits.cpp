// simd_bits.cpp -- bare-metal test of the vector primitives whose per-target
// forms must give the scalar code's bits (test/test_math.cpp checks them on
// the hosts): on Cortex-M55 they are MVE-specific code (simd::exp_mve's
// vector-by-scalar arithmetic and its clamp formula, the in-place divisions
// through S0-S7, the gathers and scatters of the attention pairs), on the
// scalar cores the compiler's lane-by-lane lowering. Over every 16381st float
// bit pattern (all classes: zeros, subnormals, normals, infinities, NaN) and
// the neighbours of exp's constants, lanes mixed:
//  * simd::exp_of_nonpositive on a 4-float vector gives simd::exp's scalar
//    bits in every lane whose argument is <= 88, and a NaN for a NaN (on the
//    M55: +0 where the scalar result is subnormal, see flushes_subnormals);
//  * simd::exp on a 4-float vector gives the scalar bits for every argument
//    <= 88 (above, the vector clamps to 88: exp(88) exactly);
//  * simd::divide_in_place of two vectors gives the scalar quotients' bits;
//  * simd::gather4 / scatter4 move the 4 floats at their offsets.
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
// inputs and results to zero in QEMU 7.2, which evaluates them with Arm's
// "standard FPSCR value" (flush-to-zero and default NaN on) whatever FPSCR
// says, while the scalar FPU keeps IEEE subnormals. So the vector
// exponential of an argument in [-103.97, -87.34] is +0 there, where the
// scalar one is a subnormal: a known difference between the vector and the
// scalar paths on this target (docs/embedded.md, "Subnormals on the M55"),
// checked here as exactly that, so that any other difference fails.
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
constexpr bool flushes_subnormals = true;
#else
constexpr bool flushes_subnormals = false;
#endif

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

int main() {
  unsigned long failures = 0, exp_checked = 0, div_checked = 0, flushed_count = 0;
  for (std::uint32_t i = 0; i < sample_count; ++i) {
    const V x = vector_at(i);
    const V e_nonpositive = simd::exp_of_nonpositive(x);
    const V e = simd::exp(x);
    for (std::uint32_t l = 0; l < 4; ++l) {
      if (!(x[l] <= 88.0f) && !is_nan(x[l])) continue;  // unspecified above 88
      const float want = simd::exp(x[l]);
      // (a NaN argument: any NaN; which payload survives is the FPU's or the
      // soft-float library's choice, e.g. for a signalling NaN on the M3)
      // (a subnormal result where vector arithmetic flushes them: +0, see
      // flushes_subnormals)
      const bool flushed = flushes_subnormals && want != 0.0f && want < 1.17549435e-38f;
      const bool same =
          is_nan(want) ? is_nan(e_nonpositive[l]) && is_nan(e[l])
          : flushed    ? bits(e_nonpositive[l]) == 0 && bits(e[l]) == 0
                       : bits(e_nonpositive[l]) == bits(want) && bits(e[l]) == bits(want);
      flushed_count += flushed ? 1 : 0;
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
  bm_report::line("subnormal exponentials flushed to 0 by vector arithmetic", flushed_count);
  bm_report::line("failures", failures);
  return failures == 0 && exp_checked > 190000 ? 0 : 1;
}
