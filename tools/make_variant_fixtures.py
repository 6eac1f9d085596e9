#!/usr/bin/env python3
"""Generate the attention-variant reference fixtures (issue 13: non-causal
self-attention, cross-attention with kdim / vdim, padded batches, attention
weights) for the C++ "mha" library.

Run from anywhere with Debian's python3 (which provides PyTorch; the pyenv
``python3`` on PATH has no torch):

    /usr/bin/python3 tools/make_variant_fixtures.py

Writes one JSON file per case into ``test/data/variants/`` (stale ``*.json``
files there are deleted first) and its README.md. Dependencies: torch + stdlib.
The references are ``torch.nn.MultiheadAttention(..., batch_first=True)`` in
eval() mode (dropout 0) and the book modules of ``tools/reference_modules.py``
with ``causal=False``.

Weights and inputs are not stored: they come from the splitmix64 stream
generator of ``tools/make_kv_fixtures.py`` (``test/data/kv_cache/README.md``),
which ``test/kv_fixture.hpp`` reproduces bit for bit; ``test/variant_fixture.hpp``
reads these files. See ``test/data/variants/README.md`` for the schema, the
library semantics the expected values follow and the case list.
"""

import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

from make_kv_fixtures import (  # noqa: E402
    DTYPES,
    FLOAT32_VS_FLOAT64,
    RTOL,
    _check_generator,
    fill_parameters,
    is_mask,
    max_violation,
    parameter_plan,
    scale_exponent_for,
    stream_values,
)
import reference_modules as book  # noqa: E402

REPO = os.path.dirname(HERE)
OUT_DIR = os.path.join(REPO, "test", "data", "variants")
SCRIPT = "tools/make_variant_fixtures.py"
SEED_BASE = 3000
TORCH_MODULE = "torch.nn.MultiheadAttention"
BOOK_MODULES = ("causal_attention", "multi_head_attention_wrapper", "multi_head_attention",
                "grouped_query_attention")
# Input streams: self-attention reads x from stream 1000; cross-attention
# reads query, key and value from streams 1000, 1001, 1002.
INPUT_STREAMS = {"x": 1000, "query": 1000, "key": 1001, "value": 1002}
INPUT_SCALE_EXPONENT = 0
# Rows of attention weights that are not masked must sum to 1 within this
# (relative to the row length).
ROW_SUM_TOL = {"float32": 1e-6, "float64": 1e-13}


# --------------------------------------------------------------------------
# Cases. Case i (0-based) uses seed 3000 + i, unless it names an earlier case
# in `model_of`: then it uses that case's seed, so parameters and inputs are
# the same (same sizes), and only the mask, padding or weights differ.


def torch_case(name, dtype, E, H, B, Nq, Nkv=None, kdim=None, vdim=None, bias=True,
               causal=False, lengths=None, weights=False, cross=False, model_of=None,
               covers=""):
    """A torch.nn.MultiheadAttention case; self-attention unless cross (then
    Nkv, kdim and vdim default to Nq, E and E)."""
    assert cross or (Nkv is None and kdim is None and vdim is None), name
    assert not (cross and causal), (name, "cross-attention has no causal mask here")
    return {"name": name, "module": TORCH_MODULE, "dtype": dtype, "embed_dim": E,
            "num_heads": H, "kdim": kdim or E, "vdim": vdim or E, "bias": bias,
            "cross": cross, "batch": B, "num_queries": Nq,
            "num_keys": Nkv if cross else Nq, "causal": causal, "lengths": lengths,
            "need_weights": weights, "model_of": model_of, "covers": covers}


def book_case(name, module, dtype, d_in, d_out, ctx, H, qkv_bias, B, N, gqa=None,
              covers=""):
    """A book module of tools/reference_modules.py with causal=False. gqa:
    (num_kv_heads, rope_theta_base, out_proj_bias) for grouped_query_attention."""
    assert module in BOOK_MODULES and (gqa is not None) == (module == "grouped_query_attention")
    case = {"name": name, "module": module, "dtype": dtype, "d_in": d_in, "d_out": d_out,
            "context_length": ctx, "num_heads": H, "qkv_bias": qkv_bias, "cross": False,
            "batch": B, "num_queries": N, "num_keys": N, "causal": False, "lengths": None,
            "need_weights": False, "model_of": None, "covers": covers}
    if gqa is not None:
        case.update(num_kv_heads=gqa[0], rope_theta_base=gqa[1], out_proj_bias=gqa[2])
    return case


CASES = [
    # 1. non-causal self-attention
    torch_case("self_f32_e8_h2_n5_b2", "float32", 8, 2, 2, 5,
               covers="non-causal self-attention, biases (torch's fast path)"),
    torch_case("self_f64_e12_h3_n7_nobias", "float64", 12, 3, 1, 7, bias=False,
               covers="float64, odd head count, no biases (out_proj.bias absent: zero)"),
    torch_case("self_f32_e9_h3_n1_b3", "float32", 9, 3, 3, 1,
               covers="a single token (N = 1), head_dim 3 (sqrt(3) inexact)"),
    torch_case("self_f32_e12_h2_n7_b1", "float32", 12, 2, 1, 7,
               covers="head_dim 6 (sqrt(6) inexact: torch scales q before the product), "
                      "longer rows"),
    # 2. the same models with the causal mask as attn_mask
    torch_case("causal_f32_e8_h2_n5_b2", "float32", 8, 2, 2, 5, causal=True,
               model_of="self_f32_e8_h2_n5_b2",
               covers="self_f32_e8_h2_n5_b2 with attn_mask = causal: equals the library's "
                      "causal multi_head_attention with the mapped parameters"),
    torch_case("causal_f64_e12_h3_n7_nobias", "float64", 12, 3, 1, 7, bias=False, causal=True,
               model_of="self_f64_e12_h3_n7_nobias",
               covers="self_f64_e12_h3_n7_nobias with the causal attn_mask"),
    torch_case("causal_f32_e12_h2_n7_b1", "float32", 12, 2, 1, 7, causal=True,
               model_of="self_f32_e12_h2_n7_b1",
               covers="self_f32_e12_h2_n7_b1 with the causal attn_mask"),
    # 4. attention weights
    torch_case("weights_f32_e8_h2_n5_b2", "float32", 8, 2, 2, 5, weights=True,
               model_of="self_f32_e8_h2_n5_b2",
               covers="weights of self_f32_e8_h2_n5_b2 (same output), per head and averaged"),
    torch_case("weights_causal_f32_e8_h2_n5_b2", "float32", 8, 2, 2, 5, causal=True,
               weights=True, model_of="self_f32_e8_h2_n5_b2",
               covers="causal weights: zeros above the diagonal"),
    torch_case("weights_causal_f64_e12_h3_n7_nobias", "float64", 12, 3, 1, 7, bias=False,
               causal=True, weights=True, model_of="self_f64_e12_h3_n7_nobias",
               covers="causal weights in float64, odd head count"),
    torch_case("weights_f32_e12_h2_n7_b1", "float32", 12, 2, 1, 7, weights=True,
               model_of="self_f32_e12_h2_n7_b1",
               covers="non-causal weights, head_dim 6"),
    # 5. padded batches (lengths per sequence; self-attention: keys and queries)
    torch_case("pad_f32_e8_h2_n5_b4", "float32", 8, 2, 4, 5, lengths=[5, 2, 0, 1],
               weights=True,
               covers="non-causal + padding: full length, length 2, an empty sequence, "
                      "length 1 (torch's fast path)"),
    torch_case("pad_causal_f32_e8_h2_n5_b4", "float32", 8, 2, 4, 5, lengths=[5, 2, 0, 1],
               causal=True, weights=True, model_of="pad_f32_e8_h2_n5_b4",
               covers="causal + padding, the same model and lengths"),
    torch_case("pad_f64_e12_h3_n5_b3_nobias", "float64", 12, 3, 3, 5, bias=False,
               lengths=[3, 5, 0], weights=True,
               covers="float64 non-causal + padding, odd head count, no biases (the model "
                      "sizes of self_f64_e12_h3_n7_nobias)"),
    torch_case("pad_causal_f64_e12_h3_n5_b3_nobias", "float64", 12, 3, 3, 5, bias=False,
               lengths=[3, 5, 0], causal=True, weights=True,
               model_of="pad_f64_e12_h3_n5_b3_nobias",
               covers="float64 causal + padding"),
    # 6. cross-attention (non-causal; lengths mask the keys)
    torch_case("cross_f32_e8_h2_k5_v7_bias", "float32", 8, 2, 2, 3, 6, 5, 7, cross=True,
               covers="cross-attention, kdim 5 / vdim 7 (q_proj_weight, k_proj_weight, "
                      "v_proj_weight), biases"),
    torch_case("cross_f64_e8_h2_k5_v7_bias", "float64", 8, 2, 2, 3, 6, 5, 7, cross=True,
               covers="as cross_f32_e8_h2_k5_v7_bias in float64"),
    torch_case("cross_f32_e8_h2_k5_v7_nobias", "float32", 8, 2, 2, 3, 6, 5, 7, bias=False,
               cross=True, covers="cross-attention without biases"),
    torch_case("cross_f64_e8_h2_k5_v7_nobias", "float64", 8, 2, 2, 3, 6, 5, 7, bias=False,
               cross=True, covers="as cross_f32_e8_h2_k5_v7_nobias in float64"),
    torch_case("cross_f32_e8_h2_kv8_bias", "float32", 8, 2, 2, 3, 6, cross=True,
               covers="kdim = vdim = E: packed in_proj_weight, three different inputs"),
    torch_case("cross_weights_f64_e8_h2_k5_v7_bias", "float64", 8, 2, 2, 3, 6, 5, 7,
               cross=True, weights=True, model_of="cross_f64_e8_h2_k5_v7_bias",
               covers="weights [B][H][Nq][Nkv] of cross_f64_e8_h2_k5_v7_bias"),
    torch_case("cross_pad_f32_e8_h2_k5_v7_bias", "float32", 8, 2, 3, 3, 6, 5, 7, cross=True,
               lengths=[6, 0, 2], weights=True,
               covers="cross + key padding: full, no keys at all (fully masked rows: zero "
                      "weights, output out_proj.bias), 2 keys"),
    torch_case("cross_pad_f64_e8_h2_k5_v7_nobias", "float64", 8, 2, 3, 3, 6, 5, 7,
               bias=False, cross=True, lengths=[1, 6, 0], weights=True,
               covers="float64 cross + key padding without biases (fully masked rows: "
                      "output zero)"),
    torch_case("cross_f32_e6_h3_k5_v7_nq7_nkv2", "float32", 6, 3, 2, 7, 2, 5, 7, cross=True,
               weights=True,
               covers="more queries than keys (Nq 7 > Nkv 2), head_dim 2, odd head count"),
    # 3. non-causal book modules
    book_case("book_ca_f32_noncausal", "causal_attention", "float32", 6, 5, 8, 1, True, 2, 6,
              covers="CausalAttention(causal=False), bias, N < context_length"),
    book_case("book_wrap_f32_noncausal", "multi_head_attention_wrapper", "float32", 7, 3, 8, 3,
              True, 2, 5, covers="MultiHeadAttentionWrapper(causal=False), 3 heads of width 3"),
    book_case("book_mha_f32_noncausal", "multi_head_attention", "float32", 12, 9, 8, 3, True,
              2, 7, covers="MultiHeadAttention(causal=False), head_dim 3, bias, d_in != d_out"),
    book_case("book_mha_f64_noncausal", "multi_head_attention", "float64", 8, 12, 6, 4, False,
              2, 6, covers="float64, d_in != d_out, N = context_length, no qkv bias"),
    book_case("book_gqa_f32_rope_noncausal", "grouped_query_attention", "float32", 8, 16, 8, 4,
              False, 2, 6, gqa=(2, 10_000, False),
              covers="GroupedQueryAttention(causal=False), 2 kv groups, RoPE 10000, no "
                     "biases (out_proj.bias absent: zero)"),
    book_case("book_gqa_f32_norope_noncausal", "grouped_query_attention", "float32", 8, 16, 8,
              4, True, 2, 5, gqa=(2, 0, True),
              covers="GroupedQueryAttention(causal=False) without RoPE, biases"),
    book_case("book_gqa_f64_rope_noncausal", "grouped_query_attention", "float64", 8, 16, 8, 4,
              False, 2, 6, gqa=(2, 10_000, False),
              covers="as book_gqa_f32_rope_noncausal in float64"),
]


def case_seeds():
    """name -> seed: 3000 + index, or the seed of the case named in model_of."""
    seeds = {}
    for index, case in enumerate(CASES):
        ref = case["model_of"]
        if ref is None:
            seeds[case["name"]] = SEED_BASE + index
            continue
        other = next(c for c in CASES if c["name"] == ref)
        same = ("module", "dtype", "embed_dim", "num_heads", "kdim", "vdim", "bias", "cross",
                "batch", "num_queries", "num_keys")
        assert all(case.get(k) == other.get(k) for k in same), (case["name"], ref)
        seeds[case["name"]] = seeds[ref]
    assert len({c["name"] for c in CASES}) == len(CASES)
    return seeds


# --------------------------------------------------------------------------
# Models, parameters and inputs.


def input_names(case):
    return ["query", "key", "value"] if case["cross"] else ["x"]


def input_shapes(case):
    """name -> [batch][tokens][features] of each input."""
    B, Nq, Nkv = case["batch"], case["num_queries"], case["num_keys"]
    if case["module"] != TORCH_MODULE:
        return {"x": [B, Nq, case["d_in"]]}
    if not case["cross"]:
        return {"x": [B, Nq, case["embed_dim"]]}
    return {"query": [B, Nq, case["embed_dim"]], "key": [B, Nkv, case["kdim"]],
            "value": [B, Nkv, case["vdim"]]}


def make_inputs(case, seed, dtype_name):
    """name -> tensor, each input its own stream (scale exponent 0: |v| <= 1)."""
    out = {}
    for name, shape in input_shapes(case).items():
        values = stream_values(seed, INPUT_STREAMS[name], math.prod(shape), dtype_name,
                               INPUT_SCALE_EXPONENT)
        out[name] = torch.tensor(values, dtype=DTYPES[dtype_name]).reshape(shape)
    return out


def construct(case, dtype):
    """The reference module of a case, in eval() mode, parameters not yet set."""
    module = case["module"]
    if module == TORCH_MODULE:
        model = nn.MultiheadAttention(case["embed_dim"], case["num_heads"], dropout=0.0,
                                      bias=case["bias"], kdim=case["kdim"], vdim=case["vdim"],
                                      batch_first=True, dtype=dtype)
        return model.eval()
    args = (case["d_in"], case["d_out"], case["context_length"])
    if module == "grouped_query_attention":
        model = book.GroupedQueryAttention(*args, case["num_heads"], case["num_kv_heads"],
                                      case["rope_theta_base"], qkv_bias=case["qkv_bias"],
                                      out_proj_bias=case["out_proj_bias"], dtype=dtype,
                                      causal=False)
    elif module == "causal_attention":
        model = book.CausalAttention(*args, 0.0, qkv_bias=case["qkv_bias"], causal=False)
    elif module == "multi_head_attention_wrapper":
        model = book.MultiHeadAttentionWrapper(*args, 0.0, case["num_heads"],
                                          qkv_bias=case["qkv_bias"], causal=False)
    else:
        model = book.MultiHeadAttention(*args, 0.0, case["num_heads"], qkv_bias=case["qkv_bias"],
                                   causal=False)
    return model.to(dtype).eval()


def fan_in(sd, key, embed_dim):
    """fan_in of a parameter: weight.shape[1] of its layer; in_proj_bias (the
    q, k and v biases of nn.MultiheadAttention in one tensor) uses embed_dim."""
    if key == "in_proj_bias":
        return embed_dim
    if key.endswith(".bias"):
        return sd[key[: -len("bias")] + "weight"].shape[1]
    if key.endswith("weight"):  # .weight, in_proj_weight, q_proj_weight, ...
        return sd[key].shape[1]
    raise ValueError(f"unexpected state_dict entry {key}")


def torch_parameter_plan(model):
    """[(name, shape, stream, scale_exponent)] of an nn.MultiheadAttention in state_dict order."""
    sd = model.state_dict()
    return [(key, list(value.shape), t, scale_exponent_for(fan_in(sd, key, model.embed_dim)))
            for t, (key, value) in enumerate(sd.items())]


def zero_parameters(case):
    """Parameters the module does not have that the library's module has
    (loaded as zero): [(name, shape)]."""
    if case["module"] == TORCH_MODULE and not case["bias"]:
        return [("out_proj.bias", [case["embed_dim"]])]
    if case["module"] == "grouped_query_attention" and not case["out_proj_bias"]:
        return [("out_proj.bias", [case["d_out"]])]
    return []


def make_model(case, seed, dtype_name):
    model = construct(case, DTYPES[dtype_name])
    plan = (torch_parameter_plan(model) if case["module"] == TORCH_MODULE
            else parameter_plan(model))
    fill_parameters(model, seed, dtype_name, plan)
    for name, value in model.state_dict().items():
        if name.endswith("bias") and not is_mask(name):
            assert bool((value != 0).all()), (case["name"], name, "zero bias")
    return model, plan


def library_parameters(model, case):
    """The parameters under the library's (book) names, PyTorch layout:
    W_query / W_key / W_value / out_proj .weight and .bias; for
    nn.MultiheadAttention W_query.weight = in_proj_weight rows [0, E) (or
    q_proj_weight), W_key rows [E, 2E) (or k_proj_weight [E][kdim]), W_value
    rows [2E, 3E) (or v_proj_weight [E][vdim]), the biases the thirds of
    in_proj_bias; an absent out_proj.bias is zero."""
    sd = model.state_dict()
    if case["module"] != TORCH_MODULE:
        lib = {k: v for k, v in sd.items() if not is_mask(k)}
    else:
        E = case["embed_dim"]
        if "in_proj_weight" in sd:
            weights = sd["in_proj_weight"].split(E)
        else:
            weights = [sd[f"{p}_proj_weight"] for p in "qkv"]
        lib = {}
        for i, name in enumerate(("W_query", "W_key", "W_value")):
            lib[f"{name}.weight"] = weights[i]
            if "in_proj_bias" in sd:
                lib[f"{name}.bias"] = sd["in_proj_bias"][i * E:(i + 1) * E]
        lib["out_proj.weight"] = sd["out_proj.weight"]
        if "out_proj.bias" in sd:
            lib["out_proj.bias"] = sd["out_proj.bias"]
    for name, shape in zero_parameters(case):
        lib[name] = torch.zeros(shape, dtype=sd["out_proj.weight"].dtype)
    return lib


# --------------------------------------------------------------------------
# The forward passes: PyTorch's, then the library semantics applied to it,
# and an independent explicit computation of the same semantics.


def key_padding_mask(case):
    """[B][Nkv] bool, True at key positions >= lengths[b] (None without lengths)."""
    if case["lengths"] is None:
        return None
    lengths = torch.tensor(case["lengths"])
    return torch.arange(case["num_keys"])[None, :] >= lengths[:, None]


def causal_mask(case):
    """[Nq][Nkv] bool, True above the diagonal (None when not causal)."""
    if not case["causal"]:
        return None
    return torch.triu(torch.ones(case["num_queries"], case["num_keys"], dtype=torch.bool),
                      diagonal=1)


def query_lengths(case):
    """Self-attention with lengths: the query rows that are not padding
    (= lengths); otherwise None (every query row is computed)."""
    return None if case["cross"] else case["lengths"]


_native_calls = [0]
_native_mha = torch._native_multi_head_attention


def _counting_native_mha(*args, **kwargs):
    _native_calls[0] += 1
    return _native_mha(*args, **kwargs)


# nn.MultiheadAttention.forward looks the function up at call time: count
# which path (the fused fast path or F.multi_head_attention_forward) it takes.
torch._native_multi_head_attention = _counting_native_mha

TORCH_PATHS = {
    True: "torch._native_multi_head_attention (the fast path of nn.MultiheadAttention.forward: "
          "self-attention, eval, batch_first, no attn_mask, even num_heads, no grad)",
    False: "torch.nn.functional.multi_head_attention_forward (q scaled by 1/sqrt(head_dim) "
           "before q @ k^T, masks added as -inf, softmax, weights @ v, out_proj)",
}


def torch_forward(model, case, inputs):
    """nn.MultiheadAttention as a user calls it: (output, weights per head or
    None, averaged weights or None, fast path taken)."""
    x = inputs.get("x")
    q, k, v = (x, x, x) if x is not None else (inputs["query"], inputs["key"], inputs["value"])
    kwargs = {"key_padding_mask": key_padding_mask(case), "attn_mask": causal_mask(case)}
    before = _native_calls[0]
    with torch.no_grad():
        if not case["need_weights"]:
            out, none = model(q, k, v, need_weights=False, **kwargs)
            assert none is None
            return out, None, None, _native_calls[0] > before
        out, w = model(q, k, v, need_weights=True, average_attn_weights=False, **kwargs)
        out2, avg = model(q, k, v, need_weights=True, average_attn_weights=True, **kwargs)
    fast = _native_calls[0] - before
    assert fast in (0, 2), fast
    assert torch.equal(out.nan_to_num(7.0), out2.nan_to_num(7.0)), case["name"]
    return out, w, avg, fast == 2


def apply_library_semantics(case, out_proj, out, w, avg):
    """PyTorch's results turned into the library's: rows of padded queries
    (self-attention, i >= lengths[b]) zero in the output and the weights; a
    query row with no unmasked key (cross-attention, lengths[b] == 0) has zero
    weights and the output out_proj(0) (= out_proj.bias, or 0 without one), as
    PyTorch's SDPA gives (torch 1.13's nn.MultiheadAttention gives NaN there).
    Returns the new tensors and the notes of what was replaced."""
    with torch.no_grad():
        return _apply_library_semantics(case, out_proj, out, w, avg)


def _apply_library_semantics(case, out_proj, out, w, avg):
    out = out.clone()
    w = None if w is None else w.clone()
    avg = None if avg is None else avg.clone()
    notes = []
    nan_rows = out.isnan().any(dim=-1)  # [B][Nq]
    qlen = query_lengths(case)
    lengths = case["lengths"]
    expected_nan = torch.zeros_like(nan_rows)
    for b in range(case["batch"]):
        if lengths is not None and lengths[b] == 0:
            expected_nan[b] = True
            out[b] = out_proj(torch.zeros(out.shape[-1], dtype=out.dtype))
            if w is not None:
                w[b] = 0
                avg[b] = 0
        if qlen is not None:
            out[b, qlen[b]:] = 0
            if w is not None:
                w[b, :, qlen[b]:] = 0
                avg[b, qlen[b]:] = 0
    # torch 1.13: NaN exactly in the rows without an unmasked key (both
    # paths), if anywhere.
    got_nan = bool(nan_rows.any())
    assert not got_nan or torch.equal(nan_rows, expected_nan), (case["name"], nan_rows)
    if qlen is not None and min(qlen) < case["num_queries"]:
        notes.append("output rows and weight rows of padded queries (i >= lengths[b]) set to "
                     "zero")
    if bool(expected_nan.any()):
        notes.append(
            "sequences with lengths[b] == 0: "
            + ("torch gave NaN rows" if got_nan else "torch gave no NaN")
            + "; weights set to zero, output rows to out_proj(0) = "
            + ("out_proj.bias" if case["bias"] else "0 (no out_proj.bias)")
            + (" (then zeroed as padded query rows)" if qlen is not None else ""))
    for t in (out, w, avg):
        assert t is None or not bool(t.isnan().any()), case["name"]
    return out, w, avg, notes


def explicit_forward(case, lib, inputs, scale_after=True):
    """The library semantics computed directly from the library-named
    parameters `lib` (any dtype): per head softmax(q k^T / sqrt(head_dim) +
    masks) with -inf at masked keys, rows without an unmasked key zero, rows
    of padded queries zero. scale_after=False scales q before the product (as
    torch does). Returns (output, weights [B][H][Nq][Nkv], averaged weights)."""
    module = case["module"]
    x = inputs.get("x")
    q_in, k_in, v_in = (x, x, x) if x is not None else (inputs["query"], inputs["key"],
                                                      inputs["value"])
    B, Nq, Nkv = case["batch"], case["num_queries"], case["num_keys"]

    def linear(t, name):
        y = t @ lib[f"{name}.weight"].T
        return y + lib[f"{name}.bias"] if f"{name}.bias" in lib else y

    def heads_of(t, n, count):
        return t.view(B, n, count, -1).transpose(1, 2)

    if module == "multi_head_attention_wrapper":
        prefixes = [f"heads.{h}." for h in range(case["num_heads"])]
        proj = [(heads_of(linear(q_in, p + "W_query"), Nq, 1),
                 heads_of(linear(k_in, p + "W_key"), Nkv, 1),
                 heads_of(linear(v_in, p + "W_value"), Nkv, 1)) for p in prefixes]
        Q, K, V = (torch.cat([p[i] for p in proj], dim=1) for i in range(3))
    else:
        H = 1 if module == "causal_attention" else case["num_heads"]
        kv_heads = case.get("num_kv_heads", H)
        Q = heads_of(linear(q_in, "W_query"), Nq, H)
        K = heads_of(linear(k_in, "W_key"), Nkv, kv_heads)
        V = heads_of(linear(v_in, "W_value"), Nkv, kv_heads)
        if case.get("rope_theta_base", 0) > 0:
            model = construct(case, Q.dtype)  # only its cos / sin tables
            Q = book.apply_rope(Q, model.cos, model.sin)
            K = book.apply_rope(K, model.cos, model.sin)
        K = K.repeat_interleave(H // kv_heads, dim=1)
        V = V.repeat_interleave(H // kv_heads, dim=1)
    d = Q.shape[-1]
    if scale_after:
        scores = (Q @ K.transpose(-1, -2)) / math.sqrt(d)
    else:
        scores = (Q / math.sqrt(d)) @ K.transpose(-1, -2)
    masked = torch.zeros(B, 1, Nq, Nkv, dtype=torch.bool)
    if case["causal"]:
        masked |= causal_mask(case)
    if case["lengths"] is not None:
        masked |= key_padding_mask(case)[:, None, None, :]
    weights = torch.softmax(scores.masked_fill(masked, -math.inf), dim=-1)
    weights = weights.masked_fill(masked.all(dim=-1, keepdim=True), 0.0)  # no key: zero row
    qlen = query_lengths(case)
    if qlen is not None:
        padded = torch.arange(Nq)[None, :] >= torch.tensor(qlen)[:, None]  # [B][Nq]
        weights = weights.masked_fill(padded[:, None, :, None], 0.0)
    context = (weights @ V).transpose(1, 2).reshape(B, Nq, -1)
    out = linear(context, "out_proj") if "out_proj.weight" in lib else context
    if qlen is not None:
        out = out.masked_fill(padded[:, :, None], 0.0)
    return out, weights, weights.sum(dim=1) / weights.shape[1]


def run_case(case, seed, dtype_name):
    """(model, plan, inputs, results): results has "output", "weights",
    "average_weights" (None without need_weights), "fast_path", "notes"."""
    model, plan = make_model(case, seed, dtype_name)
    inputs = make_inputs(case, seed, dtype_name)
    if case["module"] == TORCH_MODULE:
        out, w, avg, fast = torch_forward(model, case, inputs)
        out, w, avg, notes = apply_library_semantics(case, model.out_proj, out, w, avg)
    else:
        with torch.no_grad():
            out = model(inputs["x"])
        w = avg = None
        fast, notes = False, []
    return model, plan, inputs, {"output": out, "weights": w, "average_weights": avg,
                                 "fast_path": fast, "notes": notes}


# --------------------------------------------------------------------------
# Checks.


def check_weights(case, dtype_name, w, avg):
    """Rows of unmasked queries sum to 1; masked keys and zeroed rows are 0."""
    B, Nq, Nkv = case["batch"], case["num_queries"], case["num_keys"]
    qlen = query_lengths(case)
    kpm = key_padding_mask(case)
    cm = causal_mask(case)
    tol = ROW_SUM_TOL[dtype_name] * Nkv
    for b in range(B):
        for i in range(Nq):
            zero_row = (qlen is not None and i >= qlen[b]) or \
                (case["lengths"] is not None and case["lengths"][b] == 0)
            for row in [w[b, h, i] for h in range(w.shape[1])] + [avg[b, i]]:
                if zero_row:
                    assert bool((row == 0).all()), (case["name"], b, i)
                    continue
                assert abs(float(row.double().sum()) - 1.0) <= tol, (case["name"], b, i)
                for j in range(Nkv):
                    if (kpm is not None and kpm[b, j]) or (cm is not None and cm[i, j]):
                        assert float(row[j]) == 0.0, (case["name"], b, i, j)


def make_fixture(seed, case, report):
    """Computes and checks one case; returns its JSON object."""
    name, dtype_name = case["name"], case["dtype"]
    dtype = DTYPES[dtype_name]
    model, plan, inputs, res = run_case(case, seed, dtype_name)
    worst = {}

    def within(label, actual, expected, tol):
        v = max_violation(actual.double(), expected.double(), tol)
        worst[label] = max(worst.get(label, 0.0), v)
        if v > 1:
            raise SystemExit(f"{name}: {label} differs by {v} x {tol}; nothing written")

    keys = ["output"] + (["weights", "average_weights"] if case["need_weights"] else [])
    # The same model in float64 (parameters and inputs are exact in both).
    model64 = construct(case, torch.float64)
    model64.load_state_dict({k: v.double() for k, v in model.state_dict().items()})
    inputs64 = {k: v.double() for k, v in inputs.items()}
    if case["module"] == TORCH_MODULE:
        out, w, avg, fast64 = torch_forward(model64, case, inputs64)
        assert fast64 == res["fast_path"]
        res64 = dict(zip(("output", "weights", "average_weights"),
                         apply_library_semantics(case, model64.out_proj, out, w, avg)[:3]))
    else:
        with torch.no_grad():
            res64 = {"output": model64(inputs64["x"])}
    if dtype_name == "float32":
        for k in keys:
            within(f"{k} float32 vs float64", res[k], res64[k], FLOAT32_VS_FLOAT64)
    # The library semantics computed explicitly from the library-named parameters.
    lib64 = {k: v.double() for k, v in library_parameters(model, case).items()}
    with torch.no_grad():
        explicit = dict(zip(("output", "weights", "average_weights"),
                            explicit_forward(case, lib64, inputs64)))
        for k in keys:
            within(f"{k} vs explicit float64", res64[k], explicit[k], RTOL["float64"])
            within(f"{k} vs explicit float64 ({dtype_name})", res[k], explicit[k],
                   FLOAT32_VS_FLOAT64 if dtype_name == "float32" else RTOL["float64"])
        if dtype_name == "float32":
            # The book's order (scores / sqrt(d) after q @ k^T) in float32
            # against torch's (q / sqrt(d) first): how much the order moves float32.
            lib32 = {k: v.float() for k, v in library_parameters(model, case).items()}
            book_order = explicit_forward(case, lib32, inputs)[0]
            torch_order = explicit_forward(case, lib32, inputs, scale_after=False)[0]
            for label, t in (("book-order float32", book_order),
                             ("torch-order float32", torch_order)):
                v = max_violation(t.double(), explicit["output"], FLOAT32_VS_FLOAT64)
                worst[f"{label} vs float64 output"] = v
    if case["need_weights"]:
        check_weights(case, dtype_name, res["weights"], res["average_weights"])
    # nn.MultiheadAttention self-attention without padding is the book's
    # MultiHeadAttention(E, E) with the mapped parameters (causal or not).
    if case["module"] == TORCH_MODULE and not case["cross"] and case["lengths"] is None:
        E, H, N = case["embed_dim"], case["num_heads"], case["num_queries"]
        mha = book.MultiHeadAttention(E, E, N, 0.0, H, qkv_bias=case["bias"],
                                      causal=case["causal"]).to(dtype).eval()
        mha.load_state_dict({**library_parameters(model, case), "mask": mha.mask})
        with torch.no_grad():
            within("output vs book MultiHeadAttention", res["output"], mha(inputs["x"]),
                   RTOL[dtype_name])
    # A non-causal book module: the mask is really off (the output differs from
    # causal mode) and the last query row, which sees every key in both modes,
    # is the causal module's.
    if case["module"] != TORCH_MODULE:
        causal = construct(case, dtype)
        causal.causal = True
        for m in getattr(causal, "heads", []):
            m.causal = True
        causal.load_state_dict(model.state_dict())
        with torch.no_grad():
            y = causal(inputs["x"])
        assert not torch.allclose(y, res["output"]), (name, "mask not off")
        within("last row vs causal mode", res["output"][:, -1], y[:, -1], RTOL[dtype_name])
    report[name] = {"worst": worst, "fast_path": res["fast_path"]}
    return fixture_json(case, seed, plan, res)


def tensor_json(t):
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1).tolist()]}


def torch_call(case):
    """The call that made the output, as text."""
    args = "x, x, x" if not case["cross"] else "query, key, value"
    kw = []
    if case["lengths"] is not None:
        kw.append("key_padding_mask=arange(Nkv)[None, :] >= tensor(lengths)[:, None]")
    if case["need_weights"]:
        kw.append("need_weights=True, average_attn_weights=False (weights; "
                  "average_attn_weights=True for average_weights)")
    else:
        kw.append("need_weights=False")
    if case["causal"]:
        kw.append("attn_mask=torch.triu(torch.ones(Nq, Nkv, dtype=torch.bool), diagonal=1)")
    return f"model({args}, {', '.join(kw)})"


def fixture_json(case, seed, plan, res):
    module, dtype_name = case["module"], case["dtype"]
    if module == TORCH_MODULE:
        ctor = (f"torch.nn.MultiheadAttention(embed_dim={case['embed_dim']}, "
                f"num_heads={case['num_heads']}, dropout=0.0, bias={case['bias']}, "
                f"kdim={case['kdim']}, vdim={case['vdim']}, batch_first=True, "
                f"dtype=torch.{dtype_name})")
        how = (f"{torch_call(case)} in eval() mode under torch.no_grad() through "
               f"{TORCH_PATHS[res['fast_path']].split(' (')[0]}")
    else:
        ctor = {
            "causal_attention": "CausalAttention({d_in}, {d_out}, {context_length}, 0.0, "
                                "qkv_bias={qkv_bias}, causal=False)",
            "multi_head_attention_wrapper": "MultiHeadAttentionWrapper({d_in}, {d_out}, "
                                            "{context_length}, 0.0, {num_heads}, "
                                            "qkv_bias={qkv_bias}, causal=False)",
            "multi_head_attention": "MultiHeadAttention({d_in}, {d_out}, {context_length}, "
                                    "0.0, {num_heads}, qkv_bias={qkv_bias}, causal=False)",
            "grouped_query_attention": "GroupedQueryAttention({d_in}, {d_out}, "
                                       "{context_length}, {num_heads}, {num_kv_heads}, "
                                       "rope_theta_base={rope_theta_base}, "
                                       "qkv_bias={qkv_bias}, out_proj_bias={out_proj_bias}, "
                                       "dtype=torch." + dtype_name + ", causal=False)",
        }[module].format(**case)
        ctor += " from tools/reference_modules.py"
        how = "model(x) in eval() mode under torch.no_grad()"
    generated_by = (
        f"{SCRIPT} with torch {torch.__version__}: parameters and inputs from the splitmix64 "
        f"stream generator of test/data/kv_cache/README.md with seed {seed}, {ctor} in "
        f"{dtype_name}, {how}; expected values follow the library semantics of "
        f"test/data/variants/README.md.")
    fx = {"generated_by": generated_by, "name": case["name"], "module": module,
          "kind": "cross_attention" if case["cross"] else "self_attention",
          "dtype": dtype_name, "seed": seed}
    if module == TORCH_MODULE:
        fx.update(embed_dim=case["embed_dim"], num_heads=case["num_heads"], kdim=case["kdim"],
                  vdim=case["vdim"], bias=case["bias"], batch_first=True, dropout=0.0,
                  torch_call=torch_call(case), torch_path=TORCH_PATHS[res["fast_path"]])
    else:
        for k in ("d_in", "d_out", "context_length", "num_heads", "qkv_bias"):
            fx[k] = case[k]
        if module == "grouped_query_attention":
            for k in ("num_kv_heads", "rope_theta_base", "out_proj_bias"):
                fx[k] = case[k]
    fx.update({
        "batch": case["batch"],
        "num_queries": case["num_queries"],
        "num_keys": case["num_keys"],
        "causal": case["causal"],
        "lengths": case["lengths"],
        "query_lengths": query_lengths(case),
        "need_weights": case["need_weights"],
        "params": [{"name": n, "shape": s, "stream": t, "scale_exponent": e}
                   for n, s, t, e in plan],
        "zero_params": [{"name": n, "shape": s, "note": "absent from the module; the "
                         "library's module has it and loads it as zero"}
                        for n, s in zero_parameters(case)],
        "inputs": [{"name": n, "shape": s, "stream": INPUT_STREAMS[n],
                    "scale_exponent": INPUT_SCALE_EXPONENT}
                   for n, s in input_shapes(case).items()],
        "postprocessing": res["notes"],
        "output": tensor_json(res["output"]),
    })
    if case["need_weights"]:
        fx["weights"] = tensor_json(res["weights"])
        fx["average_weights"] = tensor_json(res["average_weights"])
    return fx


# --------------------------------------------------------------------------


def case_from_json(fx):
    """The case a fixture describes (covers and model_of are not stored)."""
    module = fx["module"]
    common = {"name": fx["name"], "module": module, "dtype": fx["dtype"],
              "cross": fx["kind"] == "cross_attention", "batch": fx["batch"],
              "num_queries": fx["num_queries"], "num_keys": fx["num_keys"],
              "causal": fx["causal"], "lengths": fx["lengths"],
              "need_weights": fx["need_weights"], "model_of": None, "covers": ""}
    if module == TORCH_MODULE:
        keys = ("embed_dim", "num_heads", "kdim", "vdim", "bias")
    else:
        keys = ("d_in", "d_out", "context_length", "num_heads", "qkv_bias")
        if module == "grouped_query_attention":
            keys += ("num_kv_heads", "rope_theta_base", "out_proj_bias")
    return {**common, **{k: fx[k] for k in keys}}


def verify(path):
    """Re-loads a fixture, checks its structure and recomputes it from the
    stored metadata alone: the same JSON must come back."""
    with open(path) as f:
        fx = json.load(f)
    assert fx["name"] + ".json" == os.path.basename(path)
    case = case_from_json(fx)
    model = construct(case, DTYPES[fx["dtype"]])
    sd = model.state_dict()
    names = [k for k in sd if not is_mask(k)]
    assert [p["name"] for p in fx["params"]] == names, path
    embed = fx.get("embed_dim", 0)
    for index, p in enumerate(fx["params"]):
        assert p["stream"] == index and p["shape"] == list(sd[p["name"]].shape), (path, p)
        assert p["scale_exponent"] == scale_exponent_for(fan_in(sd, p["name"], embed)), p
    for x in fx["inputs"]:
        assert x["stream"] == INPUT_STREAMS[x["name"]] and x["scale_exponent"] == 0, x
    for k in ("output", "weights", "average_weights"):
        if k in fx:
            data = fx[k]["data"]
            assert len(data) == math.prod(fx[k]["shape"]), (path, k)
            back = torch.tensor(data, dtype=DTYPES[fx["dtype"]]).tolist()
            assert back == data, (path, k, "values do not round-trip")
    again = make_fixture(fx["seed"], case, {})
    assert again == fx, (path, "recomputation differs")


def case_table(seeds):
    lines = ["| name | module | dtype | seed | sizes | bias | causal | lengths | weights "
             "| torch path | covers |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    yes_no = {True: "yes", False: "no"}
    for case in CASES:
        if case["module"] == TORCH_MODULE:
            sizes = f"E {case['embed_dim']}, H {case['num_heads']}, "
            if case["cross"]:
                sizes += f"kdim {case['kdim']}, vdim {case['vdim']}, "
            sizes += f"B {case['batch']}, Nq {case['num_queries']}, Nkv {case['num_keys']}"
            bias = yes_no[case["bias"]]
            path = "fast" if REPORT[case["name"]]["fast_path"] else "slow"
            module = "nn.MultiheadAttention " + ("cross" if case["cross"] else "self")
        else:
            sizes = (f"d_in {case['d_in']}, d_out {case['d_out']}, ctx "
                     f"{case['context_length']}, H {case['num_heads']}")
            if case["module"] == "grouped_query_attention":
                sizes += (f", kv {case['num_kv_heads']}, RoPE "
                          f"{case['rope_theta_base'] or 'none'}")
            sizes += f", B {case['batch']}, N {case['num_queries']}"
            bias = "qkv " + yes_no[case["qkv_bias"]]
            if case["module"] == "grouped_query_attention":
                bias += ", out_proj " + yes_no[case["out_proj_bias"]]
            path = "–"
            module = case["module"]
        lengths = "–" if case["lengths"] is None else str(case["lengths"])
        lines.append(f"| `{case['name']}` | {module} | {case['dtype']} | {seeds[case['name']]} "
                     f"| {sizes} | {bias} | {yes_no[case['causal']]} | {lengths} | "
                     f"{yes_no[case['need_weights']]} | {path} | {case['covers']} |")
    return "\n".join(lines)


REPORT = {}


def measured():
    """The README's sentence on the measured float32 deviations (x 1e-6)."""
    def worst(label):
        return max((v for r in REPORT.values() for k, v in r["worst"].items() if k == label),
                   default=0.0) * FLOAT32_VS_FLOAT64
    return (f"Measured over these files (relative to `max(1, |v|)`): stored float32 "
            f"outputs at most {worst('output float32 vs float64'):.2g} from float64, "
            f"weights {worst('weights float32 vs float64'):.2g}, average weights "
            f"{worst('average_weights float32 vs float64'):.2g}; a float32 forward in the "
            f"book's order (scores / sqrt(d) after the product) "
            f"{worst('book-order float32 vs float64 output'):.2g}, in torch's order "
            f"{worst('torch-order float32 vs float64 output'):.2g}.")

README_HEAD = r"""# Attention-variant reference fixtures (issue 13)

Non-causal self-attention, cross-attention with `kdim` / `vdim`, padded
batches (per-sequence lengths) and attention weights, against
`torch.nn.MultiheadAttention(embed_dim, num_heads, dropout=0.0, bias=...,
kdim=..., vdim=..., batch_first=True)` in `eval()` mode, and the non-causal
mode (`causal=False`) of the book modules of `tools/reference_modules.py`
(`CausalAttention`, `MultiHeadAttentionWrapper`, `MultiHeadAttention`,
`GroupedQueryAttention` with and without RoPE). Generated by
`tools/make_variant_fixtures.py`; regenerate (this deletes every `*.json`
here first and rewrites this README) with Debian's python3, which provides
PyTorch:

    /usr/bin/python3 tools/make_variant_fixtures.py

Do not edit these files by hand. Output is deterministic on a given machine
(the last bits of float results can depend on the BLAS PyTorch calls; these
were made with torch 1.13 on Debian's reference `libblas.so.3`). Read them
with `test/variant_fixture.hpp`.

## Parameters and inputs: the generator

Weights and inputs are **not stored**. They come from the splitmix64 stream
generator of `test/data/kv_cache/README.md` (the same functions:
`tools/make_kv_fixtures.py` in Python, `test/kv_fixture.hpp` in C++): element
`i` of stream `t` under the fixture's `seed` `s` is
`z = splitmix64(splitmix64(s ^ t) ^ i)`, turned into a float32 or float64
value with scale exponent `e` exactly as described there.

- **Parameters.** The parameter at index `t` of the module's PyTorch
  `state_dict` order (the book modules' `mask` buffers excluded; RoPE tables
  are not in the state_dict) is stream `t`, element `i` its `i`-th element in
  row-major order (PyTorch layout, weight `[out_features][in_features]`). Its
  scale exponent is `e = ceil(log2(fan_in) / 2)` with `fan_in` =
  `weight.shape[1]` for every weight (`.weight`, `in_proj_weight`,
  `q_proj_weight`, `k_proj_weight`, `v_proj_weight`), the layer's weight's
  `shape[1]` for a `<layer>.bias`, and `embed_dim` for `in_proj_bias` (the q,
  k and v biases of `nn.MultiheadAttention` in one tensor, one stream). Every
  bias is checked to be non-zero.
- **Inputs.** Self-attention: one input `x [batch][N][features]`, stream
  `1000`, used as query, key and value (`model(x, x, x)`, the same tensor).
  Cross-attention: `query [batch][Nq][embed_dim]` stream `1000`,
  `key [batch][Nkv][kdim]` stream `1001`, `value [batch][Nkv][vdim]` stream
  `1002`. All with `e = 0` (`|v| <= 1`), element `i` in row-major order.
  Padded positions hold ordinary stream values (not zeros): a module that
  reads them gives a different result.

## Library semantics of the expected values

- **Non-causal**: no mask. **Causal** (`causal: true`): key `j > i` masked
  for query `i` (`attn_mask = triu(ones(Nq, Nkv), diagonal=1)`, True =
  masked), as the library's causal modules.
- **Padding** (`lengths` not null, `key_padding_mask` in PyTorch): for
  sequence `b`, keys at positions `j >= lengths[b]` are masked (True in
  `key_padding_mask`). `0 <= lengths[b] <= Nkv`.
- **Padded query rows** (`query_lengths` not null: self-attention with
  lengths, `query_lengths = lengths`): output rows `i >= query_lengths[b]`
  are written as **zeros**, and so are their rows of the weights (per head
  and averaged). Cross-attention has `query_lengths: null`: every query row
  is computed, the lengths mask only the keys.
- **A query row without any unmasked key** (only when `lengths[b] == 0`)
  never gives NaN: its weights are **zeros**, its attention context is zero,
  so its output row is `out_proj(0)` = `out_proj.bias` (zero without a bias).
  This is what PyTorch's SDPA (newer PyTorch) gives; torch 1.13's
  `nn.MultiheadAttention` (`F.multi_head_attention_forward`) gives NaN rows
  there (its fast path as well), and the generator replaces them (listed in
  the file's `postprocessing`). In self-attention such rows are padded
  query rows anyway (zeros).
- **Weights** (`need_weights: true`): `weights [batch][num_heads][Nq][Nkv]`
  is softmax over the keys per head (`need_weights=True,
  average_attn_weights=False`); `average_weights [batch][Nq][Nkv]` is their
  mean over the heads (`average_attn_weights=True`, PyTorch computes
  `sum / num_heads`). Rows of unmasked queries sum to 1; masked keys
  (causal: above the diagonal, padded keys) have weight exactly 0. Eval mode:
  no dropout.
- **Output** `[batch][Nq][out_width]`: `out_width` = `embed_dim` for
  `nn.MultiheadAttention`, `d_out` for the book modules, except
  `num_heads * d_out` for `multi_head_attention_wrapper`.

## Parameter mapping (nn.MultiheadAttention to the library's names)

`params` keeps PyTorch's `state_dict` names and shapes; the library's
(book) names are, with `E = embed_dim`:

| library | from |
| --- | --- |
| `W_query.weight [E][E]` | rows `[0, E)` of `in_proj_weight [3E][E]`, or `q_proj_weight [E][E]` |
| `W_key.weight [E][kdim]` | rows `[E, 2E)` of `in_proj_weight`, or `k_proj_weight [E][kdim]` |
| `W_value.weight [E][vdim]` | rows `[2E, 3E)` of `in_proj_weight`, or `v_proj_weight [E][vdim]` |
| `W_query.bias`, `W_key.bias`, `W_value.bias [E]` | elements `[0, E)`, `[E, 2E)`, `[2E, 3E)` of `in_proj_bias [3E]` (only when `bias`) |
| `out_proj.weight [E][E]` | `out_proj.weight` |
| `out_proj.bias [E]` | `out_proj.bias`; with `bias: false` absent: listed in `zero_params`, loads as zero |

PyTorch uses `in_proj_weight` when `kdim == vdim == embed_dim` (also for
cross-attention with three different inputs), else the three separate
weights. `bias=False` removes both `in_proj_bias` and `out_proj.bias`.
`GroupedQueryAttention` without `out_proj_bias` also lists `out_proj.bias` in
`zero_params`.

## What torch does (torch 1.13) and the tolerance

- `F.multi_head_attention_forward` (the path for everything the fast path
  below does not take: cross-attention, an `attn_mask`, an odd `num_heads`)
  scales `q` by `1/sqrt(head_dim)` **before** `q @ k^T` (the book scales the
  scores after); masks are added as `-inf` (`baddbmm`); the head average is
  `sum(dim=1) / num_heads`.
- `nn.MultiheadAttention.forward` takes the fused fast path
  `torch._native_multi_head_attention` for self-attention (`query is key is
  value`) in eval mode under `no_grad` with `batch_first`, no `attn_mask`
  and an even `num_heads` (also with `key_padding_mask`, and with
  `need_weights`); it also scales `q` first (with the bias, before the
  product) and gives NaN for fully masked rows too. The file's `torch_path`
  says which path made it. In torch 1.13 the fast path fails for
  `bias=False` (`TypeError: _native_multi_head_attention(): argument
  'qkv_bias' (position 7) must be Tensor, not NoneType`), so every
  self-attention case without biases here has an odd `num_heads` or a
  causal `attn_mask`.
- With `head_dim` a power of 4 (4, 16, 64) `sqrt(head_dim)` is a power of 2
  and both orders give the same bits; with `head_dim` 2, 3, 5 or 6 the cases
  here show the difference. For every float32 file, the generator requires
  the stored values (output and weights) within `1e-6 * max(1, |v|)` of the
  same model evaluated in float64 (parameters and inputs are exact in both)
  and of the explicit float64 computation of the semantics above from the
  library-named parameters (float64 files: `1e-12`), so a float32
  implementation within `1e-6` of the exact result meets the C++ tests'
  `2e-6` whichever order it scales in; it prints how far the book order and
  torch's order each are from float64. @MEASURED@

## Checks in the generator

Before writing anything: float32 results within `1e-6` of the float64 model
(above); the results (after the replacements above) within `1e-12` of the
explicit float64 computation from the library-named parameters (which checks
the mapping table); every `nn.MultiheadAttention` self-attention case
without padding equals the book's `MultiHeadAttention(E, E, N, 0.0, H,
qkv_bias=bias, causal=...)` loaded with the mapped parameters (rtol `1e-5` /
`1e-12`); weights rows of unmasked queries sum to 1, masked keys and zeroed
rows are exactly 0; NaN only where a row has no unmasked key; every book case
differs from its causal mode and its last row (which sees every key in both
modes) equals the causal module's. After writing, each file is re-loaded,
its structure checked (state_dict names and shapes, streams = index, scale
exponents by the rule, input streams, float32 values round-trip) and
recomputed from its metadata alone, which must give the same JSON.

## Schema

Each file holds one JSON object on a single line:

| key | meaning |
| --- | --- |
| `generated_by` | one sentence: script, torch version, generator seed, constructor call, the forward call and path |
| `name` | case name (= file name without `.json`) |
| `module` | `torch.nn.MultiheadAttention`, or a book module: `causal_attention`, `multi_head_attention_wrapper`, `multi_head_attention`, `grouped_query_attention` |
| `kind` | `self_attention` (one input `x`) or `cross_attention` (`query`, `key`, `value`) |
| `dtype`, `seed` | `float32` / `float64`; the generator seed |
| `embed_dim`, `num_heads`, `kdim`, `vdim`, `bias`, `batch_first`, `dropout` | `nn.MultiheadAttention` only: constructor arguments (`kdim`, `vdim` = `embed_dim` when not given) |
| `torch_call`, `torch_path` | `nn.MultiheadAttention` only: the forward call and which implementation ran |
| `d_in`, `d_out`, `context_length`, `num_heads`, `qkv_bias` | book modules only: constructor arguments (`num_heads` 1 for `causal_attention`) |
| `num_kv_heads`, `rope_theta_base`, `out_proj_bias` | `grouped_query_attention` only, as in `test/data/kv_cache/` (`rope_theta_base` 0 = no RoPE) |
| `batch`, `num_queries`, `num_keys` | B, Nq, Nkv (`num_keys = num_queries` for self-attention) |
| `causal` | causal mask on (`attn_mask`) |
| `lengths` | `null` or B key lengths (`key_padding_mask`) |
| `query_lengths` | `null` (every query row computed) or B lengths: output and weight rows `i >= query_lengths[b]` are zero |
| `need_weights` | whether `weights` and `average_weights` are present |
| `params` | list, in `state_dict` order, of `{"name", "shape", "stream", "scale_exponent"}` |
| `zero_params` | list of `{"name", "shape", "note"}`: parameters the library's module has and this module lacks, loaded as zero |
| `inputs` | list of `{"name", "shape", "stream", "scale_exponent"}`: `x`, or `query`, `key`, `value` |
| `postprocessing` | list of sentences: what the generator changed in torch's results (padded rows zeroed, NaN rows replaced); empty when nothing |
| `output` | `{"shape": [B, Nq, out_width], "data": [...]}` |
| `weights` | `{"shape": [B, num_heads, Nq, Nkv], "data": [...]}` (need_weights only) |
| `average_weights` | `{"shape": [B, Nq, Nkv], "data": [...]}` (need_weights only) |

`data` is the flat row-major list of elements, each written as Python
`float()` of the tensor element (shortest round-tripping repr), so parsing it
as a double and, for float32 files, converting to float gives back the exact
element value.

## Cases

Case *i* (0-based, in the order of the table) uses seed `3000 + i`, except
that a case made from an earlier case's model (same sizes; only the mask,
padding or weights differ) uses that case's seed, so its parameters and
inputs are the same. "torch path": fast = `torch._native_multi_head_attention`,
slow = `F.multi_head_attention_forward`.

"""


def main():
    _check_generator()
    seeds = case_seeds()
    fixtures = [make_fixture(seeds[c["name"]], c, REPORT) for c in CASES]
    os.makedirs(OUT_DIR, exist_ok=True)
    stale = [e for e in os.listdir(OUT_DIR) if e.endswith(".json")]
    for entry in stale:
        os.remove(os.path.join(OUT_DIR, entry))
    total = 0
    for fixture in fixtures:
        path = os.path.join(OUT_DIR, f"{fixture['name']}.json")
        with open(path, "w") as out:
            out.write(json.dumps(fixture, separators=(",", ":")) + "\n")
        verify(path)
        size = os.path.getsize(path)
        total += size
        r = REPORT[fixture["name"]]
        worst = ", ".join(f"{k} {v:.3g}" for k, v in r["worst"].items())
        print(f"wrote {os.path.relpath(path, REPO)}  {size} bytes"
              f"{' (fast path)' if r['fast_path'] else ''}; worst x tolerance: {worst}")
    with open(os.path.join(OUT_DIR, "README.md"), "w") as f:
        f.write(README_HEAD.replace("@MEASURED@", measured()))
        f.write(case_table(seeds))
        f.write("\n")
    print(f"total {total} bytes in {len(fixtures)} files")


if __name__ == "__main__":
    main()
