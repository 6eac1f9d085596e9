// mha/detail/arch/half.hpp -- IEEE binary16 and bfloat16 from and to float, on
// the bits (integer operations only: the same result on every target, in
// constant evaluation and whatever the FPU's flush or rounding mode).
#pragma once

#include <mha/detail/cxx20_check.hpp>

#include <bit>
#include <cstdint>

#include <mha/detail/macros.hpp>

namespace mha::detail {
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

/// The IEEE 754 binary16 nearest to `x`, ties to even (IEEE 754's default
/// rounding, as PyTorch's `.half()`, x86's VCVTPS2PH with imm 0, Arm's FCVT):
/// magnitudes from 65520 up (and infinities) give an infinity of x's sign;
/// below 2^-14 - 2^-25 a subnormal binary16 (multiples of 2^-24), from 2^-25
/// down a zero of x's sign (2^-25 itself ties to that zero). A NaN gives a
/// NaN of x's sign with the quiet bit set and the 9 payload bits below it
/// taken from the top of x's (as VCVTPS2PH and FCVT do).
constexpr std::uint16_t f32_to_f16(float x) noexcept {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u)  // NaN: quiet, payload's top bits
    return static_cast<std::uint16_t>(sign | 0x7E00u | ((magnitude >> 13) & 0x3FFu));
  if (magnitude >= 0x477FF000u)  // >= 65520 = 65504 + half an ulp (the tie goes to even: infinity)
    return static_cast<std::uint16_t>(sign | 0x7C00u);
  if (magnitude >= 0x38800000u) {  // >= 2^-14: a normal binary16
    // Round the 23-bit mantissa to 10 bits, ties to even; a carry out of the
    // mantissa raises the exponent, which is the correct result. Then rebias
    // the exponent from 127 to 15 (subtract 112 << 23).
    const std::uint32_t rounded = magnitude + 0xFFFu + ((magnitude >> 13) & 1u);
    return static_cast<std::uint16_t>(sign | ((rounded - (112u << 23)) >> 13));
  }
  // Below 2^-14: a subnormal binary16, round(|x| * 2^24), ties to even. |x| =
  // m * 2^(e - 150) with the implicit bit in m, so |x| * 2^24 = m >> (126 - e).
  const std::uint32_t exponent = magnitude >> 23;
  if (exponent < 102u) return sign;  // |x| < 2^-25 (float subnormals too): rounds to zero
  const std::uint32_t m = (magnitude & 0x7FFFFFu) | 0x800000u;
  const std::uint32_t shift = 126u - exponent;  // 14 .. 24
  std::uint32_t q = m >> shift;
  const std::uint32_t rest = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
  if (rest > half || (rest == half && (q & 1u) != 0)) ++q;  // may round up to 2^-14: still right
  return static_cast<std::uint16_t>(sign | q);
}

/// The bfloat16 nearest to `x`, ties to even (as PyTorch's
/// `.to(torch.bfloat16)` and ggml's GGML_FP32_TO_BF16): finite values whose
/// rounding overflows give an infinity of x's sign; subnormals round like
/// any other value (no flush, unlike AVX512-BF16's VCVTNEPS2BF16). A NaN
/// gives a NaN of x's sign with the quiet bit set and the 6 payload bits
/// below it taken from the top of x's (as ggml does).
constexpr std::uint16_t f32_to_bf16(float x) noexcept {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  return static_cast<std::uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

}  // namespace MHA_DETAIL_ISA
}  // namespace mha::detail

#include <mha/detail/macros_undef.hpp>
