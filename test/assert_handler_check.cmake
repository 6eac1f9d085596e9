# cmake -DNM=... -DHANDLER=<program with MHA_ASSERT_HANDLER> -DDEFAULT=<object without> -P ...
# The program built with the handler references no assert function of the C
# library (glibc's __assert_fail, newlib's __assert_func, ...) and no stdio
# (printf, puts, fprintf, fwrite, write); the same unit without the handler
# references assert (so the pattern would catch it). Undefined symbols only.
set(forbidden "assert|printf|puts|fwrite|fputs|stderr")
foreach(file IN ITEMS "${HANDLER}" "${DEFAULT}")
  execute_process(COMMAND "${NM}" -u "${file}" RESULT_VARIABLE rc OUTPUT_VARIABLE syms
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} -u ${file} failed: ${err}")
  endif()
  message("${file}:\n${syms}")
  string(REGEX MATCHALL "[^\n]*(${forbidden})[^\n]*" hits "${syms}")
  if(file STREQUAL "${HANDLER}" AND hits)
    message(FATAL_ERROR "the program with MHA_ASSERT_HANDLER references: ${hits}")
  endif()
  if(file STREQUAL "${DEFAULT}" AND NOT hits MATCHES "assert")
    message(FATAL_ERROR "the unit without the handler references no assert function: the check "
                        "cannot tell")
  endif()
endforeach()
