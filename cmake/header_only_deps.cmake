# Header-only dependencies for cross builds (MHA_HEADER_ONLY_DEPS, set by the
# toolchain files in cmake/toolchains/). Boost.Hana, Catch2 v2 and
# nlohmann-json are header-only, so the host's copies serve any target; but
# their host package configurations point at the host's /usr/include, whose
# C library headers must never reach a cross compiler. Instead this links just
# their header directories (boost/, catch2/, nlohmann/) into one directory of
# the build tree and writes package configurations for it into
# CMAKE_FIND_PACKAGE_REDIRECTS_DIR, which find_package() reads before
# anything else: find_package(Boost), find_package(Catch2) and
# find_package(nlohmann_json) then define the usual imported targets on that
# directory. Catch2's CMake scripts (Catch.cmake: catch_discover_tests, which
# runs the test programs through CMAKE_CROSSCOMPILING_EMULATOR) come from the
# host's Catch2 package directory. Catch2's main is compiled by the cross
# compiler like every test (test/catch_main.cpp).
set(MHA_HOST_INCLUDE_DIR /usr/include CACHE PATH "Where the host's boost/, catch2/ and nlohmann/ header directories are")
set(MHA_HOST_CATCH2_CMAKE_DIR /usr/lib/cmake/Catch2 CACHE PATH "The host's Catch2 package directory (Catch.cmake)")
set(_mha_deps ${CMAKE_BINARY_DIR}/header_only_deps)
file(MAKE_DIRECTORY ${_mha_deps})
foreach(_dir IN ITEMS boost catch2 nlohmann)
  if(NOT EXISTS ${MHA_HOST_INCLUDE_DIR}/${_dir})
    message(FATAL_ERROR "MHA_HEADER_ONLY_DEPS: ${MHA_HOST_INCLUDE_DIR}/${_dir} not found "
                        "(Debian: libboost-dev, catch2, nlohmann-json3-dev)")
  endif()
  if(NOT EXISTS ${_mha_deps}/${_dir})
    file(CREATE_LINK ${MHA_HOST_INCLUDE_DIR}/${_dir} ${_mha_deps}/${_dir} SYMBOLIC)
  endif()
endforeach()

# <name>-config.cmake defining target on the linked directory, and a version
# file accepting any requested version up to `version`.
function(_mha_redirect name target version extra)
  string(TOLOWER ${name} _lower)
  file(WRITE ${CMAKE_FIND_PACKAGE_REDIRECTS_DIR}/${_lower}-config.cmake
"if(NOT TARGET ${target})
  add_library(${target} INTERFACE IMPORTED)
  set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES \"${_mha_deps}\")
endif()
set(${name}_VERSION ${version})
set(${name}_INCLUDE_DIRS \"${_mha_deps}\")
${extra}
")
  file(WRITE ${CMAKE_FIND_PACKAGE_REDIRECTS_DIR}/${_lower}-config-version.cmake
"set(PACKAGE_VERSION ${version})
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
endif()
")
endfunction()
_mha_redirect(Boost Boost::headers 1.74.0 "")
_mha_redirect(Catch2 Catch2::Catch2 2.13.10
  "list(APPEND CMAKE_MODULE_PATH \"${MHA_HOST_CATCH2_CMAKE_DIR}\")")
_mha_redirect(nlohmann_json nlohmann_json::nlohmann_json 3.11.2 "")
