# Bare-metal cross build for Cortex-M7 with its double-precision FPU
# (FPv5-D16, hard-float ABI); the test programs run on qemu-system-arm's
# mps2-an500 machine. Preset cortex-m7 (docs/embedded.md).
set(MHA_BAREMETAL_CPU_FLAGS "-mcpu=cortex-m7 -mfpu=fpv5-d16 -mfloat-abi=hard")
set(MHA_BAREMETAL_MACHINE mps2-an500)
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
