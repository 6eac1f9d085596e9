# check_no_heap.cmake -- the no_heap_symbols test (test/baremetal/CMakeLists.txt):
# none of the allocation functions (the C library's malloc family and _sbrk,
# C++'s operator new and delete; cmake/baremetal/no_heap.cpp defines them all
# as traps, and --gc-sections drops each one nothing calls) may be in the
# linked programs PROGRAMS, so none of them allocates; and the same check must
# find one in CONTROL (test/baremetal/heap_trap.cpp's program), so it can fail.
#   cmake -DNM=arm-none-eabi-nm "-DPROGRAMS=a.elf|b.elf" -DCONTROL=c.elf -P check_no_heap.cmake
# (PROGRAMS separated by |: a ; would split the argument in add_test.)
string(REPLACE "|" ";" PROGRAMS "${PROGRAMS}")
set(heap_symbols "^(malloc|free|calloc|realloc|memalign|aligned_alloc|posix_memalign|_malloc_r|_free_r|_calloc_r|_realloc_r|_memalign_r|_sbrk|_sbrk_r|_Znw[jm].*|_Zna[jm].*|_Zdl.*|_Zda.*)$")

function(heap_symbols_of elf out)
  execute_process(COMMAND ${NM} ${elf} OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} ${elf} failed (${rc})")
  endif()
  string(REPLACE "\n" ";" lines "${listing}")
  set(found "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^.* " "" name "${line}")
    if(name MATCHES "${heap_symbols}")
      list(APPEND found ${name})
    endif()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

set(failed FALSE)
foreach(elf IN LISTS PROGRAMS)
  heap_symbols_of(${elf} found)
  if(found)
    message(SEND_ERROR "${elf}: allocation functions linked: ${found}")
    set(failed TRUE)
  else()
    message(STATUS "${elf}: no allocation function linked")
  endif()
endforeach()
heap_symbols_of(${CONTROL} found)
if(NOT found)
  message(SEND_ERROR "${CONTROL}: the control program links no allocation function; the check is broken")
else()
  message(STATUS "${CONTROL} (control): links ${found}")
endif()
