# Cross build for 32-bit ARM Linux (ARMv7-A, NEON and VFPv4, hard float) with
# Debian's g++-arm-linux-gnueabihf; the tests run under qemu-user (qemu-arm,
# the target's libraries from /usr/arm-linux-gnueabihf). Preset armhf
# (docs/embedded.md).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7-a)
set(MHA_CROSS_TRIPLE arm-linux-gnueabihf)
set(CMAKE_CXX_COMPILER ${MHA_CROSS_TRIPLE}-g++)
set(CMAKE_CXX_FLAGS_INIT "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm -L /usr/${MHA_CROSS_TRIPLE})
include(${CMAKE_CURRENT_LIST_DIR}/linux-sysroot.cmake)
