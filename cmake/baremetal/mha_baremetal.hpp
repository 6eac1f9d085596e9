// mha_baremetal.hpp -- the run-time support of the bare-metal test programs
// (test/baremetal, built by cmake/baremetal for the cortex-m* presets):
// semihosting output and exit status, the MHA_ASSERT handler, stack
// high-water measurement and the markers count_instructions.sh counts
// between. No C library stdio and no heap: see no_heap.cpp.
//
// Include this header before any mha header: it defines MHA_ASSERT_HANDLER
// (mha/config.hpp) so that a failed debug check prints and exits non-zero
// instead of calling the C library's assert.
#pragma once

#if defined(MHA_ASSERT)
#error "include mha_baremetal.hpp before the mha headers (it defines MHA_ASSERT_HANDLER)"
#endif

#include <cstddef>
#include <cstdint>

namespace mha_bm {

/// Writes a NUL-terminated string to the host (semihosting SYS_WRITE0).
void write(const char* s) noexcept;
/// Decimal, hexadecimal (8 digits, "0x" prefix) and fixed-point output
/// (32-bit integers: 64-bit division would link __aeabi_uldivmod).
void write_uint(unsigned long v) noexcept;
void write_int(long v) noexcept;
void write_hex(std::uint32_t v) noexcept;
/// v with `decimals` (at most 9) digits after the point, |v| < 2^32 (for
/// display only: the digits are computed in double, not correctly rounded).
void write_fixed(double v, int decimals) noexcept;

/// Ends the program with exit status `code` (semihosting SYS_EXIT_EXTENDED,
/// ADP_Stopped_ApplicationExit with the code; QEMU exits with it).
[[noreturn]] void exit(int code) noexcept;

/// The MHA_ASSERT handler: prints the failed check and exits with status 2.
[[noreturn]] void assert_failed(const char* file, int line, const char* expr) noexcept;

/// Checks: `check` prints a failed one and counts it; `failures()` is the
/// count so far (main returns it as the exit status).
bool check(bool ok, const char* what) noexcept;
int failures() noexcept;

/// Stack high-water measurement. paint_stack() fills the stack below its
/// caller's stack pointer (down to the stack's limit) with a pattern and
/// returns that stack pointer; stack_used(top) is the number of bytes between
/// top and the deepest word no longer holding the pattern.
[[gnu::noinline]] std::uintptr_t paint_stack() noexcept;
std::size_t stack_used(std::uintptr_t top) noexcept;
/// Stack bytes f() uses below the caller's frame.
template <class F>
[[gnu::noinline]] std::size_t measure_stack(F&& f) noexcept {
  const std::uintptr_t top = paint_stack();
  f();
  return stack_used(top);
}
/// Size of the stack region (linker script).
std::size_t stack_size() noexcept;

}  // namespace mha_bm

extern "C" {
/// Markers of an instruction-count region (cmake/baremetal/count_instructions.sh
/// counts the instructions executed between a return from the first and the
/// call of the second). The argument only keeps the measured data escaped.
[[gnu::noinline]] void mha_bm_count_begin(const void* p) noexcept;
[[gnu::noinline]] void mha_bm_count_end(const void* p) noexcept;
}

namespace mha_bm {
/// Runs f() between the count markers, after printing the region's name
/// ("count region: <name>", which count_instructions.sh reads).
template <class F>
void count_region(const char* name, const void* data, F&& f) noexcept {
  write("count region: ");
  write(name);
  write("\n");
  mha_bm_count_begin(data);
  f();
  mha_bm_count_end(data);
}
}  // namespace mha_bm

#define MHA_ASSERT_HANDLER(file, line, expr) ::mha_bm::assert_failed(file, line, expr)
