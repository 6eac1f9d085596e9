# Runs one compile-fail case (cmake -P). Variables:
#   COMPILER  the C++ compiler to run
#   SOURCE    the .cpp file
#   INCLUDES  ;-separated include directories (pass with | instead of ;)
#   MODE      "fail": the compile must fail; prints the first error line as
#                     "MHA_CF_FIRST_ERROR: <line>" for PASS_REGULAR_EXPRESSION,
#                     and "MHA_CF_UNEXPECTED" (the test's FAIL_REGULAR_EXPRESSION)
#                     if it compiled;
#             "ok":   the same file with -DMHA_CF_OK must compile cleanly with
#                     the project's warning flags (exit code decides).
string(REPLACE "|" ";" include_list "${INCLUDES}")
set(args -std=c++20 -fsyntax-only -Wall -Wextra -Wpedantic -Wconversion -Wshadow -Werror)
foreach(dir IN LISTS include_list)
  list(APPEND args "-I${dir}")
endforeach()
if(MODE STREQUAL "ok")
  list(APPEND args -DMHA_CF_OK)
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
endif()
