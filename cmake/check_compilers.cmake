# mha_check_compilers(<compilers_var> <ids_var>): the C++ compilers that the
# compile-time checks run (test/compile_fail, test/headers), so that one ctest
# covers both g++ and clang++. <compilers_var> receives the configured compiler
# first, then the other one of g++ / clang++ when it is installed (g++, g++-12
# when configured with Clang; clang++, clang++-14 when configured with GCC; the
# path is cached as MHA_OTHER_CXX); <ids_var> their short names for test names,
# in the same order: gxx, clangxx (cxx for a configured compiler that is
# neither, then without a second one). Not installed: used by our tests only.
include_guard(GLOBAL)

function(mha_check_compilers compilers_var ids_var)
  set(compilers "${CMAKE_CXX_COMPILER}")
  set(other_id)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    set(ids gxx)
    find_program(MHA_OTHER_CXX NAMES clang++ clang++-14)
    set(other_id clangxx)
  elseif(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    set(ids clangxx)
    find_program(MHA_OTHER_CXX NAMES g++ g++-12)
    set(other_id gxx)
  else()
    set(ids cxx)
  endif()
  if(other_id AND MHA_OTHER_CXX)
    list(APPEND compilers "${MHA_OTHER_CXX}")
    list(APPEND ids ${other_id})
  endif()
  set(${compilers_var} "${compilers}" PARENT_SCOPE)
  set(${ids_var} "${ids}" PARENT_SCOPE)
endfunction()
