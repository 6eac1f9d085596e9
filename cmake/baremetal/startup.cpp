// startup.cpp -- vector table and reset handler of the bare-metal test
// programs (cmake/baremetal): enables the FPU (and MVE) where the target has
// one (not on Cortex-M3), on Armv8-M sets the stack limit register, copies
// .data from ROM, zeroes .bss, paints the stack for the high-water
// measurement, runs the static constructors, calls main and exits through
// semihosting with its return value. An unexpected exception (a fault)
// prints its number and exits with status 3.
#include "mha_baremetal.hpp"

extern "C" {
extern std::uint32_t __data_load[], __data_start[], __data_end[];
extern std::uint32_t __bss_start[], __bss_end[];
extern std::uint32_t __stack_top[];
extern void (*__init_array_start[])();
extern void (*__init_array_end[])();
// The program's main under another C++ name: ISO C++ forbids calling main.
int mha_bm_main() __asm__("main");
[[noreturn]] void mha_bm_reset() noexcept;
[[noreturn]] void mha_bm_start() noexcept;
[[noreturn]] void mha_bm_exception() noexcept;
}

namespace {

// The Armv7-M / Armv8-M vector table: initial stack pointer, then the 15
// system exceptions (Reset, NMI, HardFault, MemManage, BusFault, UsageFault,
// SecureFault on Armv8-M, reserved x3, SVCall, DebugMonitor, reserved,
// PendSV, SysTick). No interrupts are enabled, so no IRQ entries.
struct vector_table {
  std::uint32_t* initial_sp;
  void (*handlers[15])();
};

[[gnu::used, gnu::section(".vectors")]] const vector_table vectors = {
    __stack_top,
    {mha_bm_reset, mha_bm_exception, mha_bm_exception, mha_bm_exception, mha_bm_exception,
     mha_bm_exception, mha_bm_exception, nullptr, nullptr, nullptr, mha_bm_exception,
     mha_bm_exception, nullptr, mha_bm_exception, mha_bm_exception}};

}  // namespace

extern "C" {

// Before any floating-point instruction: full access to coprocessors 10 and
// 11 (CPACR at 0xE000ED88, bits 20-23: the FPU, and MVE on Armv8.1-M; left
// alone with soft float, on Cortex-M3, which has neither), and on Armv8-M the
// main stack limit (a stack overflow faults instead of overwriting .bss).
// Written in assembly so that no compiled code runs first.
[[gnu::naked]] void mha_bm_reset() noexcept {
  __asm__ volatile(
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
      "movw r0, #0xed88\n\t"
      "movt r0, #0xe000\n\t"
      "ldr r1, [r0]\n\t"
      "orr r1, r1, #0xf00000\n\t"
      "str r1, [r0]\n\t"
      "dsb\n\t"
      "isb\n\t"
#endif
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
      "ldr r0, =__stack_limit\n\t"
      "msr msplim, r0\n\t"
#endif
      "b mha_bm_start\n\t"
      ".ltorg");
}

void mha_bm_start() noexcept {
  for (std::uint32_t *src = __data_load, *dst = __data_start; dst < __data_end;) *dst++ = *src++;
  for (std::uint32_t* p = __bss_start; p < __bss_end; ++p) *p = 0;
  mha_bm::paint_stack();
  for (auto* f = __init_array_start; f < __init_array_end; ++f) (*f)();
  mha_bm::exit(mha_bm_main());
}

void mha_bm_exception() noexcept {
  std::uint32_t ipsr;
  __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
  mha_bm::write("unexpected exception ");
  mha_bm::write_uint(ipsr & 0x1ffu);
  mha_bm::write(" (3 HardFault, 4 MemManage, 5 BusFault, 6 UsageFault, 7 SecureFault)\n");
  mha_bm::exit(3);
}

}  // extern "C"
