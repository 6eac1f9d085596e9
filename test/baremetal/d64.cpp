// d64.cpp -- bare-metal test of a d_in = d_out = 64, 4-head, 32-token
// multi_head_attention (d64_model.hpp) with its weights in ROM and its
// workspace in static storage, forward(x, out, ws): the run-time result must
// equal the compile-time evaluation of the same forward (d64_constexpr.cpp)
// bit for bit, and a plain-loops reference (plain_reference.hpp) within 1e-5
// relative. Prints the output's checksum and sum, the forward call's stack
// high-water mark (checked against workspace_type::frame_bytes, the library's
// bound of that call's stack) and marks the kernels' and the plain loops'
// forward for count_instructions.sh; checks at compile time which kernels and
// multiply-adds the target gets. Exit status: the number of failed checks.
#include "mha_baremetal.hpp"

#include <cstring>

#include <mha/detail/arch/muladd.hpp>
#include <mha/detail/arch/simd.hpp>

#include "d64_model.hpp"
#include "plain_reference.hpp"
#include "report.hpp"

// The kernels this target gets: vector registers only with MVE (Cortex-M55),
// so the scalar kernels on Cortex-M3, M4F and M7; fused multiply-adds for
// float exactly where there is an FPU (M4F, M7, M55), unfused on the M3's
// soft float.
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
static_assert(mha::detail::simd::hardware_vectors);
#else
static_assert(!mha::detail::simd::hardware_vectors);
#endif
#if defined(__ARM_FP)
static_assert(mha::detail::has_fma<float>);
#else
static_assert(!mha::detail::has_fma<float>);
#endif

namespace {
d64::output_type out;
d64::output_type plain_out;
d64::workspace_type ws;
plain::workspace<1, d64::tokens, d64::d_model> plain_ws;

void forward() noexcept { d64::model.forward(d64::input, out, ws); }
void forward_plain() noexcept {
  plain::forward<1, d64::tokens>(d64::model, d64::input.data(), plain_out.data(), plain_ws);
}
}  // namespace

int main() {
  using mha_bm::check;
  mha_bm::write("d64: multi_head_attention<float, 64, 64, 32, 4>, 32 tokens, weights in ROM\n");
  const std::size_t stack = mha_bm::measure_stack([] { forward(); });
  check(std::memcmp(out.data(), d64::compile_time_output.data(), sizeof out) == 0,
        "d64: run-time forward == compile-time forward (bits)");
  const std::uint32_t sum_bits = bm_report::checksum(out.data(), out.size);

  forward_plain();
  const double diff = bm_report::max_abs_diff(out.data(), plain_out.data(), out.size);
  check(bm_report::violations(out.data(), plain_out.data(), out.size, 1e-5) == 0,
        "d64: forward == plain loops within 1e-5 relative");

  mha_bm::count_region("d64 forward (mha kernels)", &out, [] { forward(); });
  mha_bm::count_region("d64 forward (plain loops)", &plain_out, [] { forward_plain(); });
  check(bm_report::checksum(out.data(), out.size) == sum_bits, "d64: repeated forward, same bits");

  double sum = 0;
  for (const float v : out) sum += static_cast<double>(v);
  mha_bm::write("checksum (FNV-1a of the output's bits): ");
  mha_bm::write_hex(sum_bits);
  mha_bm::write("\nsum of the outputs: ");
  mha_bm::write_fixed(sum, 6);
  mha_bm::write("\nlargest |mha - plain loops|: ");
  mha_bm::write_fixed(diff, 9);
  mha_bm::write("\n");
  bm_report::line("stack high-water of forward(x, out, ws) [bytes]", stack);
  bm_report::line("workspace_type::frame_bytes (the library's bound) [bytes]",
                  d64::workspace_type::frame_bytes);
  bm_report::line("sizeof(workspace_type) (static) [bytes]", sizeof(d64::workspace_type));
  check(stack <= d64::workspace_type::frame_bytes, "d64: stack use within frame_bytes");
  check(stack < mha_bm::stack_size(), "d64: stack use below the stack's size");
  mha_bm::write(mha_bm::failures() == 0 ? "d64: all checks passed\n" : "d64: checks FAILED\n");
  return mha_bm::failures();
}
