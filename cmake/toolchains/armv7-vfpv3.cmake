# Cross build for 32-bit ARM Linux without NEON: ARMv7-A with VFPv3-D16 (no
# vector unit, no fused multiply-add; Debian armhf's own baseline), hard float,
# with Debian's g++-arm-linux-gnueabihf; the tests run under qemu-arm. Preset
# armv7-vfpv3 (docs/embedded.md).
set(MHA_ARMV7_FPU vfpv3-d16)
include(${CMAKE_CURRENT_LIST_DIR}/arm-linux-gnueabihf.cmake)
