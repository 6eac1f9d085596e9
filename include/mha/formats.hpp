// mha/formats.hpp -- reduced-precision number formats: IEEE binary16 (f16),
// bfloat16 (bf16) and ggml's 8-bit blocks (q8_0), with their conversions from
// and to float. Every conversion is constexpr, noexcept, allocation-free and
// gives the same bits on every target (integer operations, and for q8_0 the
// float operations of ggml's reference quantizer, which need IEEE single
// precision in the default environment: docs/formats.md).
#pragma once

#include <mha/detail/cxx20_check.hpp>
#ifndef MHA_DETAIL_NO_CXX20

#include <bit>
#include <cstddef>
#include <cstdint>

#include <mha/config.hpp>
#include <mha/detail/arch/half.hpp>

#include <mha/detail/macros.hpp>

namespace mha {

/// An IEEE 754 binary16 number (PyTorch's torch.float16, ggml's F16,
/// safetensors' and GGUF's F16): its 16 bits, sign, 5-bit exponent, 10-bit
/// mantissa. A trivial aggregate (`f16{0x3C00}` is 1.0); two are equal when
/// their bits are.
struct f16 {
  std::uint16_t bits;  ///< the binary16 encoding
  friend constexpr bool operator==(const f16&, const f16&) noexcept = default;
};

/// A bfloat16 number (PyTorch's torch.bfloat16, ggml's BF16): the top 16 bits
/// of a float32, sign, 8-bit exponent, 7-bit mantissa. A trivial aggregate
/// (`bf16{0x3F80}` is 1.0); two are equal when their bits are.
struct bf16 {
  std::uint16_t bits;  ///< the bfloat16 encoding
  friend constexpr bool operator==(const bf16&, const bf16&) noexcept = default;
};

/// `x` rounded to the nearest binary16, ties to even, as PyTorch's `.half()`:
/// from 65520 up in magnitude an infinity, below 2^-14 - 2^-25 a subnormal,
/// from 2^-25 down a zero, each of x's sign. A NaN gives a quiet NaN of x's
/// sign keeping the top bits of its payload (as x86's VCVTPS2PH and Arm's
/// FCVT; PyTorch's NaN bits differ between its scalar and vector paths).
MHA_DETAIL_ISA_TAG constexpr f16 to_f16(float x) noexcept { return f16{detail::f32_to_f16(x)}; }
/// `x` rounded to the nearest bfloat16, ties to even, as PyTorch's
/// `.to(torch.bfloat16)` and ggml's GGML_FP32_TO_BF16, subnormals too; a NaN
/// gives a quiet NaN of x's sign keeping the top bits of its payload (as
/// ggml).
MHA_DETAIL_ISA_TAG constexpr bf16 to_bf16(float x) noexcept { return bf16{detail::f32_to_bf16(x)}; }
/// Deleted: a double would be rounded twice (to float, then to binary16),
/// which is not PyTorch's `.half()` of a float64 tensor; convert to float
/// first where that is meant (`to_f16(static_cast<float>(d))`).
f16 to_f16(double) = delete;
/// Deleted, as to_f16(double).
bf16 to_bf16(double) = delete;
/// The float with h's value (exact: every binary16 is a float).
MHA_DETAIL_ISA_TAG constexpr float to_float(f16 h) noexcept { return detail::f16_to_f32(h.bits); }
/// The float with b's value (exact: a bfloat16 is the top half of a float).
MHA_DETAIL_ISA_TAG constexpr float to_float(bf16 b) noexcept { return detail::bf16_to_f32(b.bits); }

/// ggml's Q8_0 block (GGML_TYPE_Q8_0, `block_q8_0`): 32 consecutive weights
/// as a binary16 scale `d` and 32 signed 8-bit quants, weight j = to_float(d)
/// * qs[j]. 34 bytes, alignment 2, no padding: ggml's layout, so an array of
/// blocks is a Q8_0 tensor's row as ggml stores it (and as a GGUF file does
/// on a little-endian host: `d.bits` is in the host's byte order).
struct q8_0_block {
  /// Weights per block (ggml's QK8_0).
  static constexpr std::size_t block_size = 32;
  f16 d;                          ///< the scale, max |w| / 127 rounded to binary16
  std::int8_t qs[block_size];     ///< the quants, in [-127, 127]
  friend constexpr bool operator==(const q8_0_block&, const q8_0_block&) noexcept = default;
};
static_assert(sizeof(q8_0_block) == 34 && alignof(q8_0_block) == 2,
              "mha::q8_0_block: ggml's block_q8_0 layout (34 bytes)");

namespace detail {
MHA_DETAIL_ISA_NAMESPACE {
/// A quant: C's roundf of x (halves away from zero) for |x| < 127.5, as
/// ggml stores roundf(x * id) in an int8_t; usable in constant expressions.
/// Outside that range (reached only when the block's max |x| is infinite or
/// so small that 1 / d overflows: the quantizer's preconditions) the result
/// is clamped to [-127, 127] and a NaN gives 0, where C's conversion would be
/// undefined.
constexpr std::int8_t q8_of(float x) noexcept {
  if (!(x >= -127.5f && x <= 127.5f)) return x > 0.0f ? 127 : x < 0.0f ? -127 : 0;
  const auto t = static_cast<float>(static_cast<int>(x));  // truncation; x - t is exact
  const float fraction = x - t;
  const float rounded = fraction >= 0.5f ? t + 1.0f : fraction <= -0.5f ? t - 1.0f : t;
  return static_cast<std::int8_t>(rounded > 127.0f ? 127.0f : rounded < -127.0f ? -127.0f : rounded);
}
}  // namespace MHA_DETAIL_ISA
}  // namespace detail

/// One Q8_0 block of x[0..31] (x points to 32 floats), bit for bit as
/// ggml's reference quantizer (`quantize_row_q8_0_ref` in ggml-quants.c, the
/// one that writes GGUF files; not ggml-cpu's vectorised `quantize_row_q8_0`,
/// which multiplies by 127 / amax and rounds halves to even) where float
/// arithmetic is IEEE single precision in the default environment
/// (FLT_EVAL_METHOD 0, round to nearest, no flush to zero, no -ffast-math:
/// every target of the library, and constant evaluation): amax = max |x[j]|
/// (float), d = amax / 127 (float), id = 1 / d (0 when d is 0), qs[j] =
/// roundf(x[j] * id) (halves away from zero), and the stored scale is d
/// rounded to binary16 (to_f16).
/// Preconditions: the 32 values are finite, and their max |x| is 0 or at
/// least 2^-120 (a safe bound: 1 / d overflows a little below 2^-121).
/// Outside them every quant is still defined (detail::q8_of: clamped to
/// +-127, a NaN product gives 0; a NaN value also makes amax, by ggml's MAX,
/// the max of the values after it, or NaN when it is last, and then every
/// quant 0), where ggml's conversion is undefined. From max |x| = 65520 *
/// 127 up, d rounds to a binary16 infinity and the block dequantizes to
/// infinities and NaNs, as ggml's does.
MHA_DETAIL_ISA_TAG constexpr q8_0_block quantize_q8_0(const float* x) noexcept {
  float amax = 0.0f;
  for (std::size_t j = 0; j < q8_0_block::block_size; ++j) {
    const auto a = std::bit_cast<float>(std::bit_cast<std::uint32_t>(x[j]) & 0x7FFFFFFFu);  // fabsf
    amax = amax > a ? amax : a;  // ggml's MAX(amax, fabsf(v))
  }
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  q8_0_block block{to_f16(d), {}};
  for (std::size_t j = 0; j < q8_0_block::block_size; ++j)
    block.qs[j] = detail::q8_of(x[j] * id);
  return block;
}

/// x[0..k-1] (k floats) as k / 32 Q8_0 blocks y[0..k/32-1] (quantize_q8_0
/// on each 32 consecutive values: ggml's `quantize_row_q8_0_ref`, same
/// argument order). Preconditions: k a multiple of 32 (MHA_ASSERT), those
/// of quantize_q8_0 for each block.
MHA_DETAIL_ISA_TAG constexpr void quantize_row_q8_0(const float* x, q8_0_block* y,
                                                    std::size_t k) noexcept {
  MHA_ASSERT(k % q8_0_block::block_size == 0);
  for (std::size_t b = 0; b < k / q8_0_block::block_size; ++b)
    y[b] = quantize_q8_0(x + b * q8_0_block::block_size);
}

/// The k weights (k floats, 32 per block) of the blocks x[0..k/32-1] into
/// y[0..k-1]: y[32 b + j] = float(qs[j]) * to_float(d) in float, as ggml's
/// `dequantize_row_q8_0` (same argument order). Precondition: k a multiple
/// of 32 (MHA_ASSERT).
MHA_DETAIL_ISA_TAG constexpr void dequantize_row_q8_0(const q8_0_block* x, float* y,
                                                      std::size_t k) noexcept {
  MHA_ASSERT(k % q8_0_block::block_size == 0);
  for (std::size_t b = 0; b < k / q8_0_block::block_size; ++b) {
    const float d = to_float(x[b].d);
    for (std::size_t j = 0; j < q8_0_block::block_size; ++j)
      y[b * q8_0_block::block_size + j] = static_cast<float>(x[b].qs[j]) * d;
  }
}

}  // namespace mha

#include <mha/detail/macros_undef.hpp>

#endif  // MHA_DETAIL_NO_CXX20
