# Bare-metal cross build for Cortex-M4 with its single-precision FPU
# (FPv4-SP, hard-float ABI); the test programs run on qemu-system-arm's
# mps2-an386 machine. Preset cortex-m4f (docs/embedded.md).
set(MHA_BAREMETAL_CPU_FLAGS "-mcpu=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard")
set(MHA_BAREMETAL_MACHINE mps2-an386)
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
