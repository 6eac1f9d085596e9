# check_no_symbols.cmake -- the no_heap_symbols and no_double_helpers tests
# (test/baremetal/CMakeLists.txt): none of the symbols of the set CHECK may be
# in the linked programs PROGRAMS (arm-none-eabi-nm), and the same check must
# find one in CONTROL, so it can fail.
#   CHECK=heap    the allocation functions (the C library's malloc family and
#                 _sbrk, C++'s operator new and delete; cmake/baremetal/no_heap.cpp
#                 defines them all as traps, and --gc-sections drops each one
#                 nothing calls): none of the programs allocates
#   CHECK=double  libgcc's double-precision helpers (run-time ABI names
#                 __aeabi_dadd, __aeabi_dcmplt, __aeabi_f2d, __aeabi_d2ulz, ...;
#                 the single-precision __aeabi_f* helpers of a soft-float
#                 target are allowed): the library computes in float
#   cmake -DNM=arm-none-eabi-nm -DCHECK=heap "-DPROGRAMS=a.elf|b.elf" -DCONTROL=c.elf -P check_no_symbols.cmake
# (PROGRAMS separated by |: a ; would split the argument in add_test.)
string(REPLACE "|" ";" PROGRAMS "${PROGRAMS}")
if(CHECK STREQUAL "heap")
  set(symbols "^(malloc|free|calloc|realloc|memalign|aligned_alloc|posix_memalign|_malloc_r|_free_r|_calloc_r|_realloc_r|_memalign_r|_sbrk|_sbrk_r|_Znw[jm].*|_Zna[jm].*|_Zdl.*|_Zda.*)$")
  set(what "allocation functions")
elseif(CHECK STREQUAL "double")
  # d*: arithmetic, comparisons and conversions from double; cd*: the
  # flag-setting comparisons; f2d, [u]i2d, [u]l2d: conversions to double
  set(symbols "^__aeabi_(d[a-z0-9]+|cd[a-z]+|f2d|u?i2d|u?l2d)$")
  set(what "double-precision helpers")
else()
  message(FATAL_ERROR "check_no_symbols.cmake: CHECK must be heap or double, not '${CHECK}'")
endif()

function(symbols_of elf out)
  execute_process(COMMAND ${NM} ${elf} OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} ${elf} failed (${rc})")
  endif()
  string(REPLACE "\n" ";" lines "${listing}")
  set(found "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^.* " "" name "${line}")
    if(name MATCHES "${symbols}")
      list(APPEND found ${name})
    endif()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

foreach(elf IN LISTS PROGRAMS)
  symbols_of(${elf} found)
  if(found)
    message(SEND_ERROR "${elf}: ${what} linked: ${found}")
  else()
    message(STATUS "${elf}: no ${what} linked")
  endif()
endforeach()
symbols_of(${CONTROL} found)
if(NOT found)
  message(SEND_ERROR "${CONTROL}: the control program links none of the ${what}; the check is broken")
else()
  message(STATUS "${CONTROL} (control): links ${found}")
endif()
