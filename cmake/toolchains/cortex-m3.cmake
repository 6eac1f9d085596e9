# Bare-metal cross build for Cortex-M3, which has no FPU: every float
# operation is a call into libgcc's soft-float helpers (__aeabi_fadd, ...;
# soft-float ABI, newlib's thumb/v7-m/nofp multilib); the test programs run on
# qemu-system-arm's mps2-an385 machine. Preset cortex-m3 (docs/embedded.md).
set(MHA_BAREMETAL_CPU_FLAGS "-mcpu=cortex-m3 -mfloat-abi=soft")
set(MHA_BAREMETAL_MACHINE mps2-an385)
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
