// heap.cpp -- a heap for the one bare-metal test program that allocates
// (test/baremetal/dynamic_bits.cpp: mha::dynamic, which keeps its weights and
// workspaces in std::vector): newlib's malloc takes its memory from _sbrk,
// here a static 256 KiB array in .bss (the M55 machine has 512 KiB of RAM).
// Linked instead of no_heap.cpp (mha_baremetal_heap_executable); every other
// program keeps the traps.
#include <cerrno>
#include <cstddef>

// The handle of this program for __cxa_atexit (static destructors, which
// libstdc++'s exception globals register); crtbegin.o, left out with
// -nostartfiles, defines it in hosted programs.
extern "C" {
void* __dso_handle = nullptr;
}

extern "C" void* _sbrk(std::ptrdiff_t increment) noexcept {
  alignas(8) static unsigned char heap[256 * 1024];
  static std::size_t used = 0;
  if (increment < 0 || static_cast<std::size_t>(increment) > sizeof heap - used) {
    errno = ENOMEM;
    return reinterpret_cast<void*>(-1);
  }
  void* const block = heap + used;
  used += static_cast<std::size_t>(increment);
  return block;
}
