# Shared part of the bare-metal Cortex-M toolchain files (cortex-m3.cmake,
# cortex-m4f.cmake, cortex-m7.cmake, cortex-m55.cmake): Debian's
# gcc-arm-none-eabi with newlib-nano (libnewlib-arm-none-eabi,
# libstdc++-arm-none-eabi-newlib), our own start-up code and linker scripts
# (cmake/baremetal; -nostartfiles), no exceptions, no RTTI, unused functions
# and data removed at link time. The including file sets
# MHA_BAREMETAL_CPU_FLAGS (-mcpu, -mfpu, -mfloat-abi) and
# MHA_BAREMETAL_MACHINE (the qemu-system-arm machine the test programs run on,
# with semihosting). Default build type MinSizeRel (-Os), the usual choice on
# microcontrollers. Presets cortex-m3, cortex-m4f, cortex-m7, cortex-m55
# (docs/embedded.md).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
# (a test link without our start-up code and linker script would fail)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_CXX_FLAGS_INIT
    "-mthumb ${MHA_BAREMETAL_CPU_FLAGS} --specs=nano.specs -ffunction-sections -fdata-sections -fno-exceptions -fno-rtti")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-nostartfiles -Wl,--gc-sections")
if(NOT DEFINED CMAKE_BUILD_TYPE OR CMAKE_BUILD_TYPE STREQUAL "")
  set(CMAKE_BUILD_TYPE MinSizeRel CACHE STRING "Build type (bare metal: MinSizeRel, -Os)")
endif()

# Libraries and headers only from the toolchain's tree; programs (qemu,
# python3) from the host. Boost.Hana comes from cmake/header_only_deps.cmake.
set(CMAKE_FIND_ROOT_PATH /usr/lib/arm-none-eabi)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(MHA_HEADER_ONLY_DEPS ON CACHE BOOL "Header-only dependencies from the host's header directories")
# (the host test suite needs an operating system: test/baremetal instead)
set(MHA_BUILD_BAREMETAL ON CACHE BOOL "Build the bare-metal Cortex-M test programs instead of the host tests")

# CTest runs each test program as `qemu-system-arm ... -kernel PROGRAM.elf`;
# its exit status is the program's (semihosting SYS_EXIT_EXTENDED).
set(CMAKE_CROSSCOMPILING_EMULATOR
    qemu-system-arm -machine ${MHA_BAREMETAL_MACHINE} -nographic -monitor none -serial none
    -semihosting-config enable=on,target=native -kernel)
