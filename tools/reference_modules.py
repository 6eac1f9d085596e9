#!/usr/bin/env python3
"""Reference PyTorch attention modules (chapter 3 of Raschka's
"Build a Large Language Model From Scratch"), re-implemented from the book's
semantics for generating reference data for the C++ "mha" library.

Run with Debian's python3 (``/usr/bin/python3``), which provides PyTorch; the
pyenv ``python3`` on PATH has no torch. Dependencies: torch + stdlib only.

Every module takes an optional ``causal=True`` (not in the book): ``False``
drops the causal mask (non-causal, encoder-style self-attention); the default
is the book's behaviour and the state_dict is the same either way.

Running this file directly performs the book's sanity checks.
"""

import torch
import torch.nn as nn


class CausalAttention(nn.Module):
    """Single-head causal self-attention (book section 3.5). causal=False
    (not in the book) drops the mask: non-causal (encoder) self-attention;
    the mask buffer stays, so the state_dict is the same."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False, causal=True):
        super().__init__()
        self.d_out = d_out
        self.causal = causal
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
        if self.causal:
            scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)
        weights = self.dropout(weights)
        return weights @ values


class MultiHeadAttentionWrapper(nn.Module):
    """Stack of independent CausalAttention heads, outputs concatenated (3.6.1);
    causal=False: every head non-causal."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False,
                 causal=True):
        super().__init__()
        self.heads = nn.ModuleList(
            [
                CausalAttention(d_in, d_out, context_length, dropout, qkv_bias, causal)
                for _ in range(num_heads)
            ]
        )

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


class MultiHeadAttention(nn.Module):
    """Multi-head attention with weight splits and output projection (3.6.2);
    causal=False (not in the book) drops the mask, the buffer stays."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False,
                 causal=True):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.causal = causal
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
        if self.causal:
            scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = torch.softmax(scores / self.head_dim ** 0.5, dim=-1)
        weights = self.dropout(weights)
        context = (weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context)


def compute_rope_params(head_dim, theta_base=10_000, context_length=4096, dtype=torch.float32):
    """RoPE tables cos, sin [context_length][head_dim] as the book's Llama
    chapter (ch05/07_gpt_to_llama) defines them: inv_freq is float32 (the
    book's ``.float()``) whatever ``dtype`` is; positions are in ``dtype``;
    angles = positions[:, None] * inv_freq[None, :] (type promotion: the wider
    of the two), duplicated along the last axis."""
    assert head_dim % 2 == 0, "head_dim must be even for RoPE"
    inv_freq = 1.0 / (theta_base ** (torch.arange(0, head_dim, 2, dtype=dtype)[: head_dim // 2].float()
                                     / head_dim))
    positions = torch.arange(context_length, dtype=dtype)
    angles = positions[:, None] * inv_freq[None, :]
    angles = torch.cat([angles, angles], dim=1)
    return torch.cos(angles), torch.sin(angles)


def apply_rope(x, cos, sin, offset=0):
    """Rotates x [batch][heads][tokens][head_dim] by the rows offset ..
    offset + tokens - 1 of cos / sin (the book's apply_rope; offset = 0 there,
    the position of the first token in the book's KV-cache variant):
    x * cos + cat(-x2, x1) * sin with x1, x2 the two halves of the last axis."""
    _, _, seq_len, head_dim = x.shape
    assert head_dim % 2 == 0, "head_dim must be even for RoPE"
    x1 = x[..., : head_dim // 2]
    x2 = x[..., head_dim // 2:]
    cos = cos[offset:offset + seq_len, :].unsqueeze(0).unsqueeze(0)
    sin = sin[offset:offset + seq_len, :].unsqueeze(0).unsqueeze(0)
    rotated = torch.cat((-x2, x1), dim=-1)
    x_rotated = (x * cos) + (rotated * sin)
    return x_rotated.to(dtype=x.dtype)


class GroupedQueryAttention(nn.Module):
    """Grouped-query attention of the book's Llama 3 code (LLMs-from-scratch,
    ch05/07_gpt_to_llama): num_kv_groups key/value heads, query head h reads
    kv group h // (num_heads // num_kv_groups); RoPE on queries and keys when
    rope_theta_base > 0 (0 = no RoPE). The book has no biases (qkv_bias and
    out_proj_bias False); both are options here. Unlike the book, the causal
    mask and the cos / sin tables are buffers of the module (cos / sin not
    persistent, so not in the state_dict), made in ``dtype``; construct the
    module in its final dtype (``.to()`` would convert float32 tables).
    causal=False (not in the book) drops the mask (the buffer stays)."""

    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups,
                 rope_theta_base=10_000, qkv_bias=False, out_proj_bias=False, dtype=None,
                 causal=True):
        super().__init__()
        self.causal = causal
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        assert num_heads % num_kv_groups == 0, "num_heads must be divisible by num_kv_groups"
        self.d_out = d_out
        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.group_size = num_heads // num_kv_groups
        self.head_dim = d_out // num_heads
        self.rope_theta_base = rope_theta_base
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias, dtype=dtype)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias, dtype=dtype)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias, dtype=dtype)
        self.out_proj = nn.Linear(d_out, d_out, bias=out_proj_bias, dtype=dtype)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )
        if rope_theta_base > 0:
            cos, sin = compute_rope_params(self.head_dim, rope_theta_base, context_length,
                                           dtype=dtype if dtype is not None else torch.float32)
            self.register_buffer("cos", cos, persistent=False)
            self.register_buffer("sin", sin, persistent=False)

    def rope(self, t, offset=0):
        """t [b][heads][n][head_dim] rotated for positions offset.., or t without RoPE."""
        if self.rope_theta_base <= 0:
            return t
        assert self.cos.dtype == t.dtype, "construct the module in its dtype (RoPE tables)"
        return apply_rope(t, self.cos, self.sin, offset)

    def attend(self, queries, keys, values, mask_bool):
        """queries [b][heads][n][hd], keys / values [b][kv][n_k][hd] -> [b][n][d_out];
        mask_bool None: no mask."""
        b, _, num_tokens, _ = queries.shape
        keys = keys.repeat_interleave(self.group_size, dim=1)
        values = values.repeat_interleave(self.group_size, dim=1)
        scores = queries @ keys.transpose(2, 3)
        if mask_bool is not None:
            scores = scores.masked_fill(mask_bool, -torch.inf)
        weights = torch.softmax(scores / self.head_dim ** 0.5, dim=-1)
        context = (weights @ values).transpose(1, 2).reshape(b, num_tokens, self.d_out)
        return self.out_proj(context)

    def forward(self, x):
        b, num_tokens, _ = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim)
        keys = self.W_key(x).view(b, num_tokens, self.num_kv_groups, self.head_dim)
        values = self.W_value(x).view(b, num_tokens, self.num_kv_groups, self.head_dim)
        queries = self.rope(queries.transpose(1, 2))
        keys = self.rope(keys.transpose(1, 2))
        values = values.transpose(1, 2)
        return self.attend(queries, keys, values,
                           self.mask.bool()[:num_tokens, :num_tokens] if self.causal else None)


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


def _gqa_sanity():
    """GroupedQueryAttention with num_kv_groups == num_heads and no RoPE is
    MultiHeadAttention (same weights); RoPE keeps position 0 and norms."""
    ok = True
    torch.manual_seed(123)
    for dtype in (torch.float32, torch.float64):
        mha = MultiHeadAttention(8, 12, 10, 0.0, num_heads=3, qkv_bias=True).to(dtype).eval()
        gqa = GroupedQueryAttention(8, 12, 10, 3, 3, rope_theta_base=0, qkv_bias=True,
                                    out_proj_bias=True, dtype=dtype).eval()
        with torch.no_grad():
            for name in ("W_query", "W_key", "W_value", "out_proj"):
                getattr(gqa, name).weight.copy_(getattr(mha, name).weight)
                getattr(gqa, name).bias.copy_(getattr(mha, name).bias)
            x = torch.rand(2, 7, 8, dtype=dtype)
            diff = float((gqa(x) - mha(x)).abs().max())
        good = diff <= (1e-6 if dtype == torch.float32 else 1e-14)
        ok &= good
        print(f"{'OK  ' if good else 'FAIL'} GroupedQueryAttention(kv = heads, no RoPE) == "
              f"MultiHeadAttention ({dtype}): max |diff| {diff:.3g}")
    cos, sin = compute_rope_params(6, 10_000, 5, dtype=torch.float64)
    x = torch.rand(1, 2, 5, 6, dtype=torch.float64)
    y = apply_rope(x, cos, sin)
    x1, x2, y1, y2 = x[..., :3], x[..., 3:], y[..., :3], y[..., 3:]
    good = (torch.equal(y[:, :, 0], x[:, :, 0])
            and torch.allclose(y1 ** 2 + y2 ** 2, x1 ** 2 + x2 ** 2, rtol=1e-12, atol=0)
            and compute_rope_params(6, 10_000, 5, dtype=torch.float64)[0].dtype == torch.float64)
    ok &= good
    print(f"{'OK  ' if good else 'FAIL'} apply_rope: position 0 unchanged, pair norms kept")
    return ok


def _noncausal_sanity():
    """causal=False: MultiHeadAttention(E, E, ...) is torch.nn.MultiheadAttention
    (no mask, batch_first) with W_query / W_key / W_value the row blocks of
    in_proj_weight; the last query row attends every key in both modes."""
    torch.manual_seed(123)
    ok = True
    for dtype in (torch.float32, torch.float64):
        book = MultiHeadAttention(8, 8, 6, 0.0, num_heads=2, qkv_bias=True, causal=False)
        book = book.to(dtype).eval()
        causal = MultiHeadAttention(8, 8, 6, 0.0, num_heads=2, qkv_bias=True).to(dtype).eval()
        causal.load_state_dict(book.state_dict())
        ref = nn.MultiheadAttention(8, 2, bias=True, batch_first=True, dtype=dtype).eval()
        with torch.no_grad():
            for i, name in enumerate(("W_query", "W_key", "W_value")):
                ref.in_proj_weight[8 * i:8 * (i + 1)].copy_(getattr(book, name).weight)
                ref.in_proj_bias[8 * i:8 * (i + 1)].copy_(getattr(book, name).bias)
            ref.out_proj.weight.copy_(book.out_proj.weight)
            ref.out_proj.bias.copy_(book.out_proj.bias)
            x = torch.rand(2, 6, 8, dtype=dtype)
            y = book(x)
            diff = float((y - ref(x, x, x, need_weights=False)[0]).abs().max())
            last = float((y[:, -1] - causal(x)[:, -1]).abs().max())
        tol = 1e-6 if dtype == torch.float32 else 1e-14
        good = diff <= tol and last <= tol and not torch.allclose(y, causal(x))
        ok &= good
        print(f"{'OK  ' if good else 'FAIL'} MultiHeadAttention(causal=False) == "
              f"nn.MultiheadAttention ({dtype}): max |diff| {diff:.3g}, last row {last:.3g}")
    return ok


if __name__ == "__main__":
    raise SystemExit(0 if (_sanity() & _gqa_sanity() & _noncausal_sanity()) else 1)
