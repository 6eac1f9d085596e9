# mha_split_entry(ENTRY NAME_VAR REST_VAR): splits a "name|rest" list entry at
# its first '|' (the test lists' format: test/CMakeLists.txt's MHA_TEST_GROUPS
# "group|file,file", test/compile_fail/cases.cmake's "case|regex", whose regex
# may hold more '|'). Sets NAME_VAR to the part before it and REST_VAR to the
# part after; an entry without '|' is a configure error naming it.
function(mha_split_entry entry name_var rest_var)
  string(FIND "${entry}" "|" bar)
  if(bar LESS 1)
    message(FATAL_ERROR "'${entry}': expected name|rest")
  endif()
  string(SUBSTRING "${entry}" 0 ${bar} name)
  math(EXPR rest_start "${bar} + 1")
  string(SUBSTRING "${entry}" ${rest_start} -1 rest)
  set(${name_var} "${name}" PARENT_SCOPE)
  set(${rest_var} "${rest}" PARENT_SCOPE)
endfunction()
