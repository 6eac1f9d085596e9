# mha_dispatch_sources(<target> SOURCES <file>... [LEVELS <level>...])
#
# x86-64 run-time dispatch (include/mha/dispatch.hpp, docs/dispatch.md):
# compiles the sources once per level with -march=<level> and
# -DMHA_DISPATCH_LEVEL=<1..4> (one object library per level, with <target>'s
# include directories, compile definitions, compile options except its
# instruction-set flags, and linked libraries) and links every copy into
# <target>.
#
# Each copy is self-contained: its objects are linked into one relocatable
# object (ld -r, which keeps one of each COMDAT group of inline code), every
# symbol it defines except the dispatched functions (the namespaces
# mha_dispatch_x86_64*, MHA_DISPATCH_DECLARE) is made local, and its COMDAT
# groups become ordinary sections (objcopy --keep-global-symbol
# --remove-section=.group; a group left in place would be discarded by the
# final link when another object has it too, and with it the code that the
# copy's now-local references point to). So no inline function a copy emits
# (mha's, the standard library's, the user's) can stand in for another
# object's: an AVX copy of std::bit_cast, say, never runs before the
# dispatch decision or on a CPU without AVX. The price: each copy has its own
# instance of every inline function and inline variable it uses (a function-
# local static of an inline function is not shared with the program's own
# code; docs/dispatch.md, Limits).
#
# LEVELS: any of x86-64 x86-64-v2 x86-64-v3 x86-64-v4 (default: all four);
# x86-64 is always built. On another processor than x86-64, or with a
# compiler that does not take -march=x86-64-v2, only the baseline copy is
# built, with the target's own flags. Call it once per target, with all of
# its dispatched sources.
include_guard(GLOBAL)
include(CheckCXXCompilerFlag)

function(mha_dispatch_sources target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;LEVELS")
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "mha_dispatch_sources(${target}): no SOURCES")
  endif()
  get_target_property(done ${target} MHA_DISPATCH_SOURCES)
  if(done)
    message(FATAL_ERROR "mha_dispatch_sources(${target}): called a second time for this target "
                        "(first with ${done}); call it once, with all of its dispatched SOURCES")
  endif()
  set_target_properties(${target} PROPERTIES MHA_DISPATCH_SOURCES "${arg_SOURCES}")
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
  list(REMOVE_DUPLICATES arg_LEVELS)
  list(REMOVE_ITEM arg_LEVELS x86-64)
  list(PREPEND arg_LEVELS x86-64)  # baseline first, always
  check_cxx_compiler_flag(-march=x86-64-v2 MHA_HAVE_MARCH_X86_64_LEVELS)
  check_cxx_compiler_flag(-fno-gnu-unique MHA_HAVE_NO_GNU_UNIQUE)
  if(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" OR NOT MHA_HAVE_MARCH_X86_64_LEVELS)
    set(arg_LEVELS x86-64)
    set(march OFF)
  else()
    set(march ON)
  endif()

  # The program's own code runs before any dispatch decision: built for more
  # than the baseline, it is not portable whatever the copies do.
  set(isa_flags "(^| )-m(arch|avx|fma|sse[34]|ssse3|bmi|f16c|popcnt|lzcnt)")
  get_target_property(own_options ${target} COMPILE_OPTIONS)
  list(REMOVE_ITEM own_options -march=x86-64)  # (the baseline itself is what it should be)
  if(march AND (own_options MATCHES "${isa_flags}" OR CMAKE_CXX_FLAGS MATCHES "-m(avx|fma|sse[34]|ssse3|bmi)"))
    message(WARNING "mha_dispatch_sources(${target}): the target's own code is built with "
                    "instruction-set flags (${own_options} ${CMAKE_CXX_FLAGS}); it runs on every "
                    "CPU before the dispatch, so build it for the oldest CPU you ship to "
                    "(-march=x86-64). The dispatched copies leave these flags out "
                    "(docs/dispatch.md).")
  endif()

  get_target_property(linker_language ${target} LINKER_LANGUAGE)
  if(NOT linker_language)  # (a target whose only sources are the copies' objects)
    set_target_properties(${target} PROPERTIES LINKER_LANGUAGE CXX)
  endif()
  get_target_property(type ${target} TYPE)
  get_target_property(pic ${target} POSITION_INDEPENDENT_CODE)
  if(type STREQUAL "SHARED_LIBRARY" OR type STREQUAL "MODULE_LIBRARY")
    set(pic ON)
  endif()
  set(self_contained ON)
  if(NOT CMAKE_LINKER OR NOT CMAKE_OBJCOPY)
    set(self_contained OFF)
    message(WARNING "mha_dispatch_sources(${target}): no linker or objcopy found "
                    "(CMAKE_LINKER, CMAKE_OBJCOPY): the copies are linked as they are, so an "
                    "inline function that a copy emits could be used outside it "
                    "(docs/dispatch.md, Limits)")
  endif()

  foreach(level IN LISTS arg_LEVELS)
    list(FIND known ${level} index)
    math(EXPR number "${index} + 1")
    string(REPLACE "-" "_" suffix ${level})
    set(copy ${target}_mha_dispatch_${suffix})
    add_library(${copy} OBJECT EXCLUDE_FROM_ALL ${arg_SOURCES})  # (built for ${target})
    target_include_directories(${copy} PRIVATE $<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>)
    target_compile_definitions(${copy} PRIVATE $<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>
                               MHA_DISPATCH_LEVEL=${number})
    # the target's options without its instruction-set flags (-march, -mavx2, ...)
    target_compile_options(${copy} PRIVATE
      "$<FILTER:$<TARGET_PROPERTY:${target},COMPILE_OPTIONS>,EXCLUDE,^-m(arch|tune|avx|fma|sse|ssse3|bmi|f16c|popcnt|lzcnt|prefer-vector-width)>")
    target_link_libraries(${copy} PRIVATE $<TARGET_PROPERTY:${target},LINK_LIBRARIES>)
    get_target_property(features ${target} COMPILE_FEATURES)
    if(features)
      target_compile_features(${copy} PRIVATE ${features})
    endif()
    set_target_properties(${copy} PROPERTIES
      CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
      INTERPROCEDURAL_OPTIMIZATION OFF)  # (ld -r needs machine code, not LTO bytecode)
    if(MHA_HAVE_NO_GNU_UNIQUE)
      # (GCC gives inline variables STB_GNU_UNIQUE binding, which objcopy does not localize)
      target_compile_options(${copy} PRIVATE -fno-gnu-unique)
    endif()
    if(pic)
      set_target_properties(${copy} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    endif()
    if(march)
      # after the target's own options and CMAKE_CXX_FLAGS, so that this -march wins
      target_compile_options(${copy} PRIVATE -march=${level})
    endif()
    if(self_contained)
      set(merged ${CMAKE_CURRENT_BINARY_DIR}/${copy}.o)
      add_custom_command(
        OUTPUT ${merged}
        COMMAND ${CMAKE_LINKER} -r -o ${merged} "$<TARGET_OBJECTS:${copy}>"
        COMMAND ${CMAKE_OBJCOPY} --wildcard "--keep-global-symbol=*mha_dispatch_x86_64*"
                --remove-section=.group ${merged}
        DEPENDS ${copy} "$<TARGET_OBJECTS:${copy}>"
        COMMAND_EXPAND_LISTS VERBATIM
        COMMENT "mha_dispatch_sources: one self-contained object for ${target} at ${level}")
      set_source_files_properties(${merged} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
      target_sources(${target} PRIVATE ${merged})
    else()
      target_sources(${target} PRIVATE $<TARGET_OBJECTS:${copy}>)
    endif()
  endforeach()
endfunction()
