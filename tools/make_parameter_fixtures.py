#!/usr/bin/env python3
"""Generate the named-parameter fixture of the C++ "mha" library.

Run with Debian's python3 (which provides PyTorch):

    /usr/bin/python3 tools/make_parameter_fixtures.py

Writes ``test/data/parameters/parameters.json``: for each case, PyTorch's
``named_parameters()`` of the reference class (names, shapes, in order), the
flat parameter vector ``torch.cat([p.flatten() for p in m.parameters()])``,
and an input/output pair of the module. test/test_parameters.cpp walks the
mha modules (fixed-size and mha::dynamic) and compares names, order and
shapes, fills them with ``mha::load_parameters`` from the flat vector and
compares the forward with PyTorch's output. The book's classes come from
``tools/reference_modules.py``; the fused module is compared with
``torch.nn.MultiheadAttention`` (batch_first, causal attn_mask). Values are
float32 (exact in the JSON's doubles). Dependencies: torch + stdlib only.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

from reference_modules import (  # noqa: E402
    CausalAttention,
    MultiHeadAttention,
    MultiHeadAttentionWrapper,
)

REPO = os.path.dirname(HERE)
OUT = os.path.join(REPO, "test", "data", "parameters", "parameters.json")
SCRIPT = "tools/make_parameter_fixtures.py"
SEED = 4242

# name, module, d_in, d_out, context_length, num_heads, qkv_bias, batch, tokens
CASES = [
    ("ca", "causal_attention", 3, 2, 6, 1, False, 2, 4),
    ("ca_bias", "causal_attention", 5, 4, 6, 1, True, 1, 5),
    ("wrap_bias", "multi_head_attention_wrapper", 4, 2, 5, 3, True, 2, 3),
    ("mha", "multi_head_attention", 6, 4, 7, 2, False, 2, 5),
    ("mha_bias", "multi_head_attention", 3, 6, 5, 3, True, 1, 4),
    ("fused_bias", "fused_multi_head_attention", 8, 8, 6, 2, True, 2, 6),
]


class FusedReference(nn.Module):
    """torch.nn.MultiheadAttention as a causal self-attention (x -> context)."""

    def __init__(self, d, context_length, num_heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, num_heads, dropout=0.0, bias=True, batch_first=True)
        self.context_length = context_length

    def forward(self, x):
        n = x.shape[1]
        mask = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
        out, _ = self.attn(x, x, x, attn_mask=mask, need_weights=False)
        return out


def build(module, d_in, d_out, ctx, heads, bias):
    if module == "causal_attention":
        return CausalAttention(d_in, d_out, ctx, 0.0, qkv_bias=bias)
    if module == "multi_head_attention_wrapper":
        return MultiHeadAttentionWrapper(d_in, d_out, ctx, 0.0, heads, qkv_bias=bias)
    if module == "multi_head_attention":
        return MultiHeadAttention(d_in, d_out, ctx, 0.0, heads, qkv_bias=bias)
    assert d_in == d_out and bias
    return FusedReference(d_in, ctx, heads)


def main():
    torch.manual_seed(SEED)
    cases = []
    for name, module, d_in, d_out, ctx, heads, bias, batch, tokens in CASES:
        m = build(module, d_in, d_out, ctx, heads, bias).eval()
        with torch.no_grad():
            for p in m.parameters():  # nonzero biases too (nn.MultiheadAttention zeroes them)
                p.copy_(torch.empty_like(p).uniform_(-0.8, 0.8))
        inner = m.attn if module == "fused_multi_head_attention" else m
        named = list(inner.named_parameters())
        x = torch.empty(batch, tokens, d_in).uniform_(-1.0, 1.0)
        with torch.no_grad():
            y = m(x)
        flat = torch.cat([p.detach().flatten() for _, p in named])
        cases.append({
            "name": name,
            "module": module,
            "d_in": d_in, "d_out": d_out, "context_length": ctx,
            "num_heads": heads, "qkv_bias": bias,
            "batch": batch, "tokens": tokens,
            "names": [n for n, _ in named],
            "shapes": [list(p.shape) for _, p in named],
            "flat": [float(v) for v in flat.tolist()],
            "input": [float(v) for v in x.flatten().tolist()],
            "output": [float(v) for v in y.flatten().tolist()],
            "output_shape": list(y.shape),
        })
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"generator": SCRIPT, "torch": torch.__version__, "seed": SEED, "cases": cases},
                  f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {os.path.relpath(OUT, REPO)} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
