#!/usr/bin/env python3
"""Generate KV-cache reference fixtures for the C++ "mha" library.

Run from anywhere with Debian's python3 (which provides PyTorch; the pyenv
``python3`` on PATH has no torch):

    /usr/bin/python3 tools/make_kv_fixtures.py

Writes one JSON file per case into ``test/data/kv_cache/`` (stale ``*.json``
files there are deleted first). Dependencies: torch + stdlib only. The plain
modules come from ``tools/reference_modules.py``; the cached forwards below
follow the KV-cache bonus code of the book (LLMs-from-scratch,
ch04/03_kv-cache): each module keeps ``cache_k`` / ``cache_v`` of the earlier
tokens, concatenates the new keys and values along the token axis, and masks
the new query rows with the causal mask offset by the number of cached tokens.
The grouped-query attention (the book's Llama code) caches its kv groups'
keys after RoPE; new tokens take the positions after the cached ones.

Weights and inputs are not stored: they come from the splitmix64-based
generator below, which the C++ tests reproduce bit for bit
(test/kv_fixture.hpp). See ``test/data/kv_cache/README.md`` for the generator,
the schema and the case list.
"""

import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

from reference_modules import (  # noqa: E402
    CausalAttention,
    GroupedQueryAttention,
    MultiHeadAttention,
    MultiHeadAttentionWrapper,
)

REPO = os.path.dirname(HERE)
OUT_DIR = os.path.join(REPO, "test", "data", "kv_cache")
SCRIPT = "tools/make_kv_fixtures.py"
SEED_BASE = 2000
INPUT_STREAM = 1000
INPUT_SCALE_EXPONENT = 0

DTYPES = {"float32": torch.float32, "float64": torch.float64}
# Cached output against the plain forward over all tokens so far:
# |cached - plain| <= RTOL * max(1, |plain|).
RTOL = {"float32": 1e-5, "float64": 1e-12}
# float32 outputs against the same model evaluated in float64 (parameters and
# inputs are exactly representable in float32, so that is the same function):
# must stay within half of the C++ test's float tolerance (2e-6).
FLOAT32_VS_FLOAT64 = 1e-6


def A(k):
    return ("append", k)


def T(n):
    return ("truncate", n)


def gqa(num_kv_heads, rope_theta_base, out_proj_bias):
    """The extra constructor arguments of a grouped_query_attention case."""
    return {"num_kv_heads": num_kv_heads, "rope_theta_base": rope_theta_base,
            "out_proj_bias": out_proj_bias}


# name, module, dtype, d_in, d_out, context_length, num_heads, qkv_bias, batch, steps
# [, gqa(...) for grouped_query_attention]
CASES = [
    ("kv_mha_f32_gpt2", "multi_head_attention", "float32", 768, 768, 24, 12, False, 1,
     [A(5)] + [A(1)] * 19),
    ("kv_mha_f32_odd_bias", "multi_head_attention", "float32", 10, 9, 16, 3, True, 2,
     [A(3), A(1), A(1), A(4), T(6), A(1), A(3), A(1), A(1), A(4)]),
    ("kv_mha_f64_odd_bias", "multi_head_attention", "float64", 10, 9, 16, 3, True, 2,
     [A(3), A(1), A(1), A(4), T(6), A(1), A(3), A(1), A(1), A(4)]),
    ("kv_mha_f64_din64_h4", "multi_head_attention", "float64", 64, 64, 20, 4, False, 1,
     [A(7)] + [A(1)] * 13),
    ("kv_ca_f32_bias", "causal_attention", "float32", 6, 5, 12, 1, True, 2,
     [A(2), A(1), A(1), T(0), A(3), A(1), A(2), T(4), A(1), A(7)]),
    ("kv_ca_f64_bias", "causal_attention", "float64", 6, 5, 12, 1, True, 2,
     [A(2), A(1), A(1), T(0), A(3), A(1), A(2), T(4), A(1), A(7)]),
    ("kv_wrap_f32_bias", "multi_head_attention_wrapper", "float32", 7, 3, 12, 3, True, 2,
     [A(4), A(1), A(1), T(3), A(2), A(1), T(6), A(5), A(1)]),
    ("kv_wrap_f64_bias", "multi_head_attention_wrapper", "float64", 7, 3, 12, 3, True, 2,
     [A(4), A(1), A(1), T(3), A(2), A(1), T(6), A(5), A(1)]),
    ("kv_mha_f32_full_prefill", "multi_head_attention", "float32", 8, 6, 10, 2, True, 2,
     [A(10), T(9), A(1), T(5), A(5)]),
    ("kv_mha_f32_decode_from_empty", "multi_head_attention", "float32", 5, 4, 8, 2, False, 2,
     [A(1)] * 8),
    ("gqa_f32_h4_kv2_rope", "grouped_query_attention", "float32", 8, 16, 12, 4, False, 2,
     [A(5), A(1), A(1), A(3), T(4), A(1), A(4), A(1), A(2)], gqa(2, 10_000, False)),
    ("gqa_f64_h4_kv2_rope", "grouped_query_attention", "float64", 8, 16, 12, 4, False, 2,
     [A(5), A(1), A(1), A(3), T(4), A(1), A(4), A(1), A(2)], gqa(2, 10_000, False)),
    ("mqa_f32_h4_kv1_rope", "grouped_query_attention", "float32", 8, 16, 10, 4, True, 2,
     [A(3), A(1), A(2), T(0), A(2), A(1), T(2), A(4), A(1), A(3)], gqa(1, 10_000, True)),
    ("gqa_f32_h4_kv4_norope", "grouped_query_attention", "float32", 8, 16, 8, 4, True, 2,
     [A(4), A(1), T(3), A(2), A(1), A(2)], gqa(4, 0, True)),
    ("gqa_f32_h6_kv3_rope500000_odd", "grouped_query_attention", "float32", 12, 24, 16, 6, True,
     2, [A(6), A(1), A(1), A(2), T(5), A(3), A(1), A(4), A(3)], gqa(3, 500_000, True)),
    ("gqa_f32_h8_kv2_hd16", "grouped_query_attention", "float32", 64, 128, 40, 8, False, 1,
     [A(8)] + [A(1)] * 28, gqa(2, 10_000, False)),
]


def case_fields(case):
    """(name, module, dtype, d_in, d_out, ctx, heads, qkv_bias, batch, steps, extra):
    extra is the gqa(...) dict of a grouped_query_attention case, else None."""
    if len(case) == 10:
        return (*case, None)
    assert len(case) == 11 and case[1] == "grouped_query_attention", case[0]
    return tuple(case)

COVERS = {
    "kv_mha_f32_gpt2": "GPT-2 small layer shape (head_dim 64), prefill 5 then 19 single-token decode steps to the context length",
    "kv_mha_f32_odd_bias": "odd sizes (head_dim 3), bias, batch 2, prefill, decode, 4-token chunk, truncate to 6, 3- and 4-token chunks and decodes to the context length",
    "kv_mha_f64_odd_bias": "as kv_mha_f32_odd_bias in float64",
    "kv_mha_f64_din64_h4": "float64, head_dim 16, prefill 7 then decode to the context length",
    "kv_ca_f32_bias": "single head, bias, batch 2, truncate to 0 (= clear) and to 4, 7-token chunk to the context length",
    "kv_ca_f64_bias": "as kv_ca_f32_bias in float64",
    "kv_wrap_f32_bias": "wrapper (3 heads of width 3), bias, batch 2, truncate to 3, truncate to the current size (no-op), chunks to the context length",
    "kv_wrap_f64_bias": "as kv_wrap_f32_bias in float64",
    "kv_mha_f32_full_prefill": "the whole context in one step, truncate by one and re-decode the last position, truncate to 5 and refill in one step",
    "kv_mha_f32_decode_from_empty": "single-token steps from an empty cache up to the context length",
    "gqa_f32_h4_kv2_rope": "the book's Llama 3 configuration (no biases, theta 10000), 2 query heads per kv group, head_dim 4, prefill 5, decodes, a 3-token chunk on a non-empty cache, truncate to 4, chunks and decodes to the context length",
    "gqa_f64_h4_kv2_rope": "as gqa_f32_h4_kv2_rope in float64",
    "mqa_f32_h4_kv1_rope": "multi-query attention (one kv group for 4 heads), qkv and out_proj biases, truncate to 0 (= clear) and to 2, chunks to the context length",
    "gqa_f32_h4_kv4_norope": "kv groups = heads and no RoPE: the same function as multi_head_attention with the same parameters (checked by the generator), biases, truncate to 3",
    "gqa_f32_h6_kv3_rope500000_odd": "an odd number of kv groups (3, group size 2), head_dim 4 (RoPE needs an even head_dim), Llama 3's theta 500000, biases, truncate to 5, chunks to 16 of 16 positions",
    "gqa_f32_h8_kv2_hd16": "a larger layer (head_dim 16, group size 4), prefill 8 then 28 single-token decode steps to position 35 of a 40-token context",
}

# --------------------------------------------------------------------------
# The deterministic value generator (reproduced bit for bit in C++).

MASK64 = (1 << 64) - 1


def splitmix64(z):
    z = (z + 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


# dtype -> (right shift of z, bits of the mantissa integer m minus one)
VALUE_FORMAT = {"float32": (43, 20), "float64": (11, 52)}


def stream_values(seed, stream, count, dtype_name, scale_exponent):
    """Elements 0..count-1 of `stream` under `seed`, as exact Python floats.

    z = splitmix64(splitmix64(seed ^ stream) ^ i); m = z >> shift;
    v = (m - 2^frac) * 2^-(frac + scale_exponent).
    """
    shift, frac = VALUE_FORMAT[dtype_name]
    base = splitmix64((seed ^ stream) & MASK64)
    half = 1 << frac
    exponent = -(frac + scale_exponent)
    ldexp = math.ldexp
    return [ldexp((splitmix64(base ^ i) >> shift) - half, exponent) for i in range(count)]


def _check_generator():
    """Known values (also in test/data/kv_cache/README.md and test/test_kv_cache.cpp)."""
    assert splitmix64(0) == 0xE220A8397B1DCDAF
    assert [v.hex() for v in stream_values(2000, 0, 3, "float32", 5)] == [
        "-0x1.e187800000000p-6", "-0x1.8622400000000p-6", "0x1.1cd0e00000000p-6"]
    assert [v.hex() for v in stream_values(2002, 1000, 3, "float64", 0)] == [
        "0x1.487bab0447000p-3", "-0x1.f9bfafe186fa8p-1", "0x1.e6135eac4fff6p-1"]
    # extremes of m: -2^-e and 2^-e - ulp
    assert math.ldexp(0 - (1 << 20), -20) == -1.0
    assert math.ldexp(((1 << 21) - 1) - (1 << 20), -20) == 1.0 - 2.0 ** -20


def scale_exponent_for(fan_in):
    """ceil(log2(fan_in) / 2), i.e. the smallest e with 4^e >= fan_in."""
    e = 0
    while 4 ** e < fan_in:
        e += 1
    assert e == math.ceil(math.log2(fan_in) / 2), fan_in
    return e


# --------------------------------------------------------------------------
# Cached forwards, as in the book's ch04/03_kv-cache/gpt_with_kv_cache.py
# (cache_k / cache_v buffers, concatenation along the token axis, causal mask
# rows offset by ptr_current_pos = the number of cached tokens), plus
# truncate_cache(n): keep the first n cached tokens.


class KVCacheMixin:
    """cache_k / cache_v [batch][tokens][d_out] of one attention module (the
    book's buffers) and the cache operations the cached modules share."""

    def init_cache(self, context_length):
        self.context_length = context_length
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)
        self.ptr_current_pos = 0

    def with_cache(self, keys_new, values_new, use_cache):
        """The keys and values to attend to: with use_cache, keys_new and
        values_new ([batch][tokens][...]) appended to the cache along the
        token axis, then all of it; otherwise keys_new and values_new."""
        if not use_cache:
            return keys_new, values_new
        if self.ptr_current_pos + keys_new.shape[1] > self.context_length:
            raise ValueError("KV cache full")
        if self.cache_k is None:
            self.cache_k, self.cache_v = keys_new, values_new
        else:
            self.cache_k = torch.cat([self.cache_k, keys_new], dim=1)
            self.cache_v = torch.cat([self.cache_v, values_new], dim=1)
        return self.cache_k, self.cache_v

    def reset_cache(self):
        self.cache_k, self.cache_v = None, None
        self.ptr_current_pos = 0

    def truncate_cache(self, n):
        assert 0 <= n <= self.cache_size()
        if n == 0:
            self.reset_cache()
            return
        self.cache_k = self.cache_k[:, :n]
        self.cache_v = self.cache_v[:, :n]
        self.ptr_current_pos = n

    def cache_size(self):
        size = 0 if self.cache_k is None else self.cache_k.shape[1]
        assert size == self.ptr_current_pos
        return size


class CachedCausalAttention(KVCacheMixin, CausalAttention):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, qkv_bias)
        self.init_cache(context_length)

    def forward(self, x, use_cache=False):
        _, num_tokens, _ = x.shape
        keys_new = self.W_key(x)
        queries = self.W_query(x)
        values_new = self.W_value(x)
        keys, values = self.with_cache(keys_new, values_new, use_cache)
        scores = queries @ keys.transpose(1, 2)
        num_tokens_k = keys.shape[1]
        if use_cache:
            # query at absolute position p attends keys 0..p
            mask_bool = self.mask.bool()[
                self.ptr_current_pos:self.ptr_current_pos + num_tokens, :num_tokens_k]
            self.ptr_current_pos += num_tokens
        else:
            mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
        scores.masked_fill_(mask_bool, -torch.inf)
        weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)
        weights = self.dropout(weights)
        return weights @ values



class CachedMultiHeadAttentionWrapper(MultiHeadAttentionWrapper):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
        self.heads = nn.ModuleList(
            [
                CachedCausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                for _ in range(num_heads)
            ]
        )

    def forward(self, x, use_cache=False):
        return torch.cat([head(x, use_cache=use_cache) for head in self.heads], dim=-1)

    def reset_cache(self):
        for head in self.heads:
            head.reset_cache()

    def truncate_cache(self, n):
        for head in self.heads:
            head.truncate_cache(n)

    def cache_size(self):
        sizes = {head.cache_size() for head in self.heads}
        assert len(sizes) == 1
        return sizes.pop()


class CachedMultiHeadAttention(KVCacheMixin, MultiHeadAttention):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
        self.init_cache(context_length)

    def forward(self, x, use_cache=False):
        b, num_tokens, _ = x.shape
        keys_new = self.W_key(x)
        values_new = self.W_value(x)
        queries = self.W_query(x)
        # (b, num_tokens, d_out) -> (b, num_tokens, num_heads, head_dim)
        keys_new = keys_new.view(b, num_tokens, self.num_heads, self.head_dim)
        values_new = values_new.view(b, num_tokens, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)
        keys, values = self.with_cache(keys_new, values_new, use_cache)
        keys = keys.transpose(1, 2)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)
        scores = queries @ keys.transpose(2, 3)
        num_tokens_q = queries.shape[-2]
        num_tokens_k = keys.shape[-2]
        if use_cache:
            mask_bool = self.mask.bool()[
                self.ptr_current_pos:self.ptr_current_pos + num_tokens_q, :num_tokens_k]
            self.ptr_current_pos += num_tokens_q
        else:
            mask_bool = self.mask.bool()[:num_tokens_q, :num_tokens_k]
        scores.masked_fill_(mask_bool, -torch.inf)
        weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)
        weights = self.dropout(weights)
        context = (weights @ values).transpose(1, 2)
        context = context.contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context)



class CachedGroupedQueryAttention(KVCacheMixin, GroupedQueryAttention):
    """The cache holds the kv groups' keys AFTER RoPE and their values,
    [batch][tokens][num_kv_groups][head_dim] (as Hugging Face's and the book's
    Llama KV-cache code: keys are rotated once, at their absolute position).
    The new tokens take the positions cache_size_before .., so queries and
    keys use the cos / sin rows of those positions."""

    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups,
                 rope_theta_base=10_000, qkv_bias=False, out_proj_bias=False, dtype=None):
        super().__init__(d_in, d_out, context_length, num_heads, num_kv_groups,
                         rope_theta_base, qkv_bias, out_proj_bias, dtype)
        self.init_cache(context_length)

    def forward(self, x, use_cache=False):
        if not use_cache:
            return GroupedQueryAttention.forward(self, x)
        b, num_tokens, _ = x.shape
        start = self.ptr_current_pos
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim)
        keys_new = self.W_key(x).view(b, num_tokens, self.num_kv_groups, self.head_dim)
        values_new = self.W_value(x).view(b, num_tokens, self.num_kv_groups, self.head_dim)
        queries = self.rope(queries.transpose(1, 2), offset=start)
        keys_new = self.rope(keys_new.transpose(1, 2), offset=start).transpose(1, 2)
        keys, values = self.with_cache(keys_new, values_new, use_cache)
        num_tokens_k = keys.shape[1]
        # query at absolute position p attends keys 0..p
        mask_bool = self.mask.bool()[start:start + num_tokens, :num_tokens_k]
        self.ptr_current_pos += num_tokens
        return self.attend(queries, keys.transpose(1, 2), values.transpose(1, 2), mask_bool)


def construct(module, d_in, d_out, ctx, heads, bias, cached, extra=None, dtype=None):
    """The (cached) module of a case. grouped_query_attention is built in
    `dtype` (its RoPE tables depend on it); the others are converted by the
    caller."""
    if module == "grouped_query_attention":
        cls = CachedGroupedQueryAttention if cached else GroupedQueryAttention
        return cls(d_in, d_out, ctx, heads, extra["num_kv_heads"], extra["rope_theta_base"],
                   qkv_bias=bias, out_proj_bias=extra["out_proj_bias"], dtype=dtype)
    assert extra is None, module
    if module == "causal_attention":
        cls = CachedCausalAttention if cached else CausalAttention
        return cls(d_in, d_out, ctx, 0.0, qkv_bias=bias)
    if module == "multi_head_attention_wrapper":
        cls = CachedMultiHeadAttentionWrapper if cached else MultiHeadAttentionWrapper
        return cls(d_in, d_out, ctx, 0.0, heads, qkv_bias=bias)
    if module == "multi_head_attention":
        cls = CachedMultiHeadAttention if cached else MultiHeadAttention
        return cls(d_in, d_out, ctx, 0.0, heads, qkv_bias=bias)
    raise ValueError(module)


def out_width(module, d_out, heads):
    return heads * d_out if module == "multi_head_attention_wrapper" else d_out


def is_mask(key):
    return key == "mask" or key.endswith(".mask")


# --------------------------------------------------------------------------
# Parameters and inputs from the generator.


def parameter_plan(model):
    """[(name, shape, stream, scale_exponent)] in state_dict order, masks excluded."""
    sd = model.state_dict()
    plan = []
    for key, value in sd.items():
        if is_mask(key):
            continue
        if key.endswith(".weight"):
            fan_in = value.shape[1]
        elif key.endswith(".bias"):
            fan_in = sd[key[: -len("bias")] + "weight"].shape[1]
        else:
            raise ValueError(f"unexpected state_dict entry {key}")
        plan.append((key, list(value.shape), len(plan), scale_exponent_for(fan_in)))
    return plan


def fill_parameters(model, seed, dtype_name, plan):
    """Sets every parameter of `model` from its stream; checks biases are non-zero."""
    dtype = DTYPES[dtype_name]
    names = [k for k in model.state_dict() if not is_mask(k)]
    assert names == [p[0] for p in plan], (names, plan)
    with torch.no_grad():
        for name, shape, stream, e in plan:
            param = model.get_parameter(name)
            assert list(param.shape) == shape and param.dtype == dtype, (name, param.shape)
            count = math.prod(shape)
            values = torch.tensor(stream_values(seed, stream, count, dtype_name, e), dtype=dtype)
            param.copy_(values.reshape(shape))
            if name.endswith(".bias"):
                assert bool((param != 0).all()), (name, "zero bias")


def input_tokens(seed, dtype_name, batch, total, d_in):
    """The whole input stream x [batch][total][d_in]."""
    values = stream_values(seed, INPUT_STREAM, batch * total * d_in, dtype_name,
                           INPUT_SCALE_EXPONENT)
    return torch.tensor(values, dtype=DTYPES[dtype_name]).reshape(batch, total, d_in)


def make_model(module, dtype_name, seed, d_in, d_out, ctx, heads, bias, cached, extra=None):
    dtype = DTYPES[dtype_name]
    model = construct(module, d_in, d_out, ctx, heads, bias, cached, extra, dtype).to(dtype)
    model.eval()
    plan = parameter_plan(model)
    fill_parameters(model, seed, dtype_name, plan)
    return model, plan


def max_violation(actual, expected, rtol):
    """max over elements of |a - e| / (rtol * max(1, |e|)); > 1 means out of tolerance."""
    allowed = rtol * torch.clamp(expected.abs(), min=1.0)
    ratio = (actual - expected).abs() / allowed
    assert not bool(torch.isnan(ratio).any())
    return float(ratio.max())


# --------------------------------------------------------------------------


def run_steps(cached_model, x_all, steps, check=None):
    """Replays `steps` on `cached_model`; returns the step entries (with outputs).

    New tokens come from x_all through a cursor that only moves forward:
    append k takes the next k unused tokens of the stream, also after a
    truncate. `check(sequence, size_before, output)` is called after each
    append with the stream indices of every cached token.
    """
    cursor = 0
    sequence = []  # stream token index of every cached position
    entries = []
    with torch.no_grad():
        for op, value in steps:
            if op == "append":
                k = value
                size_before = len(sequence)
                assert cached_model.cache_size() == size_before
                y = cached_model(x_all[:, cursor:cursor + k], use_cache=True)
                sequence += list(range(cursor, cursor + k))
                assert cached_model.cache_size() == len(sequence)
                if check is not None:
                    check(sequence, size_before, y)
                entries.append({
                    "op": "append",
                    "first_token": cursor,
                    "tokens": k,
                    "cache_size_before": size_before,
                    "output": {
                        "shape": list(y.shape),
                        "data": [float(v) for v in y.reshape(-1).tolist()],
                    },
                })
                cursor += k
            elif op == "truncate":
                assert 0 <= value <= len(sequence), (value, len(sequence))
                cached_model.truncate_cache(value)
                sequence = sequence[:value]
                assert cached_model.cache_size() == value
                entries.append({"op": "truncate", "size": value})
            else:
                raise ValueError(op)
    assert cursor == x_all.shape[1]
    return entries


def make_case(index, case, report):
    name, module, dtype_name, d_in, d_out, ctx, heads, bias, batch, steps, extra = \
        case_fields(case)
    seed = SEED_BASE + index
    total = sum(v for op, v in steps if op == "append")
    width = out_width(module, d_out, heads)
    rtol = RTOL[dtype_name]

    plain, plan = make_model(module, dtype_name, seed, d_in, d_out, ctx, heads, bias, False,
                             extra)
    cached, plan_cached = make_model(module, dtype_name, seed, d_in, d_out, ctx, heads, bias,
                                     True, extra)
    assert plan == plan_cached
    for (k, a), (k2, b) in zip(plain.state_dict().items(), cached.state_dict().items()):
        assert k == k2 and torch.equal(a, b), k
    x_all = input_tokens(seed, dtype_name, batch, total, d_in)
    if dtype_name == "float32":
        # The same function in float64: every parameter and input is exact in both.
        plain64 = construct(module, d_in, d_out, ctx, heads, bias, False, extra,
                            torch.float64).double().eval()
        plain64.load_state_dict({k: v.double() for k, v in plain.state_dict().items()})
        x_all64 = x_all.double()
    if (extra is not None and extra["num_kv_heads"] == heads and extra["rope_theta_base"] == 0
            and extra["out_proj_bias"]):
        # kv groups = heads, no RoPE: MultiHeadAttention with the same state_dict.
        mha = MultiHeadAttention(d_in, d_out, ctx, 0.0, heads, qkv_bias=bias)
        mha = mha.to(DTYPES[dtype_name]).eval()
        mha.load_state_dict(plain.state_dict())
        with torch.no_grad():
            x = x_all[:, :min(ctx, total)]
            v = max_violation(plain(x), mha(x), rtol)
        if v > 1:
            raise SystemExit(f"{name}: differs from MultiHeadAttention ({v} x {rtol})")

    worst = {"cached_vs_plain": 0.0, "float32_vs_float64": 0.0}

    def check(sequence, size_before, y):
        assert y.dtype == DTYPES[dtype_name]
        assert list(y.shape) == [batch, len(sequence) - size_before, width]
        with torch.no_grad():
            ref = plain(x_all[:, sequence])[:, size_before:]
        v = max_violation(y, ref, rtol)
        worst["cached_vs_plain"] = max(worst["cached_vs_plain"], v)
        if v > 1:
            raise SystemExit(f"{name}: cached output differs from the plain forward "
                             f"({v} x the tolerance {rtol}); nothing more written")
        if dtype_name == "float32":
            with torch.no_grad():
                ref64 = plain64(x_all64[:, sequence])[:, size_before:]
            v64 = max_violation(y.double(), ref64, FLOAT32_VS_FLOAT64)
            worst["float32_vs_float64"] = max(worst["float32_vs_float64"], v64)
            if v64 > 1:
                raise SystemExit(f"{name}: float32 output differs from float64 by {v64} x "
                                 f"{FLOAT32_VS_FLOAT64}; nothing more written")

    entries = run_steps(cached, x_all, steps, check)
    report[name] = worst

    if extra is None:
        generated_by = (
            f"{SCRIPT} with torch {torch.__version__}: parameters and input tokens from the "
            f"splitmix64 stream generator of test/data/kv_cache/README.md with seed {seed}, "
            f"{type(plain).__name__}(d_in={d_in}, d_out={d_out}, context_length={ctx}, "
            f"dropout=0.0" + ("" if module == "causal_attention" else f", num_heads={heads}")
            + f", qkv_bias={bias}) from tools/reference_modules.py in {dtype_name} with the "
            f"book's ch04/03_kv-cache cached forward (plus truncate) in eval() mode under "
            f"torch.no_grad(), each output checked against the plain forward over all tokens "
            f"so far."
        )
    else:
        generated_by = (
            f"{SCRIPT} with torch {torch.__version__}: parameters and input tokens from the "
            f"splitmix64 stream generator of test/data/kv_cache/README.md with seed {seed}, "
            f"GroupedQueryAttention(d_in={d_in}, d_out={d_out}, context_length={ctx}, "
            f"num_heads={heads}, num_kv_groups={extra['num_kv_heads']}, "
            f"rope_theta_base={extra['rope_theta_base']}, qkv_bias={bias}, "
            f"out_proj_bias={extra['out_proj_bias']}, dtype=torch.{dtype_name}) from "
            f"tools/reference_modules.py (the book's ch05/07_gpt_to_llama grouped-query "
            f"attention, compute_rope_params and apply_rope) with the KV-cached forward of "
            f"{SCRIPT} (keys cached after RoPE, new tokens at positions cache_size_before.., "
            f"plus truncate) in eval() mode under torch.no_grad(), each output checked against "
            f"the plain forward over all tokens so far."
        )
    fixture = {
        "generated_by": generated_by,
        "name": name,
        "module": module,
        "dtype": dtype_name,
        "seed": seed,
        "d_in": d_in,
        "d_out": d_out,
        "context_length": ctx,
        "num_heads": heads,
        "qkv_bias": bias,
        "batch": batch,
        "params": [
            {"name": n, "shape": s, "stream": t, "scale_exponent": e} for n, s, t, e in plan
        ],
        "input_stream": {
            "stream": INPUT_STREAM,
            "scale_exponent": INPUT_SCALE_EXPONENT,
            "tokens": total,
        },
        "steps": entries,
    }
    if extra is not None:
        fixture.update(extra)
    return fixture


def verify(path):
    """Re-loads a fixture, checks its structure and replays it from the stored metadata."""
    with open(path) as f:
        fx = json.load(f)
    keys = {"generated_by", "name", "module", "dtype", "seed", "d_in", "d_out",
            "context_length", "num_heads", "qkv_bias", "batch", "params", "input_stream",
            "steps"}
    if fx.get("module") == "grouped_query_attention":
        keys |= {"num_kv_heads", "rope_theta_base", "out_proj_bias"}
    assert set(fx) == keys, (path, set(fx) ^ keys)
    assert fx["name"] + ".json" == os.path.basename(path)
    dtype_name = fx["dtype"]
    dtype = DTYPES[dtype_name]
    module = fx["module"]
    if module == "causal_attention":
        assert fx["num_heads"] == 1
    extra = None
    if module == "grouped_query_attention":
        extra = {k: fx[k] for k in ("num_kv_heads", "rope_theta_base", "out_proj_bias")}
        assert isinstance(fx["out_proj_bias"], bool) and fx["rope_theta_base"] >= 0
    width = out_width(module, fx["d_out"], fx["num_heads"])
    model = construct(module, fx["d_in"], fx["d_out"], fx["context_length"],
                      fx["num_heads"], fx["qkv_bias"], True, extra, dtype).to(dtype).eval()

    # Parameters: names, shapes, streams (= index) and exponents as the rules say.
    sd = model.state_dict()
    names = [k for k in sd if not is_mask(k)]
    assert [p["name"] for p in fx["params"]] == names, path
    with torch.no_grad():
        for index, p in enumerate(fx["params"]):
            assert p["stream"] == index, (path, p)
            assert p["shape"] == list(sd[p["name"]].shape), (path, p)
            weight = p["name"] if p["name"].endswith(".weight") else \
                p["name"][: -len("bias")] + "weight"
            assert p["scale_exponent"] == scale_exponent_for(sd[weight].shape[1]), (path, p)
            values = stream_values(fx["seed"], p["stream"], math.prod(p["shape"]), dtype_name,
                                   p["scale_exponent"])
            model.get_parameter(p["name"]).copy_(
                torch.tensor(values, dtype=dtype).reshape(p["shape"]))

    # Steps: a forward-only cursor over the input stream, sizes consistent.
    stream = fx["input_stream"]
    assert stream["stream"] == INPUT_STREAM and stream["scale_exponent"] == INPUT_SCALE_EXPONENT
    steps = []
    cursor = size = 0
    for s in fx["steps"]:
        if s["op"] == "append":
            assert set(s) == {"op", "first_token", "tokens", "cache_size_before", "output"}
            assert s["first_token"] == cursor and s["cache_size_before"] == size, (path, s["op"])
            assert s["tokens"] >= 1
            assert s["output"]["shape"] == [fx["batch"], s["tokens"], width]
            assert len(s["output"]["data"]) == fx["batch"] * s["tokens"] * width
            cursor += s["tokens"]
            size += s["tokens"]
            assert size <= fx["context_length"]
            steps.append(("append", s["tokens"]))
        else:
            assert s["op"] == "truncate" and set(s) == {"op", "size"}
            assert 0 <= s["size"] <= size
            size = s["size"]
            steps.append(("truncate", s["size"]))
    assert cursor == stream["tokens"]

    x_all = input_tokens(fx["seed"], dtype_name, fx["batch"], stream["tokens"], fx["d_in"])
    replay = run_steps(model, x_all, steps)
    for stored, again in zip(fx["steps"], replay):
        assert stored["op"] == again["op"]
        if stored["op"] != "append":
            continue
        data = stored["output"]["data"]
        back = torch.tensor(data, dtype=dtype).tolist()
        assert back == data, (path, "values do not round-trip")
        assert data == again["output"]["data"], (path, "replay differs")
    return fx


def case_table():
    lines = []
    lines.append("| name | module | dtype | seed | d_in | d_out | ctx | heads | kv heads | RoPE theta "
                 "| qkv_bias | out_proj bias | batch | steps | tokens drawn | covers |")
    lines.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- "
                 "| --- | --- | --- |")
    yes_no = {True: "yes", False: "no"}
    for index, case in enumerate(CASES):
        name, module, dtype_name, d_in, d_out, ctx, heads, bias, batch, steps, extra = \
            case_fields(case)
        if extra is None:
            kv, theta = "–", "–"
            out_bias = "yes" if module == "multi_head_attention" else "–"
        else:
            kv, theta = extra["num_kv_heads"], extra["rope_theta_base"] or "0 (none)"
            out_bias = yes_no[extra["out_proj_bias"]]
        desc = []
        for op, v in steps:
            desc.append(f"+{v}" if op == "append" else f"truncate {v}")
        # compress runs of identical steps
        compact = []
        for d in desc:
            if compact and compact[-1][0] == d:
                compact[-1][1] += 1
            else:
                compact.append([d, 1])
        text = ", ".join(d if c == 1 else f"{d} ×{c}" for d, c in compact)
        total = sum(v for op, v in steps if op == "append")
        lines.append(f"| `{name}` | {module} | {dtype_name} | {SEED_BASE + index} | {d_in} | "
                     f"{d_out} | {ctx} | {heads} | {kv} | {theta} | {yes_no[bias]} | "
                     f"{out_bias} | {batch} | "
                     f"{text} | {total} | {COVERS[name]} |")
    return "\n".join(lines)


README_HEAD = r"""# KV-cache reference fixtures

Generated by PyTorch with `tools/make_kv_fixtures.py` from the book-equivalent
modules of `tools/reference_modules.py` (`CausalAttention`,
`MultiHeadAttentionWrapper`, `MultiHeadAttention` of chapter 3 and
`GroupedQueryAttention` of the book's Llama code, `ch05/07_gpt_to_llama`)
and, in the generator, cached forwards written as in the KV-cache bonus code
of the book (LLMs-from-scratch, `ch04/03_kv-cache`). Regenerate (this deletes every
`*.json` here first) with Debian's python3, which provides PyTorch:

    /usr/bin/python3 tools/make_kv_fixtures.py

Do not edit these files by hand. Output is deterministic.

Weights and inputs are **not stored** (a GPT-2-size layer has 2.36M
parameters): they come from the deterministic generator below, which
`test/kv_fixture.hpp` reproduces bit for bit. A file stores the model's
metadata, how to generate each parameter, the step list and, for every
append step, the expected output.

## The generator

All arithmetic is on unsigned 64-bit integers, modulo 2^64:

    splitmix64(z):
        z = z + 0x9E3779B97F4A7C15
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
        z = (z ^ (z >> 27)) * 0x94D049BB133111EB
        return z ^ (z >> 31)

Element `i` (0-based) of stream `t` under the fixture's `seed` `s`:

    z = splitmix64(splitmix64(s ^ t) ^ i)

and its value with scale exponent `e`:

- float32: `m = z >> 43` (21 bits), `v = (m - 2^20) * 2^-(20 + e)`;
- float64: `m = z >> 11` (53 bits), `v = (m - 2^52) * 2^-(52 + e)`.

`|m - 2^20| <= 2^20` (resp. `2^52`), so every value is exactly representable
in its type (C++: `std::ldexp` of the integer), and `-2^-e <= v < 2^-e`.

Known values (checked by the generator at start-up and by
`test/test_kv_cache.cpp`): `splitmix64(0) = 0xe220a8397b1dcdaf`;
seed 2000, stream 0, e = 5, float32, elements 0, 1, 2:
`-0x1.e1878p-6`, `-0x1.86224p-6`, `0x1.1cd0ep-6`; seed 2002, stream 1000,
e = 0, float64, elements 0, 1, 2: `0x1.487bab0447p-3`, `-0x1.f9bfafe186fa8p-1`,
`0x1.e6135eac4fff6p-1`.

- **Parameters.** The parameter at index `t` of the module's PyTorch
  `state_dict` order, mask buffers excluded, is stream `t`, element `i` its
  `i`-th element in row-major order (PyTorch `nn.Linear` layout, weight
  `[out_features][in_features]`). Its scale exponent is
  `e = ceil(log2(fan_in) / 2)` (the smallest `e` with `4^e >= fan_in`), with
  `fan_in = weight.shape[1]` of the parameter's layer (a bias uses its layer's
  weight), so `|v| <= 2^-e`, about `1/sqrt(fan_in)` like `nn.Linear`'s
  initialisation. Every bias is checked to be non-zero.
- **Inputs.** The whole token stream `x [batch][tokens][d_in]` (`tokens` =
  `input_stream.tokens`, the number of tokens all append steps draw together)
  is stream `t = 1000` with `e = 0` (`|x| <= 1`), element
  `i = (b * tokens + j) * d_in + f` for sequence `b`, stream token `j`,
  feature `f`. Sequence `b` of every step reads its own row `b` of the stream.

## The steps

The cache starts empty and the steps run in order:

- `append` of `k` tokens feeds `x[:, first_token : first_token + k, :]` to the
  cached forward (`forward(x, use_cache=True)`) and stores its output
  `[batch][k][out_width]`. The new tokens take cache positions
  `cache_size_before .. cache_size_before + k - 1`; the query at absolute
  position `p` attends to cached keys `0 .. p` (the mask rows are those of the
  plain causal mask offset by `cache_size_before`).
- `truncate` to `n` keeps the first `n` cached tokens of every sequence (the
  cache tensors are sliced to `[:, :n]`; `n = 0` empties it, `n` = the current
  size changes nothing).
- The input cursor only moves forward: `first_token` of an append is the sum
  of the `tokens` of all earlier appends, also after a truncate (the tokens
  appended after a truncate are the next unused tokens of the stream, never
  the dropped ones again). So the cached sequence is, in cache order, the
  stream tokens kept by the truncates followed by the newly appended ones.

The generator checks, for every append, that the cached output agrees with
the plain (uncached) `tools/reference_modules.py` forward over all tokens
currently cached (in cache order), rows `cache_size_before ..`:
`|cached - plain| <= rtol * max(1, |plain|)` with `rtol = 1e-5` (float32) or
`1e-12` (float64), and refuses to write otherwise. For float32 cases it also
evaluates the same model in float64 (the parameters and inputs are exact in
both) and requires every float32 output to be within
`1e-6 * max(1, |float64 value|)` of it. After writing a file it re-loads it,
checks the structure (keys, parameter names in state_dict order, streams equal
to indices, scale exponents by the rule above, input cursor and cache sizes
consistent, output shapes), regenerates parameters and inputs from the stored
metadata, replays the steps on a fresh cached module and requires the stored
outputs back exactly (and every stored float32 value to round-trip).

## Schema

One JSON object per file (compact, one line):

| key | meaning |
| --- | --- |
| `generated_by` | one sentence: script, torch version, generator and seed, constructor call, cached forward |
| `name` | case name (= file name without `.json`) |
| `module` | `causal_attention`, `multi_head_attention_wrapper`, `multi_head_attention` or `grouped_query_attention` |
| `dtype` | `float32` or `float64` |
| `seed` | the generator's fixture seed `s` |
| `d_in`, `d_out`, `context_length` | constructor arguments |
| `num_heads` | constructor argument (1 for `causal_attention`) |
| `qkv_bias` | constructor argument |
| `batch` | sequences per step |
| `params` | list, in `state_dict` order (masks excluded), of `{"name", "shape", "stream", "scale_exponent"}` |
| `input_stream` | `{"stream": 1000, "scale_exponent": 0, "tokens": total tokens drawn}` |
| `num_kv_heads` | `grouped_query_attention` only: the number of key/value groups (`num_kv_groups` of the book); divides `num_heads` |
| `rope_theta_base` | `grouped_query_attention` only: RoPE base theta (a number, e.g. 10000 or 500000); `0` means no RoPE |
| `out_proj_bias` | `grouped_query_attention` only: whether `out_proj` has a bias (a module without one behaves as with a zero bias) |
| `steps` | list of `{"op": "append", "first_token", "tokens", "cache_size_before", "output": {"shape": [batch, tokens, out_width], "data": [...]}}` or `{"op": "truncate", "size": n}` |

`data` is the flat row-major list of elements, each written as Python
`float()` of the tensor element (shortest round-tripping repr), so parsing it
as a double and, for float32 files, converting to float gives back the exact
element value. `out_width` is `d_out` for `causal_attention`,
`multi_head_attention` and `grouped_query_attention`, and `num_heads * d_out` for
`multi_head_attention_wrapper` (head outputs concatenated in head order).

Parameter names per module (as in `test/data/golden/README.md`):

- `causal_attention`: `W_query.weight`, `W_query.bias`, `W_key.weight`,
  `W_key.bias`, `W_value.weight`, `W_value.bias` (biases only when `qkv_bias`).
- `multi_head_attention_wrapper`: the same for `heads.<h>.` in head order.
- `multi_head_attention`: `W_query.*`, `W_key.*`, `W_value.*` (biases only when
  `qkv_bias`), `out_proj.weight`, `out_proj.bias` (always present).
- `grouped_query_attention`: `W_query.weight` `[d_out][d_in]`, `W_query.bias`,
  `W_key.weight` and `W_value.weight` `[num_kv_heads * head_dim][d_in]`,
  `W_key.bias`, `W_value.bias` (the three biases only when `qkv_bias`),
  `out_proj.weight` `[d_out][d_out]`, `out_proj.bias` (only when
  `out_proj_bias`); `head_dim = d_out / num_heads`. The cos / sin tables are
  not parameters (non-persistent buffers) and the mask is excluded.

## Grouped-query attention and RoPE

`grouped_query_attention` is `GroupedQueryAttention` of
`tools/reference_modules.py`, written from the definitions of the book's
Llama 3 code (no dropout; biases optional, the book has none):

- `queries = W_query(x)` viewed as `[b][n][num_heads][head_dim]`,
  `keys = W_key(x)`, `values = W_value(x)` as `[b][n][num_kv_heads][head_dim]`,
  all transposed to `[b][heads][n][head_dim]`;
- with RoPE (`rope_theta_base > 0`) queries and keys are rotated:
  `apply_rope(x, cos, sin) = x * cos + cat(-x2, x1) * sin`, `x1`, `x2` the
  first and second half of the last axis, `cos` / `sin` rows of the token
  positions;
- keys and values are repeated `repeat_interleave(num_heads / num_kv_heads,
  dim=1)`: query head `h` reads kv group `h / (num_heads / num_kv_heads)`;
- causal mask, `softmax(scores / sqrt(head_dim))`, context transposed back to
  `[b][n][d_out]`, `out_proj`.

The RoPE tables are the book's `compute_rope_params(head_dim, theta_base,
context_length)`, made in the model's dtype:

    inv_freq = 1.0 / (theta_base ** (arange(0, head_dim, 2)[: head_dim // 2].float() / head_dim))
    positions = arange(context_length)            # in the model dtype
    angles = positions[:, None] * inv_freq[None, :]
    angles = cat([angles, angles], dim=1)          # [context_length][head_dim]
    cos, sin = cos(angles), sin(angles)

Note the book's `.float()`: `inv_freq` is computed and rounded in **float32**
also for a float64 model (PyTorch's float32 `pow` of the Python scalar
`theta_base`, then a float32 division); `angles` is then the float64 product
of float64 positions and those float32 frequencies, so the float64 fixtures
use float32-rounded frequencies. Three float32 roundings take place: the
exponent `e = float(i) / float(head_dim)`, the power `p = float(theta_base **
e)` and `inv_freq = 1.0f / p`; for every case here, computing `p` as
`static_cast<float>(std::pow(double(theta_base), double(e)))` and then
`1.0f / p` in float gives PyTorch's `inv_freq` bit for bit, while rounding
`1.0 / pow(...)` computed in double only once gives a different float in 3
of the 8 frequencies of head_dim 16 (and 1 of 2 for head_dim 4, theta 500000).

Cached forward (`CachedGroupedQueryAttention` in the generator): the cache
stores the kv groups only, the keys **after** RoPE (as Hugging Face and the
book's KV-cache Llama code do) and the values; the new tokens of an append
take the positions `cache_size_before ..`, so both the new queries and the new
keys use the `cos` / `sin` rows of those absolute positions, and a truncate to
`n` makes the next token take position `n`. The whole-sequence output of the
first `k` tokens is the first append on an empty cache. For
`gqa_f32_h4_kv4_norope` (kv groups = heads, no RoPE, both biases) the
generator also checks that the plain forward equals `MultiHeadAttention` with
the same state_dict (same names and shapes).

## Cases

Case *i* (0-based, in the order of the table) uses seed `2000 + i`. Steps:
`+k` appends `k` tokens, `×c` repeats a step `c` times.

"""


def main():
    _check_generator()
    # Every case is computed and checked before anything is written.
    report = {}
    fixtures = [make_case(index, case, report) for index, case in enumerate(CASES)]
    os.makedirs(OUT_DIR, exist_ok=True)
    for entry in os.listdir(OUT_DIR):
        if entry.endswith(".json"):
            os.remove(os.path.join(OUT_DIR, entry))
    sizes = {}
    for case, fixture in zip(CASES, fixtures):
        path = os.path.join(OUT_DIR, fixture["name"] + ".json")
        with open(path, "w") as f:
            json.dump(fixture, f, separators=(",", ":"))
            f.write("\n")
        verify(path)
        sizes[fixture["name"]] = os.path.getsize(path)
        w = report[fixture["name"]]
        print(f"wrote {os.path.relpath(path, REPO)}  {sizes[fixture['name']]} bytes, "
              f"worst cached/plain error {w['cached_vs_plain']:.3g} x rtol"
              + (f", float32/float64 {w['float32_vs_float64']:.3g} x {FLOAT32_VS_FLOAT64}"
                 if case[2] == "float32" else ""))
    with open(os.path.join(OUT_DIR, "README.md"), "w") as f:
        f.write(README_HEAD)
        f.write(case_table())
        f.write("\n")
    print(f"total {sum(sizes.values())} bytes in {len(sizes)} files")


if __name__ == "__main__":
    main()
