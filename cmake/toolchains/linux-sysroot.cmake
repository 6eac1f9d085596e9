# Shared part of the Debian cross toolchain files: libraries and headers only
# from the target's tree /usr/<triple>, programs (python3, qemu) from the host.
# The header-only dependencies (Boost.Hana, Catch2, nlohmann-json) are not
# there: cmake/header_only_deps.cmake gives the cross build just their header
# directories, never the host's /usr/include as a whole.
set(CMAKE_FIND_ROOT_PATH /usr/${MHA_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(MHA_HEADER_ONLY_DEPS ON CACHE BOOL "Header-only dependencies from the host's header directories")
