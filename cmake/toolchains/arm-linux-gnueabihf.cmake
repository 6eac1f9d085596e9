# Cross build for 32-bit ARM Linux (ARMv7-A, NEON and VFPv4, hard float) with
# Debian's g++-arm-linux-gnueabihf; the tests run under qemu-user (qemu-arm,
# the target's libraries from /usr/arm-linux-gnueabihf). Preset armhf
# (docs/embedded.md). MHA_ARMV7_FPU (set before including this file) picks
# another FPU: armv7-vfpv3.cmake sets vfpv3-d16 (no NEON, no FMA).
if(NOT DEFINED MHA_ARMV7_FPU)
  set(MHA_ARMV7_FPU neon-vfpv4)
endif()
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7-a)
set(MHA_CROSS_TRIPLE arm-linux-gnueabihf)
set(CMAKE_CXX_COMPILER ${MHA_CROSS_TRIPLE}-g++)
# (-Wno-psabi: g++ notes at every std::initializer_list<std::uint64_t> or
# vector iterator argument that its passing "changed in GCC 7.1", an ABI note
# about mixing objects of GCC < 7.1, which a build from one compiler never does)
set(CMAKE_CXX_FLAGS_INIT "-march=armv7-a -mfpu=${MHA_ARMV7_FPU} -mfloat-abi=hard -Wno-psabi")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm -L /usr/${MHA_CROSS_TRIPLE})
include(${CMAKE_CURRENT_LIST_DIR}/linux-sysroot.cmake)
