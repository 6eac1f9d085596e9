#!/usr/bin/env python3
"""Reference PyTorch attention modules (chapter 3 of Raschka's
"Build a Large Language Model From Scratch"), re-implemented from the book's
semantics for generating reference data for the C++ "mha" library.

Run with Debian's python3 (``/usr/bin/python3``), which provides PyTorch; the
pyenv ``python3`` on PATH has no torch. Dependencies: torch + stdlib only.

Running this file directly performs the book's sanity checks.
"""

import torch
import torch.nn as nn


class CausalAttention(nn.Module):
    """Single-head causal self-attention (book section 3.5)."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )

    def forward(self, x):
        _, num_tokens, _ = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        scores = queries @ keys.transpose(1, 2)
        scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)
        weights = self.dropout(weights)
        return weights @ values


class MultiHeadAttentionWrapper(nn.Module):
    """Stack of independent CausalAttention heads, outputs concatenated (3.6.1)."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [
                CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                for _ in range(num_heads)
            ]
        )

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


class MultiHeadAttention(nn.Module):
    """Multi-head attention with weight splits and output projection (3.6.2)."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )

    def forward(self, x):
        b, num_tokens, _ = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        def split(t):
            return t.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)

        keys, queries, values = split(keys), split(queries), split(values)
        scores = queries @ keys.transpose(2, 3)
        scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = torch.softmax(scores / self.head_dim ** 0.5, dim=-1)
        weights = self.dropout(weights)
        context = (weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context)


BOOK_INPUTS = [
    [0.43, 0.15, 0.89],  # Your
    [0.55, 0.87, 0.66],  # journey
    [0.57, 0.85, 0.64],  # starts
    [0.22, 0.58, 0.33],  # with
    [0.77, 0.25, 0.10],  # one
    [0.05, 0.80, 0.55],  # step
]


def book_batch():
    """Return (inputs [6,3], batch [2,6,3]) float32 tensors from the book."""
    inputs = torch.tensor(BOOK_INPUTS, dtype=torch.float32)
    batch = torch.stack((inputs, inputs), dim=0)
    return inputs, batch


def _sanity():
    _, batch = book_batch()
    checks = [
        ("CausalAttention(3, 2, 6, 0.0)",
         lambda: CausalAttention(3, 2, 6, 0.0), [-0.4519, 0.2216]),
        ("MultiHeadAttention(3, 2, 6, 0.0, num_heads=2)",
         lambda: MultiHeadAttention(3, 2, 6, 0.0, num_heads=2), [0.3190, 0.4858]),
        ("MultiHeadAttentionWrapper(3, 1, 6, 0.0, 2)",
         lambda: MultiHeadAttentionWrapper(3, 1, 6, 0.0, 2), [-0.5740, 0.2216]),
    ]
    ok = True
    for label, make, expected in checks:
        torch.manual_seed(123)
        module = make()
        with torch.no_grad():
            got = [round(float(v), 4) for v in module(batch)[0][0]]
        good = got == expected
        ok &= good
        print(f"{'OK  ' if good else 'FAIL'} {label}: {got} expected {expected}")
    return ok


if __name__ == "__main__":
    raise SystemExit(0 if _sanity() else 1)
