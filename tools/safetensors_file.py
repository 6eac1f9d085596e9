#!/usr/bin/env python3
"""A small safetensors reader/writer on top of torch + the standard library.

python3-safetensors is not packaged for Debian, so the generators write the
format themselves. The format (https://github.com/huggingface/safetensors):

    8 bytes   little-endian u64 N, the length of the JSON header
    N bytes   UTF-8 JSON object: {"name": {"dtype": "F32", "shape": [2, 3],
              "data_offsets": [begin, end]}, ..., "__metadata__": {str: str}}
              (padded with spaces to a multiple of 8 bytes, like the Rust writer)
    rest      the data section; each tensor's bytes, row-major, little-endian,
              at [begin, end) relative to the start of the data section.

Tensors are laid out in the order given, without gaps, as required by the
format (the data section is covered exactly once).
"""

import json
import os
import struct

import torch

DTYPES = {
    torch.float64: "F64",
    torch.float32: "F32",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.bool: "BOOL",
    torch.uint8: "U8",
    torch.int8: "I8",
    torch.int16: "I16",
    torch.int32: "I32",
    torch.int64: "I64",
}
TORCH_DTYPES = {v: k for k, v in DTYPES.items()}


def tensor_bytes(t):
    """Raw little-endian row-major bytes of a tensor (any dtype in DTYPES)."""
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    if t.dtype == torch.bool:
        t = t.to(torch.uint8)
    return t.numpy().tobytes() if t.numel() else b""


def encode(tensors, metadata=None):
    """Bytes of a safetensors file holding `tensors` (dict name -> tensor)."""
    header = {}
    chunks = []
    offset = 0
    for name, t in tensors.items():
        data = tensor_bytes(t)
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def save(path, tensors, metadata=None):
    with open(path, "wb") as f:
        f.write(encode(tensors, metadata))


def save_checked(path, tensors, metadata):
    """save, then read the file back: the same metadata, names in the same order, and every
    tensor with the same dtype and values (a generator's self-check); prints what it wrote."""
    save(path, tensors, metadata)
    back, back_meta = load(path)
    assert back_meta == metadata and list(back) == list(tensors), path
    for k, v in tensors.items():
        assert back[k].dtype == v.dtype and torch.equal(back[k], v), (path, k)
    print(f"wrote {os.path.basename(path)}: {sorted(tensors)}")


def load(path):
    """(dict name -> tensor, metadata) of a safetensors file (for self-checks)."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    metadata = header.pop("__metadata__", {})
    out = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        dtype = TORCH_DTYPES[info["dtype"]]
        chunk = bytearray(data[begin:end])
        if dtype == torch.bfloat16:
            t = torch.frombuffer(chunk, dtype=torch.int16).view(torch.bfloat16)
        elif dtype == torch.bool:
            t = torch.frombuffer(chunk, dtype=torch.uint8).to(torch.bool)
        elif len(chunk) == 0:
            t = torch.empty(0, dtype=dtype)
        else:
            t = torch.frombuffer(chunk, dtype=dtype)
        out[name] = t.reshape(info["shape"]).clone()
    return out, metadata
