# mha_dispatch_sources(<target> SOURCES <file>... [LEVELS <level>...])
#
# x86-64 run-time dispatch (include/mha/dispatch.hpp, docs/dispatch.md):
# compiles each source once per level with -march=<level> and
# -DMHA_DISPATCH_LEVEL=<1..4> (one object library per level, with <target>'s
# include directories, compile definitions, compile options and linked
# libraries) and links every copy into <target>, baseline first (the linker
# keeps the first definition of an inline function that several copies emit
# outside mha's ISA namespaces, e.g. the standard library's, and the baseline
# one runs on every x86-64 CPU). Defines MHA_DISPATCH_LEVELS (the bit mask of
# the levels built) on <target> and on the copies.
#
# LEVELS: any of x86-64 x86-64-v2 x86-64-v3 x86-64-v4 (default: all four);
# x86-64 is always built. On another processor than x86-64, or with a compiler
# that does not take -march=x86-64-v2, only the baseline copy is built, with
# the target's own flags.
include_guard(GLOBAL)
include(CheckCXXCompilerFlag)

function(mha_dispatch_sources target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;LEVELS")
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "mha_dispatch_sources(${target}): no SOURCES")
  endif()
  if(NOT arg_LEVELS)
    set(arg_LEVELS x86-64 x86-64-v2 x86-64-v3 x86-64-v4)
  endif()
  set(known x86-64 x86-64-v2 x86-64-v3 x86-64-v4)
  foreach(level IN LISTS arg_LEVELS)
    if(NOT level IN_LIST known)
      message(FATAL_ERROR "mha_dispatch_sources(${target}): unknown level '${level}' "
                          "(expected x86-64, x86-64-v2, x86-64-v3 or x86-64-v4)")
    endif()
  endforeach()
  list(REMOVE_ITEM arg_LEVELS x86-64)
  list(PREPEND arg_LEVELS x86-64)  # baseline first, always
  check_cxx_compiler_flag(-march=x86-64-v2 MHA_HAVE_MARCH_X86_64_LEVELS)
  if(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" OR NOT MHA_HAVE_MARCH_X86_64_LEVELS)
    set(arg_LEVELS x86-64)
    set(march OFF)
  else()
    set(march ON)
  endif()
  set(mask 0)
  foreach(level IN LISTS arg_LEVELS)
    list(FIND known ${level} index)
    math(EXPR number "${index} + 1")
    math(EXPR mask "${mask} | (1 << ${number})")
    string(REPLACE "-" "_" suffix ${level})
    set(copy ${target}_mha_dispatch_${suffix})
    add_library(${copy} OBJECT ${arg_SOURCES})
    target_include_directories(${copy} PRIVATE $<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>)
    target_compile_definitions(${copy} PRIVATE $<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>
                               MHA_DISPATCH_LEVEL=${number})
    target_compile_options(${copy} PRIVATE $<TARGET_PROPERTY:${target},COMPILE_OPTIONS>)
    target_link_libraries(${copy} PRIVATE $<TARGET_PROPERTY:${target},LINK_LIBRARIES>)
    get_target_property(features ${target} COMPILE_FEATURES)
    if(features)
      target_compile_features(${copy} PRIVATE ${features})
    endif()
    if(march)
      # after the target's own options, so that this -march wins
      target_compile_options(${copy} PRIVATE -march=${level})
    endif()
    target_sources(${target} PRIVATE $<TARGET_OBJECTS:${copy}>)
  endforeach()
  target_compile_definitions(${target} PRIVATE MHA_DISPATCH_LEVELS=${mask})
endfunction()
