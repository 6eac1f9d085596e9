# Boost.Hana, the one dependency of mha (header-only): defines the imported
# interface target mha::hana from the cache variable MHA_HANA_INCLUDE_DIR, the
# directory that holds boost/hana.hpp. Included by the project's
# CMakeLists.txt and by the installed mha-config.cmake (next to it), so a
# project that builds mha and one that finds it installed look Hana up alike.
#
# When MHA_HANA_INCLUDE_DIR is not set, find_path looks for boost/hana.hpp
# where the toolchain says: on the host the usual prefixes (/usr/include); in a
# cross build whose toolchain file sets CMAKE_FIND_ROOT_PATH and
# CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY, inside those roots only (the
# sysroot), never the host's /usr/include. To use a Hana outside the sysroot,
# set MHA_HANA_INCLUDE_DIR to a directory that holds `boost/` and nothing of
# the host's C library, e.g. a Boost or Hana checkout's include directory or a
# directory with one link `boost -> /usr/include/boost`. Boost >= 1.74 when
# boost/version.hpp is there (a standalone Hana has none).
#
# Sets mha_hana_problem to a message (and defines no target) when Hana is not
# usable; the includer reports it.
set(mha_hana_problem "")
if(NOT TARGET mha::hana)
  find_path(MHA_HANA_INCLUDE_DIR boost/hana.hpp
            HINTS ${mha_hana_hints}
            DOC "Directory that holds boost/hana.hpp (Boost >= 1.74 headers or a standalone Boost.Hana)")
  if(NOT MHA_HANA_INCLUDE_DIR OR NOT EXISTS "${MHA_HANA_INCLUDE_DIR}/boost/hana.hpp")
    set(mha_hana_problem
        "mha needs Boost.Hana (header-only): boost/hana.hpp not found (MHA_HANA_INCLUDE_DIR="
        "\"${MHA_HANA_INCLUDE_DIR}\"; a cross build searches only CMAKE_FIND_ROOT_PATH). Set "
        "MHA_HANA_INCLUDE_DIR to the directory that holds boost/hana.hpp, for a cross build "
        "one that holds boost/ only (e.g. a link boost -> /usr/include/boost), not the host's "
        "/usr/include.")
    string(CONCAT mha_hana_problem ${mha_hana_problem})
  else()
    set(mha_hana_version_file "${MHA_HANA_INCLUDE_DIR}/boost/version.hpp")
    if(EXISTS "${mha_hana_version_file}")
      file(STRINGS "${mha_hana_version_file}" mha_hana_version REGEX "^#define BOOST_VERSION [0-9]+")
      string(REGEX REPLACE "^#define BOOST_VERSION ([0-9]+).*" "\\1" mha_hana_version
             "${mha_hana_version}")
      if(mha_hana_version AND mha_hana_version LESS 107400)
        set(mha_hana_problem
            "mha needs Boost >= 1.74 (Boost.Hana); ${mha_hana_version_file} has BOOST_VERSION ${mha_hana_version}")
      endif()
    endif()
    if(NOT mha_hana_problem)
      add_library(mha::hana INTERFACE IMPORTED ${mha_hana_global})
      set_target_properties(mha::hana PROPERTIES
        INTERFACE_INCLUDE_DIRECTORIES "${MHA_HANA_INCLUDE_DIR}")
    endif()
  endif()
endif()
