# Bare-metal cross build for Cortex-M55: Armv8.1-M with the M-profile Vector
# Extension for integers and floats (MVE, 128-bit vectors; -mcpu=cortex-m55
# enables it and the FPU), hard-float ABI; the test programs run on
# qemu-system-arm's mps3-an547 machine. Preset cortex-m55 (docs/embedded.md).
set(MHA_BAREMETAL_CPU_FLAGS "-mcpu=cortex-m55 -mfloat-abi=hard")
set(MHA_BAREMETAL_MACHINE mps3-an547)
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
