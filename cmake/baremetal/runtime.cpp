// runtime.cpp -- semihosting output and exit, checks, stack measurement and
// instruction-count markers of the bare-metal test programs
// (mha_baremetal.hpp). Semihosting calls are `bkpt 0xab` with the operation in
// r0 and its argument in r1 (Arm's semihosting specification, v2.0);
// QEMU's -semihosting-config enable=on,target=native serves them.
#include "mha_baremetal.hpp"

extern "C" {
extern std::uint32_t __stack_limit[];  // linker script: lowest word of the stack
extern std::uint32_t __stack_top[];    // one past its highest word
}

namespace mha_bm {
namespace {

// Semihosting operation numbers and exit reasons (Arm semihosting v2.0).
constexpr std::uint32_t sys_write0 = 0x04;
constexpr std::uint32_t sys_exit = 0x18;  // angel_SWIReason_ReportException
constexpr std::uint32_t sys_exit_extended = 0x20;
constexpr std::uint32_t adp_stopped_application_exit = 0x20026;
constexpr std::uint32_t adp_stopped_run_time_error = 0x20023;

std::uint32_t semihost(std::uint32_t op, const void* arg) noexcept {
  std::uint32_t result;
  __asm__ volatile(
      "mov r0, %1\n\t"
      "mov r1, %2\n\t"
      "bkpt 0xab\n\t"
      "mov %0, r0"
      : "=r"(result)
      : "r"(op), "r"(arg)
      : "r0", "r1", "memory");
  return result;
}

constexpr std::uint32_t stack_pattern = 0xa5a5a5a5u;
int failure_count = 0;

}  // namespace

void write(const char* s) noexcept { semihost(sys_write0, s); }

void write_uint(unsigned long v) noexcept {
  char buf[12];
  char* p = buf + sizeof buf;
  *--p = '\0';
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  write(p);
}

void write_int(long v) noexcept {
  if (v < 0) {
    write("-");
    write_uint(0ul - static_cast<unsigned long>(v));
  } else {
    write_uint(static_cast<unsigned long>(v));
  }
}

void write_hex(std::uint32_t v) noexcept {
  char buf[11] = "0x";
  for (int i = 0; i < 8; ++i) buf[2 + i] = "0123456789abcdef"[(v >> (28 - 4 * i)) & 0xfu];
  buf[10] = '\0';
  write(buf);
}

void write_fixed(double v, int decimals) noexcept {
  if (v != v) {
    write("nan");
    return;
  }
  if (v < 0) {
    write("-");
    v = -v;
  }
  if (decimals > 9) decimals = 9;  // (the fraction's digits in 32 bits)
  double scale = 1;
  for (int i = 0; i < decimals; ++i) scale *= 10;
  const double scaled = v * scale + 0.5;
  const auto whole = static_cast<unsigned long>(scaled / scale);  // (|v| < 2^32)
  auto frac = static_cast<unsigned long>(scaled - static_cast<double>(whole) * scale);
  write_uint(whole);
  if (decimals <= 0) return;
  write(".");
  char buf[10];
  buf[decimals] = '\0';
  for (int i = decimals - 1; i >= 0; --i) {
    buf[i] = static_cast<char>('0' + frac % 10);
    frac /= 10;
  }
  write(buf);
}

void exit(int code) noexcept {
  // SYS_EXIT_EXTENDED carries the code on AArch32 too; a host without it
  // returns, and SYS_EXIT (whose AArch32 form has no code) reports success or
  // a run-time error.
  const std::uint32_t block[2] = {adp_stopped_application_exit, static_cast<std::uint32_t>(code)};
  semihost(sys_exit_extended, block);
  semihost(sys_exit, reinterpret_cast<const void*>(
                         static_cast<std::uintptr_t>(code == 0 ? adp_stopped_application_exit
                                                               : adp_stopped_run_time_error)));
  for (;;) {
  }
}

void assert_failed(const char* file, int line, const char* expr) noexcept {
  write("MHA_ASSERT failed: ");
  write(file);
  write(":");
  write_int(line);
  write(": ");
  write(expr);
  write("\n");
  exit(2);
}

bool check(bool ok, const char* what) noexcept {
  if (!ok) {
    ++failure_count;
    write("FAILED: ");
    write(what);
    write("\n");
  }
  return ok;
}

int failures() noexcept { return failure_count; }

std::uintptr_t paint_stack() noexcept {
  std::uintptr_t sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  // (a leaf function: nothing of its own lives below sp)
  for (auto* p = __stack_limit; reinterpret_cast<std::uintptr_t>(p) < sp; ++p) {
    __asm__ volatile("" ::: "memory");  // keep the stores a loop (not a memset call)
    *p = stack_pattern;
  }
  return sp;
}

std::size_t stack_used(std::uintptr_t top) noexcept {
  const std::uint32_t* p = __stack_limit;
  while (reinterpret_cast<std::uintptr_t>(p) < top && *p == stack_pattern) ++p;
  return top - reinterpret_cast<std::uintptr_t>(p);
}

std::size_t stack_size() noexcept {
  return static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(__stack_top) -
                                  reinterpret_cast<std::uintptr_t>(__stack_limit));
}

}  // namespace mha_bm

extern "C" {
void mha_bm_count_begin(const void* p) noexcept { __asm__ volatile("" : : "r"(p) : "memory"); }
void mha_bm_count_end(const void* p) noexcept { __asm__ volatile("" : : "r"(p) : "memory"); }
}
