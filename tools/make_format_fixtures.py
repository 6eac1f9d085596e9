#!/usr/bin/env python3
"""Generate the number-format fixtures of <mha/formats.hpp>: float32 to IEEE
binary16 and to bfloat16 as PyTorch rounds them, and ggml's Q8_0 blocks as its
reference quantizer makes them, for test/test_formats.cpp.

Run from anywhere with Debian's python3 (which provides PyTorch; the pyenv
``python3`` on PATH has no torch):

    /usr/bin/python3 tools/make_format_fixtures.py

Writes ``test/data/formats/formats.json`` and its README.md. Dependencies:
torch + stdlib. Every number is stored as the hex string of its bits.

* ``f16`` / ``bf16``: pairs [float32 bits, bits of ``x.half()`` /
  ``x.to(torch.bfloat16)``] for the edge values below (the overflow and
  subnormal thresholds, ties to even) and seeded random bit patterns (whole
  exponent range; patterns whose dropped bits are exactly a tie). NaN inputs
  are left out: PyTorch's scalar and vector paths give different NaN bits,
  and the library's NaN rule (quiet, sign and payload kept) is checked by the
  C++ test itself.
* ``q8_0``: blocks of 32 float32 inputs with ggml's ``quantize_row_q8_0_ref``
  computed in PyTorch float32 arithmetic (amax = max |x|, d = amax / 127,
  id = 1 / d or 0, x * id) and C's roundf (halves away from zero, evaluated
  exactly in float64), the scale stored as ``d.half()``; with the dequantized
  values ``float(q) * float(d16)``. Blocks: N(0, 0.02) (GPT-2's init), U(-1, 1),
  exact halves (d = 1), zeros, negative zeros, one nonzero value, subnormal
  and huge magnitudes, half-grid blocks ((k + 1/2) * s, products within an
  ulp of a half) and three blocks found to separate ggml's operations from
  near-equivalents.
"""

import json
import os
import struct

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "..", "test", "data", "formats")
SEED = 20261207


def floats_of(bits):
    """float32 tensor whose elements have the given uint32 bit patterns."""
    raw = struct.pack("<%dI" % len(bits), *bits)
    return torch.frombuffer(bytearray(raw), dtype=torch.float32).clone()


def bits_of(t, width):
    """The bit patterns of a float32 (width 32) or 16-bit float tensor, as ints."""
    if width == 16:
        t = t.view(torch.int16)  # (numpy has no bfloat16)
    raw = t.contiguous().numpy().tobytes()
    return list(struct.unpack("<%d%s" % (t.numel(), {32: "I", 16: "H"}[width]), raw))


def hex32(v):
    return "0x%08x" % v


def hex16(v):
    return "0x%04x" % v


EDGE_BITS = [
    0x00000000, 0x80000000,              # +-0
    0x3F800000, 0xBF800000,              # +-1
    0x477FE000, 0x477FE001, 0x477FEFFF,  # 65504, above it, just below 65520
    0x477FF000, 0xC77FF000,              # +-65520: ties to infinity (f16)
    0x47800000, 0x7F7FFFFF, 0xFF7FFFFF,  # 65536, +-FLT_MAX
    0x7F800000, 0xFF800000,              # +-inf
    0x38800000, 0x387FFFFF, 0x387FE000,  # 2^-14, just below, the tie (2^-14 - 2^-25) up to 2^-14
    0x387FDFFF, 0x387FF000,              # just below that tie (a subnormal), above it
    0x33800000, 0x33000000, 0x33000001,  # 2^-24, 2^-25 (ties to 0), just above
    0x33400000, 0x32800000, 0xB3000000,  # 3 * 2^-26, 2^-26, -2^-25
    0x34000000, 0x34400000, 0x34200000,  # 2^-23, 3 * 2^-24 (tie, odd), 5 * 2^-25
    0x00000001, 0x807FFFFF, 0x00800000,  # float subnormals, FLT_MIN
    0x3F801000, 0x3F803000, 0x3F801001,  # f16 ties at 1: to even down, to even up, above
    0x3F808000, 0x3F818000, 0x3F808001,  # bf16 ties at 1: down, up, above
    0x7F7F8000, 0x7F7F7FFF,              # bf16: the tie to infinity, just below
    0x00008000, 0x00018000,              # bf16 ties among float subnormals
]


def random_bits(gen, n):
    """n uint32 patterns that are not NaN: uniform over every exponent."""
    out = []
    while len(out) < n:
        v = int(torch.randint(0, 2 ** 32, (1,), generator=gen, dtype=torch.int64))
        if (v & 0x7FFFFFFF) <= 0x7F800000:
            out.append(v)
    return out


def near_half_range_bits(gen, n):
    """n patterns with exponents around binary16's range (2^-30 .. 2^20)."""
    out = []
    for _ in range(n):
        sign = int(torch.randint(0, 2, (1,), generator=gen)) << 31
        exponent = int(torch.randint(127 - 30, 127 + 21, (1,), generator=gen)) << 23
        mantissa = int(torch.randint(0, 1 << 23, (1,), generator=gen))
        out.append(sign | exponent | mantissa)
    return out


def tie_bits(pattern_bits, mask, gen, n):
    """n patterns whose bits under `mask` are exactly `pattern_bits` (a tie)."""
    return [(v & ~mask & 0xFFFFFFFF) | pattern_bits for v in near_half_range_bits(gen, n)]


def conversions(gen):
    inputs = (EDGE_BITS + random_bits(gen, 600) + near_half_range_bits(gen, 1200) +
              tie_bits(0x1000, 0x1FFF, gen, 200) + tie_bits(0x8000, 0xFFFF, gen, 200))
    x = floats_of(inputs)
    assert not torch.isnan(x).any()
    assert bits_of(x, 32) == inputs
    half_bits = bits_of(x.half(), 16)
    bf16_bits = bits_of(x.to(torch.bfloat16), 16)
    return ([[hex32(a), hex16(b)] for a, b in zip(inputs, half_bits)],
            [[hex32(a), hex16(b)] for a, b in zip(inputs, bf16_bits)])


def q8_0_reference(block, reciprocal_scale=False):
    """ggml's quantize_row_q8_0_ref on one block of 32 float32 values (a tensor);
    reciprocal_scale: d = amax * (1 / 127) instead (not ggml's: to find blocks
    that tell the two apart)."""
    assert block.dtype == torch.float32 and block.numel() == 32
    amax = block.abs().max()
    if reciprocal_scale:
        d = amax * (torch.tensor(1.0, dtype=torch.float32) / torch.tensor(127.0, dtype=torch.float32))
    else:
        d = amax / torch.tensor(127.0, dtype=torch.float32)
    d_is_zero = bool(d == 0)
    inv = torch.tensor(0.0, dtype=torch.float32) if d_is_zero else \
        torch.tensor(1.0, dtype=torch.float32) / d
    x0 = (block * inv).double()  # the float32 product, exactly
    q = (torch.sign(x0) * torch.floor(x0.abs() + 0.5)).to(torch.int8)  # roundf, then int8_t
    assert q.abs().max() <= 127
    d16 = d.half()
    y = q.float() * d16.float()  # (an int8 has no negative zero)
    return {
        "x": [hex32(v) for v in bits_of(block, 32)],
        "d": hex16(bits_of(d16.reshape(1), 16)[0]),
        "qs": [int(v) for v in q.tolist()],
        "y": [hex32(v) for v in bits_of(y, 32)],
    }


def q8_0_blocks(gen):
    blocks = []
    for _ in range(8):
        blocks.append(torch.randn(32, generator=gen, dtype=torch.float32) * 0.02)
    for _ in range(2):
        blocks.append(torch.rand(32, generator=gen, dtype=torch.float32) * 2 - 1)
    halves = [127.0] + [s * (k + 0.5) for k in range(0, 31, 2) for s in (1.0, -1.0)][:31]
    blocks.append(torch.tensor(halves, dtype=torch.float32))
    blocks.append(torch.zeros(32, dtype=torch.float32))
    blocks.append(-torch.zeros(32, dtype=torch.float32))
    one = torch.zeros(32, dtype=torch.float32)
    one[17] = -3.25
    blocks.append(one)
    blocks.append(torch.randn(32, generator=gen, dtype=torch.float32) * 1e-36)  # d rounds to 0 in binary16
    blocks.append(torch.randn(32, generator=gen, dtype=torch.float32) * 1e4)    # d above f16's max
    blocks.append(torch.randn(32, generator=gen, dtype=torch.float32) * 3e-6)   # d an f16 subnormal
    # Half-grid blocks: x = (k + 1/2) * s with x[0] = 127 s, so x * id lands
    # within an ulp of a half, where only ggml's exact operations (x * (1 / d),
    # not x / d; amax / 127, not amax * (1 / 127)) give its quants.
    for _ in range(8):
        s = float(torch.empty(1).uniform_(1e-3, 10.0, generator=gen))
        k = torch.randint(-127, 127, (32,), generator=gen).double() + 0.5
        k[0] = 127.0
        blocks.append((k * s).float())
    # two half-grid blocks where amax * (1 / 127) would give other quants or
    # another scale than amax / 127 (the first two such, searched in order)
    found = 0
    while found < 2:
        s = float(torch.empty(1).uniform_(1e-3, 10.0, generator=gen))
        k = torch.randint(-127, 127, (32,), generator=gen).double() + 0.5
        k[0] = 127.0
        x = (k * s).float()
        if q8_0_reference(x) != q8_0_reference(x, reciprocal_scale=True):
            blocks.append(x)
            found += 1
    # blocks found to tell those operations apart (and x87's excess precision)
    for pair in ((0x3FA28F5C, 0x3CCCCCCC), (0x3780AC8F, 0xB77A417F), (0x9740F98C, 0x16C70D80)):
        blocks.append(torch.cat([floats_of(list(pair)), torch.zeros(30, dtype=torch.float32)]))
    return [q8_0_reference(b) for b in blocks]


def main():
    gen = torch.Generator().manual_seed(SEED)
    f16, bf16 = conversions(gen)
    q8 = q8_0_blocks(gen)
    os.makedirs(OUT_DIR, exist_ok=True)
    doc = {
        "made_by": "tools/make_format_fixtures.py (torch %s, seed %d)" % (torch.__version__, SEED),
        "f16": f16,
        "bf16": bf16,
        "q8_0": q8,
    }
    with open(os.path.join(OUT_DIR, "formats.json"), "w") as f:  # one entry per line
        f.write("{\n" + ",\n".join(
            json.dumps(key) + ": " + (json.dumps(value) if isinstance(value, str) else
                                      "[\n" + ",\n".join(json.dumps(e) for e in value) + "\n]")
            for key, value in doc.items()) + "\n}\n")
    with open(os.path.join(OUT_DIR, "README.md"), "w") as f:
        f.write(README % {"n16": len(f16), "nq": len(q8), "torch": torch.__version__})
    print("wrote %d f16/bf16 pairs and %d q8_0 blocks" % (len(f16), len(q8)))


README = """# Number-format fixtures

Made by `/usr/bin/python3 tools/make_format_fixtures.py` (PyTorch %(torch)s); read by
test/test_formats.cpp. `formats.json`, every number the hex string of its bits:

- `f16`, `bf16`: %(n16)d pairs `[float32 bits, result bits]`, the result PyTorch's
  `x.half()` / `x.to(torch.bfloat16)` (round to nearest, ties to even): edge values (the
  binary16 overflow threshold 65520, the subnormal thresholds 2^-14, 2^-24, 2^-25, ties to
  even at 1.0, bfloat16's tie to infinity, float subnormals, infinities, zeros), random bit
  patterns over every exponent, patterns around binary16's range, and patterns whose dropped
  bits are exactly a tie. No NaN (PyTorch's scalar and vector paths differ there).
- `q8_0`: %(nq)d blocks (N(0, 0.02), U(-1, 1), exact halves, zeros, one value, tiny and
  huge scales, half-grid blocks whose products land within an ulp of a half, and three blocks
  that separate ggml's operations from near-equivalents) `{x: 32 float32, d: binary16 scale,
  qs: 32 quants, y: 32 dequantized float32}` as ggml's `quantize_row_q8_0_ref` makes them (float32 amax / 127, 1 / d, x * id,
  C's roundf; d stored as `d.half()`) and `dequantize_row_q8_0` reads them
  (`float(q) * float(d)`), computed with PyTorch float32 operations.
"""

if __name__ == "__main__":
    main()
