// mha/io/detail/half.hpp -- IEEE binary16 and bfloat16 to float conversions.
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <bit>
#include <cstdint>

#include <mha/detail/macros.hpp>

namespace mha::io::detail {
MHA_DETAIL_ISA_NAMESPACE {

/// The float32 with the same value as the IEEE 754 binary16 `h` (exact: every
/// binary16 value, including subnormals, is a float32). Infinities keep their
/// sign; a NaN stays a NaN with its payload in the top mantissa bits.
constexpr float f16_to_f32(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu;
  std::uint32_t mantissa = h & 0x3FFu;
  std::uint32_t bits = 0;
  if (exponent == 0x1Fu) {  // infinity or NaN
    bits = sign | 0x7F800000u | (mantissa << 13);
  } else if (exponent != 0) {  // normal: rebias 15 -> 127
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {  // signed zero
    bits = sign;
  } else {  // subnormal m * 2^-24: normalise the mantissa
    std::uint32_t shifts = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shifts;
    }
    bits = sign | ((113u - shifts) << 23) | ((mantissa & 0x3FFu) << 13);
  }
  return std::bit_cast<float>(bits);
}

/// The float32 with the same value as the bfloat16 `b` (exact: bfloat16 is the
/// top half of a float32).
constexpr float bf16_to_f32(std::uint16_t b) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

}  // namespace MHA_DETAIL_ISA
}  // namespace mha::io::detail

#include <mha/detail/macros_undef.hpp>
