// no_heap.cpp -- the heap of the bare-metal test programs: none. Every
// allocation and deallocation function of the C library (newlib's malloc
// family and its reentrant _r forms, _sbrk) and of C++ (all replaceable
// operator new and delete forms) prints "heap use trapped: <function>" and
// exits with status 4. Linked into every program with --gc-sections, so a
// program that allocates nothing keeps none of them: the no_heap_symbols test
// checks the linked programs for these symbols, and test/baremetal/heap_trap
// that a program that does allocate fails.
#include <cstddef>
#include <cstdlib>
#include <new>

#include "mha_baremetal.hpp"

struct _reent;  // newlib's reentrancy structure (only passed through)

namespace {
[[noreturn]] void trap(const char* what) noexcept {
  mha_bm::write("heap use trapped: ");
  mha_bm::write(what);
  mha_bm::write("\n");
  mha_bm::exit(4);
}
}  // namespace

extern "C" {
void* malloc(std::size_t) noexcept { trap("malloc"); }
void free(void*) noexcept { trap("free"); }
void* calloc(std::size_t, std::size_t) noexcept { trap("calloc"); }
void* realloc(void*, std::size_t) noexcept { trap("realloc"); }
void* memalign(std::size_t, std::size_t) noexcept { trap("memalign"); }
void* aligned_alloc(std::size_t, std::size_t) noexcept { trap("aligned_alloc"); }
int posix_memalign(void**, std::size_t, std::size_t) noexcept { trap("posix_memalign"); }
void* _malloc_r(_reent*, std::size_t) noexcept { trap("_malloc_r"); }
void _free_r(_reent*, void*) noexcept { trap("_free_r"); }
void* _calloc_r(_reent*, std::size_t, std::size_t) noexcept { trap("_calloc_r"); }
void* _realloc_r(_reent*, void*, std::size_t) noexcept { trap("_realloc_r"); }
void* _memalign_r(_reent*, std::size_t, std::size_t) noexcept { trap("_memalign_r"); }
void* _sbrk(std::ptrdiff_t) noexcept { trap("_sbrk"); }
void* _sbrk_r(_reent*, std::ptrdiff_t) noexcept { trap("_sbrk_r"); }
}

void* operator new(std::size_t) { trap("operator new"); }
void* operator new[](std::size_t) { trap("operator new[]"); }
void* operator new(std::size_t, const std::nothrow_t&) noexcept { trap("operator new"); }
void* operator new[](std::size_t, const std::nothrow_t&) noexcept { trap("operator new[]"); }
void* operator new(std::size_t, std::align_val_t) { trap("operator new"); }
void* operator new[](std::size_t, std::align_val_t) { trap("operator new[]"); }
void* operator new(std::size_t, std::align_val_t, const std::nothrow_t&) noexcept {
  trap("operator new");
}
void* operator new[](std::size_t, std::align_val_t, const std::nothrow_t&) noexcept {
  trap("operator new[]");
}
void operator delete(void*) noexcept { trap("operator delete"); }
void operator delete[](void*) noexcept { trap("operator delete[]"); }
void operator delete(void*, std::size_t) noexcept { trap("operator delete"); }
void operator delete[](void*, std::size_t) noexcept { trap("operator delete[]"); }
void operator delete(void*, const std::nothrow_t&) noexcept { trap("operator delete"); }
void operator delete[](void*, const std::nothrow_t&) noexcept { trap("operator delete[]"); }
void operator delete(void*, std::align_val_t) noexcept { trap("operator delete"); }
void operator delete[](void*, std::align_val_t) noexcept { trap("operator delete[]"); }
void operator delete(void*, std::size_t, std::align_val_t) noexcept { trap("operator delete"); }
void operator delete[](void*, std::size_t, std::align_val_t) noexcept {
  trap("operator delete[]");
}
void operator delete(void*, std::align_val_t, const std::nothrow_t&) noexcept {
  trap("operator delete");
}
void operator delete[](void*, std::align_val_t, const std::nothrow_t&) noexcept {
  trap("operator delete[]");
}
