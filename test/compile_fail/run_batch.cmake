# Checks a batch of compile-fail cases in one translation unit (cmake -P; the
# setup test compile_fail.<compiler>.batch<k>.<order>, CMakeLists.txt).
# Variables:
#   COMPILER, INCLUDES, PCH, PCH_KIND   as for run_case.cmake (the batch always
#             uses the precompiled header: cases that #define are never batched)
#   CASES     |-separated case names (files <name>.cpp in CASE_DIR, below);
#             all pass mha_cf_can_merge and have the same #include lines
#   ORDER     forward (CASES as given) or reverse
#   OUT_DIR   where the batch file and the verdicts go
#   CASE_DIR, CASE_LIST  optional (the self-test, selftest.cmake): where the
#             case files are and the cases.cmake that gives their regexes
#
# Writes OUT_DIR/<ORDER>.cpp: the hoisted #include lines, then each case's
# failing text (no -DMHA_CF_OK) inside `namespace mha_cf_batch_<case> { }`
# after `#line 1 "<case path>"` (the same path an isolated compile names, so
# an error line reads as it does there), `int main()` renamed `int case_main()`
# (merge_twins.cmake does the same for the twins). Compiles it once with
# -fsyntax-only and no error limit (-fmax-errors=0 / -ferror-limit=0), then
# splits the output into diagnostic groups, one per error or warning line: for
# g++ the context printed BEFORE it ("<file>: In function ...", "In
# instantiation of ...", "<file>:L:C:   required from here") and its notes; for
# clang++ the line and the notes AFTER it ("note: in instantiation of ...
# requested here"). A group belongs to the one case whose file it names; a g++
# group that names no file besides headers and has no context of its own
# continues the previous group's context (g++ prints an unchanged context once)
# and so belongs to that group's case. Any other error group (no case or two
# cases named, a fatal error) makes the batch "dirty".
#
# Per case: OUT_DIR/<case>.<ORDER>.verdict ("pass <sha256 of the case file>
# <precompiled header's mtime>" when the case has exactly one error group and
# the case's regex matches its error line where an isolated compile prints the
# same text, see below; else "fail ..."), <case>.<ORDER>.first (that error
# line), <case>.<ORDER>.log (its groups: the evidence run_case.cmake prints)
# and <case>.<ORDER>.skeleton (the file:line:col of each line of its groups);
# OUT_DIR/<ORDER>.status, "clean" only if every case had exactly one error
# group and no error was left over; <ORDER>.command.
#
# Why a batch pass is an isolated pass. The cases cannot see each other (own
# namespace, no macros, the same #include lines, CMakeLists.txt), so a case's
# diagnostics in the batch are its isolated ones, but for what a compiler does
# once per translation unit: a specialization is instantiated, and its
# diagnostics printed, once, for the first case that needs it. A diagnostic
# that two cases share is therefore printed for the first of them in each
# order, a different case in the two orders, and the last of them in the
# forward order lacks it there and has it in the reverse order: its error count
# or its skeleton differs between the orders. So run_case.cmake (MODE fail,
# BATCH_DIR) accepts a case's batch result only if both orders are clean, every
# case of the batch has the same skeleton in both, and this case passed in both;
# otherwise it compiles the case on its own, as without batching. Type names in
# a message may be spelled differently than in an isolated compile (g++ prints
# a specialization as the translation unit first spelled it), so the regex must
# match the error line's text before its first quote or the static_assert
# message at its end (a regex with ^ or $: never accepted here). The test itself
# passes whenever it could write its verdicts: a case that fails here is not a
# failure but a reason to compile it (or its whole batch) on its own.
# Not covered: clang++ skips its flow-analysis warnings (-Wuninitialized,
# -Wsometimes-uninitialized, ...) in every function it finishes after the
# translation unit's first error; a case with such a warning (an error here,
# -Werror) in a function finished before its own first error would show it in
# an isolated compile and not in a batch. g++ -fsyntax-only runs no such
# analysis. (Every case passes on its own today, so none has such a warning;
# an edit that adds one could pass in a clang++ batch.)
cmake_minimum_required(VERSION 3.21)
if(NOT CASE_DIR)
  set(CASE_DIR "${CMAKE_CURRENT_LIST_DIR}")
endif()
if(NOT CASE_LIST)
  set(CASE_LIST "${CMAKE_CURRENT_LIST_DIR}/cases.cmake")
endif()
include(${CASE_LIST})
include(${CMAKE_CURRENT_LIST_DIR}/merge_twins.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/split_entry.cmake)

foreach(entry IN LISTS MHA_COMPILE_FAIL_CASES)
  mha_split_entry("${entry}" name regex)
  set("regex_${name}" "${regex}")
endforeach()

file(MAKE_DIRECTORY "${OUT_DIR}")
file(GLOB stale "${OUT_DIR}/*.${ORDER}.*" "${OUT_DIR}/${ORDER}.*")
if(stale)
  file(REMOVE ${stale})
endif()

string(REPLACE "|" ";" names "${CASES}")
if(ORDER STREQUAL "reverse")
  list(REVERSE names)
endif()
if(PCH_KIND STREQUAL "gnu")
  set(pch_file "${PCH}.gch")
else()
  set(pch_file "${PCH}")
endif()
file(TIMESTAMP "${pch_file}" pch_stamp "%s")

# --- the batch file
set(includes "")
set(bodies "")
set(batch "${OUT_DIR}/${ORDER}.cpp")
foreach(name IN LISTS names)
  set(source "${CASE_DIR}/${name}.cpp")
  file(READ "${source}" text)
  mha_cf_can_merge("${text}" ok)
  if(NOT ok)
    message(FATAL_ERROR "${source}: this case cannot be batched (mha_cf_can_merge); re-run cmake")
  endif()
  set("path_${source}" "${name}")
  string(REGEX MATCHALL "#[ \t]*include[ \t]*<[^>\n]*>" case_includes "${text}")
  list(APPEND includes ${case_includes})
  string(REGEX REPLACE "#[ \t]*include[ \t]*<[^>\n]*>" "" body "${text}")
  string(REGEX REPLACE "int main\\(\\)" "int case_main()" body "${body}")
  string(APPEND bodies
         "namespace mha_cf_batch_${name} {\n#line 1 \"${source}\"\n${body}\n"
         "#line 1 \"${batch}, after ${name}.cpp\"\n}  // namespace mha_cf_batch_${name}\n")
endforeach()
list(REMOVE_DUPLICATES includes)
list(JOIN includes "\n" includes)
file(WRITE "${batch}"
     "// generated by test/compile_fail/run_batch.cmake: compile-fail cases checked in one\n"
     "// translation unit (${ORDER} order), one namespace each\n"
     "${includes}\n\n${bodies}\nint main() { return 0; }\n")

# --- compile (the flags of run_case.cmake's MODE fail, plus no error limit)
string(REPLACE "|" ";" include_list "${INCLUDES}")
set(args -std=c++20 -fsyntax-only -Wall -Wextra -Wpedantic -Wconversion -Wshadow -Werror)
foreach(dir IN LISTS include_list)
  list(APPEND args "-I${dir}")
endforeach()
if(PCH_KIND STREQUAL "gnu")
  list(APPEND args -fmax-errors=0 -Winvalid-pch -include "${PCH}")
else()
  list(APPEND args -ferror-limit=0 -include-pch "${PCH}")
endif()
execute_process(COMMAND "${COMPILER}" ${args} "${batch}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
string(REPLACE ";" " " command_line "${COMPILER} ${args} ${batch}")
file(WRITE "${OUT_DIR}/${ORDER}.command" "${command_line}\nexit code ${rc}\n")
message("${command_line}\nexit code ${rc}")

# --- split into groups. Lines become list items: ; [ ] are swapped for
# control characters first (CMake lists split on ; and pair brackets).
set(raw_out "${out}")
string(ASCII 1 semi)
string(ASCII 2 lbr)
string(ASCII 3 rbr)
string(REPLACE ";" "${semi}" out "${out}")
string(REPLACE "[" "${lbr}" out "${out}")
string(REPLACE "]" "${rbr}" out "${out}")
string(REPLACE "\n" ";" lines "${out}")

set(dirty "")
set(group_count 0)
set(g_text "")
set(g_skeleton "")
set(g_kind "")      # error / warning / fatal / "" (context only so far)
set(g_line "")      # the error or warning line
set(g_files "")     # case names the group's lines name
set(g_context FALSE)
macro(flush_group)
  if(NOT g_text STREQUAL "")
    math(EXPR group_count "${group_count} + 1")
    set(owner "")
    list(REMOVE_DUPLICATES g_files)
    list(LENGTH g_files n_files)
    if(n_files EQUAL 1)
      set(owner "${g_files}")
    elseif(n_files EQUAL 0 AND PCH_KIND STREQUAL "gnu" AND NOT g_context)
      set(owner "${last_owner}")
    endif()
    if(g_kind STREQUAL "fatal")
      string(APPEND dirty "a fatal error; ")
    elseif(g_kind STREQUAL "error")
      if(owner STREQUAL "")
        string(APPEND dirty "an error that names no case or several (${g_files}): ${g_line}; ")
      else()
        list(APPEND "errors_${owner}" "${group_count}")
        if(NOT DEFINED "first_${owner}")
          set("first_${owner}" "${g_line}")
        endif()
      endif()
    endif()
    if(NOT owner STREQUAL "")
      string(APPEND "log_${owner}" "${g_text}")
      string(APPEND "skeleton_${owner}" "${g_skeleton}")
    endif()
    if(g_kind STREQUAL "error" OR g_kind STREQUAL "warning")
      set(last_owner "${owner}")
    endif()
  endif()
  set(g_text "")
  set(g_skeleton "")
  set(g_kind "")
  set(g_line "")
  set(g_files "")
  set(g_context FALSE)
endmacro()

# Context lines (g++: "<file>: In ...", "<file>:L:C:   required from ...",
# "In file included from ...") belong to the diagnostic line that follows
# them, an error (a new group) or a note (the current group's).
set(last_owner "")
set(p_text "")
set(p_skeleton "")
set(p_files "")
set(p_context FALSE)
foreach(raw IN LISTS lines)
  string(REPLACE "${semi}" ";" line "${raw}")
  string(REPLACE "${lbr}" "[" line "${line}")
  string(REPLACE "${rbr}" "]" line "${line}")
  set(file "")
  set(kind "")
  if(line MATCHES "^([^ :][^:]*):[0-9]+:[0-9]+: (error|warning|note|fatal error): ")
    set(file "${CMAKE_MATCH_1}")
    set(kind "${CMAKE_MATCH_2}")
  elseif(line MATCHES "^([^ :][^:]*):[0-9]+:[0-9]+:   ")
    set(file "${CMAKE_MATCH_1}")  # g++: required from / in constexpr expansion
    set(kind context)
  elseif(line MATCHES "^([^ :][^:]*): (In |At )")
    set(file "${CMAKE_MATCH_1}")
    set(kind context)
  elseif(line MATCHES "^In file included from ")
    set(kind context)
  endif()
  # the skeleton: where each diagnostic and context line points, not its text
  # (g++ prints a type as the translation unit first spelled it, and an
  # include chain only when it changed: these differ between the orders)
  set(where "")
  if(line MATCHES "^([^ :][^:]*:[0-9]+:[0-9]+: [a-z ]+): ")
    set(where "${CMAKE_MATCH_1}\n")
  elseif(line MATCHES "^([^ :][^:]*:[0-9]+:[0-9]+):   ")
    set(where "${CMAKE_MATCH_1}: context\n")
  elseif(line MATCHES "^([^ :][^:]*): (In |At )")
    set(where "${CMAKE_MATCH_1}: context\n")
  endif()
  set(named "")
  if(NOT file STREQUAL "" AND DEFINED "path_${file}")
    set(named "${path_${file}}")
  elseif(NOT file STREQUAL "")
    string(FIND "${file}" "${OUT_DIR}/" at)
    if(at EQUAL 0)
      set(named "<the batch file>")
    endif()
  endif()
  if(kind STREQUAL "context" OR (kind STREQUAL "" AND NOT p_text STREQUAL ""))
    set(p_context TRUE)
    string(APPEND p_text "${line}\n")
    string(APPEND p_skeleton "${where}")
    list(APPEND p_files ${named})
    continue()
  endif()
  if(kind STREQUAL "error" OR kind STREQUAL "warning" OR kind STREQUAL "fatal error")
    flush_group()
    set(g_context ${p_context})
    if(kind STREQUAL "fatal error")
      set(g_kind fatal)
    else()
      set(g_kind "${kind}")
    endif()
    set(g_line "${line}")
  endif()
  string(APPEND g_text "${p_text}")
  string(APPEND g_skeleton "${p_skeleton}${where}")
  list(APPEND g_files ${p_files})
  set(p_text "")
  set(p_skeleton "")
  set(p_files "")
  set(p_context FALSE)
  if(NOT raw STREQUAL "" OR NOT g_text STREQUAL "")
    string(APPEND g_text "${line}\n")
  endif()
  list(APPEND g_files ${named})
endforeach()
string(APPEND g_text "${p_text}")
string(APPEND g_skeleton "${p_skeleton}")
list(APPEND g_files ${p_files})
flush_group()

if(NOT rc EQUAL 1)
  string(APPEND dirty "exit code ${rc} (1: errors); ")
endif()
set(passed 0)
set(alone "")
foreach(name IN LISTS names)
  file(SHA256 "${CASE_DIR}/${name}.cpp" sha)
  list(LENGTH "errors_${name}" n)
  set(first "${first_${name}}")
  set(why "")
  if(NOT n EQUAL 1)
    set(why "${n} errors")
  else()
    # The regex must match inside a part of the error line that an isolated
    # compile prints the same: the text before the first quote (what the
    # compilers quote, types and expressions, may be spelled differently here:
    # g++ prints a type as the translation unit first spelled it) or the
    # static_assert's message, printed verbatim at the end of the line. A
    # regex with an anchor (^, $) is not checked in a batch.
    set(why "the error does not match the case's regex in its unquoted start or static_assert message")
    set(literal "")
    if(first MATCHES ": error: static assertion failed: (.*)$")  # g++
      set(literal "${CMAKE_MATCH_1}")
    elseif(first MATCHES ": error: static assertion failed due to requirement '.*': (.*)$")  # clang++ >= 16
      set(literal "${CMAKE_MATCH_1}")
    elseif(first MATCHES ": error: static_assert failed.* \"(.*)\"$")  # clang++ < 16
      set(literal "${CMAKE_MATCH_1}")
    endif()
    string(REGEX MATCH "^[^‘’'\"]*" start "${first}")  # (bytes: stops at any of them)
    if(start MATCHES "${regex_${name}}" OR literal MATCHES "${regex_${name}}")
      set(why "")
    endif()
    if(regex_${name} MATCHES "[$^]")
      set(why "the case's regex has an anchor")
    endif()
  endif()
  if(why STREQUAL "")
    file(WRITE "${OUT_DIR}/${name}.${ORDER}.verdict" "pass ${sha} ${pch_stamp}\n")
    math(EXPR passed "${passed} + 1")
  else()
    file(WRITE "${OUT_DIR}/${name}.${ORDER}.verdict" "fail ${why}\n")
    if(NOT n EQUAL 1)
      string(APPEND dirty "${name}: ${why}; ")
    else()
      string(APPEND alone "${name}: ${why}; ")
    endif()
  endif()
  file(WRITE "${OUT_DIR}/${name}.${ORDER}.first" "${first}")
  file(WRITE "${OUT_DIR}/${name}.${ORDER}.log" "${log_${name}}")
  file(WRITE "${OUT_DIR}/${name}.${ORDER}.skeleton" "${skeleton_${name}}")
endforeach()
list(LENGTH names total)
if(dirty STREQUAL "")
  file(WRITE "${OUT_DIR}/${ORDER}.status" "clean\n")
  message("batch clean: one error for each of the ${total} cases; ${passed} of them matched "
          "their regex, the others will be compiled on their own: ${alone}")
else()
  file(WRITE "${OUT_DIR}/${ORDER}.status" "dirty: ${dirty}\n")
  message("batch dirty (its cases will be compiled one by one): ${passed} of ${total} passed; ${dirty}")
  message("${raw_out}")
endif()
