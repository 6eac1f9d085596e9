#!/usr/bin/env python3
"""Write the seed corpora of the fuzz targets. Standard library only:

    python3 test/fuzz/make_corpus.py

test/fuzz/corpus/ (fuzz_safetensors): the PyTorch-written files in
test/data/safetensors/ plus a few malformed ones, each seed one selector byte
(model/format/options, see fuzz_safetensors.cpp) + a file.

test/fuzz/corpus_dynamic/ (fuzz_dynamic): one program per element type x
module kind x (compile-time shape or sizes from the input), the head byte
as fuzz_dynamic.cpp reads it followed by deterministic pseudo-random bytes
(sizes, then calls)."""
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "safetensors")
OUT = os.path.join(HERE, "corpus")

SEEDS = [  # (selector, file)
    (0, "book_mha_f32"), (0, "book_mha_f16"), (0, "book_mha_bf16"), (1, "book_wrapper_bias_f32"),
    (2, "book_ca_f32"), (3, "torch_mha_f32"), (4, "torch_mha_bf16"), (5, "gpt2_f16"),
    (6, "gpt2_f32"), (7, "book_mha_f32"), (8, "book_mha_f64"), (9, "book_mha_nobias_f32"),
    (0x40 | 5, "gpt2_f16"), (0x80, "book_mha_bf16"), (10, "neox_f32"), (11, "neox_f64"),
    (0x10 | 10, "neox_f32"), (0x20 | 3, "torch_mha_f32"),
]


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.remove(os.path.join(OUT, f))
    for sel, name in SEEDS:
        with open(os.path.join(DATA, name + ".safetensors"), "rb") as f:
            raw = f.read()
        with open(os.path.join(OUT, f"{sel:02x}_{name}"), "wb") as f:
            f.write(bytes([sel]) + raw)
    small = {
        "empty": b"",
        "short": b"\x05\x00\x00",
        "huge_len": struct.pack("<Q", 1 << 62) + b"{}",
        "not_object": struct.pack("<Q", 2) + b"[]",
        "dup": (lambda h: struct.pack("<Q", len(h)) + h + b"\0" * 4)(
            b'{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
            b'"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'),
        "bom": (lambda h: struct.pack("<Q", len(h)) + h)(b'\xef\xbb\xbf{}'),
        "meta": (lambda h: struct.pack("<Q", len(h)) + h)(
            b'{"__metadata__":{"num_heads":"4","qkv_layout":"contiguous","qkv_bias":"true"}}'),
    }
    for name, raw in small.items():
        with open(os.path.join(OUT, "00_" + name), "wb") as f:
            f.write(b"\x00" + raw)
    print(f"wrote {len(os.listdir(OUT))} seeds to {os.path.relpath(OUT)}")
    write_dynamic()


def write_dynamic():
    out = os.path.join(HERE, "corpus_dynamic")
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        os.remove(os.path.join(out, f))
    rng = random.Random(2024)
    names = {0: "causal", 1: "wrapper", 2: "mha"}
    for double in (0, 1):
        for kind in (0, 1, 2):
            for fixed in (0, 1):
                head = double | (kind << 1) | (fixed << 3) | (rng.randrange(16) << 4)
                if fixed:
                    body = []
                else:  # sizes: d_in, d_out, context_length, num_heads (all valid), qkv_bias
                    body = [1 + rng.randrange(8), 6, 1 + rng.randrange(9), 2, rng.randrange(2)]
                body = [rng.randrange(256)] + body + [rng.randrange(256) for _ in range(160)]
                name = f"{'f64' if double else 'f32'}_{names[kind]}_{'fixed' if fixed else 'sizes'}"
                with open(os.path.join(out, name), "wb") as f:
                    f.write(bytes([head] + body))
    print(f"wrote {len(os.listdir(out))} seeds to {os.path.relpath(out)}")


if __name__ == "__main__":
    main()
