// double_helper_control.cpp -- the control program of the no_double_helpers
// test (check_no_symbols.cmake, CHECK=double): it converts a double to a
// 64-bit integer, which calls libgcc's __aeabi_d2ulz on every 32-bit Arm
// target, with or without a double-precision FPU, so the check must find a
// double-precision helper here. Built, not run.
#include "mha_baremetal.hpp"

namespace {
volatile double value = 3.0;
}  // namespace

int main() { return static_cast<int>(static_cast<unsigned long long>(value) & 1u) - 1; }
