// heap_trap.cpp -- proves the bare-metal heap traps (cmake/baremetal/no_heap.cpp)
// work: allocates with operator new (or, with MHA_BM_HEAP_TRAP_MALLOC, with
// malloc), which must print "heap use trapped: ..." and exit non-zero. Its
// tests (test/baremetal/CMakeLists.txt) are WILL_FAIL; reaching the end of
// main exits 0 and fails them.
#include "mha_baremetal.hpp"

#include <cstdlib>

int main() {
#if defined(MHA_BM_HEAP_TRAP_MALLOC)
  mha_bm::write("heap_trap: calling malloc (must trap)\n");
  void* volatile p = std::malloc(16);
  mha_bm::write("heap_trap: malloc returned\n");
  std::free(p);
#else
  mha_bm::write("heap_trap: calling operator new (must trap)\n");
  int* volatile p = new int(42);
  mha_bm::write("heap_trap: operator new returned\n");
  delete p;
#endif
  return 0;
}
