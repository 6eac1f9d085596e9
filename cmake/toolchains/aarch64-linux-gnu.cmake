# Cross build for AArch64 Linux with Debian's g++-aarch64-linux-gnu; the tests
# run under qemu-user (qemu-aarch64, the target's libraries from
# /usr/aarch64-linux-gnu). Preset aarch64 (docs/embedded.md).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(MHA_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_CXX_COMPILER ${MHA_CROSS_TRIPLE}-g++)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/${MHA_CROSS_TRIPLE})
include(${CMAKE_CURRENT_LIST_DIR}/linux-sysroot.cmake)
