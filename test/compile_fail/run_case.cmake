# Runs one compile-fail case (cmake -P). Variables:
#   COMPILER  the C++ compiler to run
#   SOURCE    the .cpp file
#   INCLUDES  ;-separated include directories (pass with | instead of ;)
#   MODE      "fail": the compile must fail with exactly one error (one
#                     mistake gives one error, docs/diagnostics.md); prints the
#                     first error line as "MHA_CF_FIRST_ERROR: <line>" for
#                     PASS_REGULAR_EXPRESSION, and "MHA_CF_UNEXPECTED" (the
#                     test's FAIL_REGULAR_EXPRESSION) if it compiled or gave
#                     more than one error;
#             "ok":   the same file with -DMHA_CF_OK must compile cleanly with
#                     the project's warning flags (exit code decides);
#             "pch":  builds the precompiled umbrella header PCH from
#                     PCH_SOURCE (SOURCE is not used).
#             "twins": writes SOURCE from the cases CASES (|-separated
#                     paths; merge_twins.cmake), then as "ok".
#   PCH       optional: a precompiled <mha/mha.hpp> (g++: the header next to
#             its .gch; clang++: the .pch) that the case includes first. Only
#             the parsing of the library's headers is saved (about half of a
#             case's time): the error, its line and the error count come from
#             the same headers. Cases that #define a macro the headers read
#             (stack limits, MHA_MAX_INLINE_BYTES, __ARM_ARCH_PROFILE) run
#             without it (CMakeLists.txt).
#   PCH_KIND  gnu or clang: how PCH is built and used.
string(REPLACE "|" ";" include_list "${INCLUDES}")
set(args -std=c++20 -fsyntax-only -Wall -Wextra -Wpedantic -Wconversion -Wshadow -Werror)
foreach(dir IN LISTS include_list)
  list(APPEND args "-I${dir}")
endforeach()
if(MODE STREQUAL "pch")
  list(REMOVE_ITEM args -fsyntax-only)
  if(PCH_KIND STREQUAL "gnu")
    set(pch_out "${PCH}.gch")
  else()
    set(pch_out "${PCH}")
  endif()
  execute_process(COMMAND "${COMPILER}" ${args} -x c++-header "${PCH_SOURCE}" -o "${pch_out}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("${COMPILER} ${args} -x c++-header ${PCH_SOURCE} -o ${pch_out}\nexit code ${rc}\n${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the precompiled header did not build")
  endif()
  return()
endif()
if(MODE STREQUAL "twins")
  include(${CMAKE_CURRENT_LIST_DIR}/merge_twins.cmake)
  string(REPLACE "|" ";" cases "${CASES}")
  mha_cf_merge_twins("${SOURCE}" ${cases})
  set(MODE ok)
endif()
if(MODE STREQUAL "ok")
  list(APPEND args -DMHA_CF_OK)
endif()
if(PCH)
  if(PCH_KIND STREQUAL "gnu")
    # (-Winvalid-pch: a stale or mismatched .gch is an error, not a silent re-parse)
    list(APPEND args -Winvalid-pch -include "${PCH}")
  else()
    list(APPEND args -include-pch "${PCH}")
  endif()
endif()
if(MODE STREQUAL "fail" AND BATCH_DIR)
  # The case was checked in a batch (run_batch.cmake, the setup tests
  # compile_fail.<compiler>.batch<k>.forward/.reverse): its result there is the
  # verdict only if both orders were clean (one error for every case of the
  # batch, none left unattributed), every case of the batch had its diagnostics
  # at the same places in both orders, both passed this case (its regex matched)
  # and both compiled this file as it is now with this run's precompiled header
  # (run_batch.cmake says why that makes the isolated compile pass too).
  # Anything else: compiled on its own below, as without batching.
  get_filename_component(name "${SOURCE}" NAME_WE)
  file(SHA256 "${SOURCE}" sha)
  if(PCH_KIND STREQUAL "gnu")
    file(TIMESTAMP "${PCH}.gch" pch_stamp "%s")
  else()
    file(TIMESTAMP "${PCH}" pch_stamp "%s")
  endif()
  set(why "")
  foreach(order forward reverse)
    foreach(part status command)
      if(NOT EXISTS "${BATCH_DIR}/${order}.${part}")
        string(APPEND why "no ${order} batch result; ")
      endif()
    endforeach()
    foreach(part verdict first log skeleton)
      if(EXISTS "${BATCH_DIR}/${name}.${order}.${part}")
        file(READ "${BATCH_DIR}/${name}.${order}.${part}" ${part}_${order})
      else()
        set(${part}_${order} "")
        string(APPEND why "no ${order} ${part}; ")
      endif()
    endforeach()
    if(why STREQUAL "")
      file(READ "${BATCH_DIR}/${order}.status" status)
      if(NOT status STREQUAL "clean\n")
        string(APPEND why "${order} batch ${status}")
      endif()
      if(NOT verdict_${order} STREQUAL "pass ${sha} ${pch_stamp}\n")
        string(APPEND why "${order} verdict: ${verdict_${order}}")
      endif()
    endif()
  endforeach()
  if(why STREQUAL "")
    # every case of the batch, not only this one: a diagnostic that two cases
    # share is printed once, for the first of them in each order (see above)
    file(GLOB forward_skeletons "${BATCH_DIR}/*.forward.skeleton")
    file(GLOB reverse_skeletons "${BATCH_DIR}/*.reverse.skeleton")
    list(LENGTH forward_skeletons n_forward)
    list(LENGTH reverse_skeletons n_reverse)
    if(NOT n_forward EQUAL n_reverse)
      set(why "the two orders wrote different cases")
    endif()
    foreach(forward IN LISTS forward_skeletons)
      string(REGEX REPLACE "forward\\.skeleton$" "reverse.skeleton" reverse "${forward}")
      if(NOT EXISTS "${reverse}")
        set(why "${reverse} is missing")
        break()
      endif()
      file(READ "${forward}" a)
      file(READ "${reverse}" b)
      if(NOT a STREQUAL b)
        set(why "the two orders gave a case of the batch diagnostics at different places: ${forward}")
        break()
      endif()
    endforeach()
  endif()
  if(why STREQUAL "")
    file(READ "${BATCH_DIR}/forward.command" command)
    message("checked in a batch (${BATCH_DIR}, forward and reverse order):\n${command}"
            "this case's diagnostics there (forward order; the reverse order's name the same places):\n${log_forward}")
    message("MHA_CF_BATCH: passed in the batch")
    message("MHA_CF_FIRST_ERROR: ${first_forward}")
    return()
  endif()
  message("MHA_CF_BATCH: compiled on its own: ${why}")
endif()
execute_process(COMMAND "${COMPILER}" ${args} "${SOURCE}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("${COMPILER} ${args} ${SOURCE}\nexit code ${rc}\n${out}")
if(MODE STREQUAL "ok")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the one-token twin (-DMHA_CF_OK) must compile, but did not")
  endif()
else()
  if(rc EQUAL 0)
    message("MHA_CF_UNEXPECTED: the case compiled, but it must fail")
    message(FATAL_ERROR "compiled unexpectedly")
  endif()
  string(REGEX MATCH "[^\n]*: error: [^\n]*" first_error "${out}")
  message("MHA_CF_FIRST_ERROR: ${first_error}")
  string(REGEX MATCHALL ": error: " errors "${out}")
  list(LENGTH errors error_count)
  if(NOT error_count EQUAL 1)
    message("MHA_CF_UNEXPECTED: ${error_count} errors, but one mistake must give one error")
    message(FATAL_ERROR "${error_count} errors")
  endif()
endif()
