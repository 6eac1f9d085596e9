# cmake -DNM=... -DPROGRAM=... -DCOPIES=a.o;b.o -P check_symbols.cmake
# The copies that mha_dispatch_sources links are self-contained:
#  * each copy's merged object (COPIES) defines no global or weak symbol but
#    its dispatched functions (namespaces mha_dispatch_x86_64*): every inline
#    function and variable it emits (mha's kernels, the standard library's)
#    is local to it, so none can stand in for another object's;
#  * in the final program, no global symbol comes from another ISA namespace
#    than the program's own (isa_sse4_2, isa_avx2_fma, isa_avx512: the
#    x86-64-v2, v3 and v4 copies' kernels), and the dispatched functions of
#    all 4 levels are there.
# Fails with the offending symbols.
set(problems)
foreach(copy IN LISTS COPIES)
  execute_process(COMMAND ${NM} --defined-only --extern-only ${copy}
                  OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm failed on ${copy}")
  endif()
  string(REPLACE "\n" ";" lines "${symbols}")
  set(exported 0)
  foreach(line IN LISTS lines)
    if(line MATCHES "^[0-9a-f]+ [A-Za-z] (.*)$")
      if(CMAKE_MATCH_1 MATCHES "mha_dispatch_x86_64")
        math(EXPR exported "${exported} + 1")
      else()
        list(APPEND problems "${copy} exports ${line}")
      endif()
    endif()
  endforeach()
  if(exported EQUAL 0)
    list(APPEND problems "${copy} exports no dispatched function")
  endif()
endforeach()

execute_process(COMMAND ${NM} --defined-only -C ${PROGRAM} OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${PROGRAM}")
endif()
string(REPLACE "\n" ";" lines "${symbols}")
set(dispatched 0)
foreach(line IN LISTS lines)
  if(line MATCHES "^[0-9a-f]+ ([A-Z]) (.*)$")  # global (upper-case type letter)
    set(name "${CMAKE_MATCH_2}")
    if(name MATCHES "isa_(sse4_2|avx2_fma|avx512)")
      list(APPEND problems "${PROGRAM}: global ${line}")
    endif()
    if(name MATCHES "^dispatch_test::mha_dispatch_x86_64(_v[234])?::forward\\(")
      math(EXPR dispatched "${dispatched} + 1")
    endif()
  endif()
endforeach()
if(NOT dispatched EQUAL 4)
  list(APPEND problems "${PROGRAM}: ${dispatched} dispatched forward functions, expected 4")
endif()
if(problems)
  list(JOIN problems "\n  " text)
  message(FATAL_ERROR "dispatched copies are not self-contained:\n  ${text}")
endif()
message(STATUS "the copies export only their dispatched functions; all 4 levels in ${PROGRAM}")
