#!/usr/bin/env python3
"""Generate the attention-sink reference fixtures (issue 41:
``mha::attention_scores{.sinks = true}``, gpt-oss's learned sinks) for the C++
"mha" library.

Run from anywhere with Debian's python3 (which provides PyTorch; the pyenv
``python3`` on PATH has no torch):

    /usr/bin/python3 tools/make_sink_fixtures.py

Writes one JSON file per case into ``test/data/sinks/`` (stale ``*.json``
files there are deleted first) and its README.md. Dependencies: torch + stdlib.

The files use the schema of the score fixtures (``test/data/scores/README.md``,
``tools/make_score_fixtures.py``: the attention-variant schema of the book's
causal MultiHeadAttention and the Llama GroupedQueryAttention of
``tools/reference_modules.py``, plus ``softcap``, ``alibi``, ``alibi_slopes``,
``query_weight_scale``) and the keys ``sliding_window`` and ``sinks``. The
sinks are drawn from the splitmix64 stream generator of
``tools/make_kv_fixtures.py`` like the other parameters: stream = the position
of ``sinks`` in the library module's parameter walk (the last entry, after
out_proj.bias, which the library's grouped_query_attention always has), scale
exponent -1 (values in [-2, 2)), then 1 added (exact): values in [-1, 3), large
enough next to these small logits to take a visible share of each softmax row.

The expected output is an explicit forward written from Hugging Face's
GptOssAttention eager forward (transformers/models/gpt_oss/modeling_gpt_oss.py,
eager_attention_forward): ``attn_weights = q @ k^T * scaling`` (+ the causal /
sliding-window mask), ``sinks = module.sinks.reshape(1, -1, 1, 1).expand(...)``,
``combined = cat([attn_weights, sinks], -1)``, ``combined - combined.max(-1,
keepdim=True).values``, ``softmax``, ``probs[..., :-1]``, ``@ v``; with the
book's projections and RoPE (``apply_rope``, rotate-half as gpt-oss's
``_apply_rotary_emb``) and, where a case has them, Gemma 2's soft-cap and
BLOOM's ALiBi before the mask. float32 fixtures are checked against the same
computation in float64.

That forward is make_score_fixtures.py's reference_forward with its sink step
and GptOssAttention's scaling (``scaling="gpt-oss"``); this file holds the
cases, the sinks (make_sinks), the sink checks and the README text, and takes
the case set-up, the tolerance checks, the JSON object's common keys, the
re-read check and the main loop (write_fixtures) from make_score_fixtures.py.
"""

import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402

from make_kv_fixtures import DTYPES, FLOAT32_VS_FLOAT64, RTOL, stream_values  # noqa: E402
import make_score_fixtures as scores  # noqa: E402

REPO = os.path.dirname(HERE)
OUT_DIR = os.path.join(REPO, "test", "data", "sinks")
SCRIPT = "tools/make_sink_fixtures.py"
SEED_BASE = 4300
SINK_SCALE_EXPONENT = -1  # stream values in [-2, 2)
SINK_OFFSET = 1           # then + 1: [-1, 3)
# The largest sink share of a case's softmax rows must reach this (the sinks matter).
MIN_MAX_SHARE = 0.3


# --------------------------------------------------------------------------
# Cases. Case i (0-based) uses seed 4300 + i.


def case(name, module, dtype, d_in, d_out, ctx, H, qkv_bias, B, N, window=0, softcap=0,
         alibi=False, gqa=None, query_scale=1, covers=""):
    """A causal book module with sinks (and the other score options given).
    gqa: (num_kv_heads, rope_theta_base, out_proj_bias)."""
    c = scores.case(name, module, dtype, d_in, d_out, ctx, H, qkv_bias, B, N, softcap=softcap,
                    alibi=alibi, gqa=gqa, query_scale=query_scale, window=window, covers=covers)
    assert window == 0 or N >= 3 * window, (name, "N >= 3 W: the window slides")
    return c


MHA, GQA = "multi_head_attention", "grouped_query_attention"

CASES = [
    case("sinks_mha_f32_h3_n6", MHA, "float32", 12, 12, 8, 3, True, 2, 6,
         covers="sinks only, head_dim 4, qkv bias, batch 2"),
    case("sinks_mha_f64_h3_n6", MHA, "float64", 12, 12, 8, 3, True, 2, 6,
         covers="as sinks_mha_f32_h3_n6 in float64"),
    case("sinks_sw3_gqa_f32_rope_h4_kv2_n10", GQA, "float32", 8, 16, 12, 4, True, 2, 10,
         window=3, gqa=(2, 10_000, True),
         covers="gpt-oss-like: sinks, sliding window 3 (N >= 3 W), RoPE, biases everywhere"),
    case("sinks_gqa_f64_norope_h4_kv2_n7", GQA, "float64", 8, 16, 8, 4, False, 2, 7,
         gqa=(2, 0, False),
         covers="sinks only, no RoPE, no biases (out_proj.bias zero: sinks is walk entry 5)"),
    case("sinks_softcap_mha_f32_h4_n7", MHA, "float32", 16, 16, 8, 4, True, 2, 7, softcap=2,
         query_scale=32, covers="soft-cap 2 then sinks (W_query x 32)"),
    case("sinks_softcap_alibi_gqa_f64_rope_h4_kv1_n6", GQA, "float64", 8, 16, 8, 4, True, 2, 6,
         softcap=3, alibi=True, gqa=(1, 10_000, True), query_scale=64,
         covers="soft-cap 3, ALiBi, RoPE, multi-query, then sinks"),
    case("sinks_sw8_gqa_f32_rope_h4_kv2_n40", GQA, "float32", 32, 32, 48, 4, True, 1, 40,
         window=8, gqa=(2, 10_000, True),
         covers="40 tokens, window 8: blocked kernels (dynamic twin, cached chunk of 12)"),
    case("sinks_mha_f64_h4_n40", MHA, "float64", 32, 32, 48, 4, True, 1, 40,
         covers="40 tokens, sinks only: blocked kernels, float64"),
]


# --------------------------------------------------------------------------
# The sinks and the reference (Hugging Face GptOssAttention, eager: the
# sink step of make_score_fixtures.py's reference_forward).


def library_walk_size(case_):
    """The number of parameters before `sinks` in the library module's walk:
    W_query/W_key/W_value (.weight, .bias with qkv_bias), out_proj.weight,
    out_proj.bias (the library's modules always have it)."""
    return 3 * (2 if case_["qkv_bias"] else 1) + 2


def make_sinks(case_, seed, dtype_name):
    stream = library_walk_size(case_)
    values = stream_values(seed, stream, case_["num_heads"], dtype_name, SINK_SCALE_EXPONENT)
    sinks = torch.tensor(values, dtype=DTYPES[dtype_name]) + SINK_OFFSET
    assert [float(v) for v in sinks.tolist()] == [v + SINK_OFFSET for v in values]  # exact
    return stream, sinks


def forward(case_, lib, x, sinks, **options):
    """The output [B][N][d_out] from the library-named parameters `lib`, the
    sinks [H] and the input x (all in one dtype): make_score_fixtures.py's
    reference_forward with its sink step and GptOssAttention's scaling
    (q k^T * head_dim ** -0.5). options: its sink_form ("hf": GptOss's eager
    lines; "direct": the weights e^l / (e^s + sum e^l), the library's
    formula), weights_only (the attention weights [B][H][N][N] instead),
    window (None: the case's)."""
    return scores.reference_forward(case_, lib, x, sinks=sinks, scaling="gpt-oss", **options)


def make_fixture(seed, case_, report):
    """Computes and checks one case; returns its JSON object."""
    name, dtype_name = case_["name"], case_["dtype"]
    model, plan, x, lib = scores.prepare(case_, seed)
    assert len(lib) == library_walk_size(case_), (name, sorted(lib))
    stream, sinks = make_sinks(case_, seed, dtype_name)
    lib64 = {k: v.double() for k, v in lib.items()}
    x64, sinks64 = x.double(), sinks.double()
    worst = {}
    within = scores.checker(name, worst)

    with torch.no_grad():
        out = forward(case_, lib, x, sinks)
        out64 = forward(case_, lib64, x64, sinks64)
        if dtype_name == "float32":
            within("float32 vs float64", out, out64, FLOAT32_VS_FLOAT64)
        # the library's formula e^l / (e^s + sum e^l) gives the same (float64)
        within("vs the direct formula (float64)",
               forward(case_, lib64, x64, sinks64, sink_form="direct"), out64, RTOL["float64"])
        # sinks of -inf: the module without sinks (without a window: the score
        # fixtures' forward, the book's division by sqrt(head_dim))
        none = torch.full_like(sinks, -math.inf)
        plain = forward(case_, lib, x, none)
        if case_["sliding_window"] == 0:
            within("sinks -inf vs make_score_fixtures' forward", plain,
                   scores.reference_forward(case_, lib, x), RTOL[dtype_name])
            if not case_["softcap"] and not case_["alibi"]:
                within("sinks -inf vs book module", plain, model(x), RTOL[dtype_name])
        assert not torch.allclose(plain, out, rtol=1e-3, atol=1e-3), (name, "the sinks: no effect")
        if case_["sliding_window"]:
            assert not torch.allclose(forward(case_, lib, x, sinks, window=0), out, rtol=1e-3,
                                      atol=1e-3), (name, "the window: no effect")
        scores.check_prefixes(case_, within, lambda xk: forward(case_, lib, xk, sinks), x, out)
        # the sinks' share of each row: 1 - sum of the weights
        share = 1 - forward(case_, lib64, x64, sinks64, weights_only=True).sum(-1)
        assert float(share.min()) > 0 and float(share.max()) >= MIN_MAX_SHARE, (
            name, "sink share", float(share.min()), float(share.max()))
    assert not bool(out.isnan().any())
    report[name] = {"worst": worst, "share_min": float(share.min()),
                    "share_mean": float(share.mean()), "share_max": float(share.max()),
                    "sinks": [float(v) for v in sinks.tolist()]}
    fx = scores.fixture_json(
        case_, seed, plan, out, SCRIPT,
        f", the sinks from stream {stream} (scale exponent {SINK_SCALE_EXPONENT}) plus "
        f"{SINK_OFFSET}; the explicit causal forward of test/data/sinks/README.md in "
        f"{dtype_name} (the book's projections and RoPE, Hugging Face GptOssAttention's eager "
        f"sink lines).")
    fx["sliding_window"] = case_["sliding_window"]
    fx["sinks"] = {"name": "sinks", "shape": [case_["num_heads"]], "stream": stream,
                   "scale_exponent": SINK_SCALE_EXPONENT, "offset": SINK_OFFSET,
                   "values": [float(v) for v in sinks.tolist()]}
    return fx


def describe(c, r):
    """The printed summary and the README table's cells of a sink fixture."""
    share = f"{r['share_min']:.3f} / {r['share_mean']:.3f} / {r['share_max']:.3f}"
    return (f"sinks {['%.3f' % v for v in r['sinks']]}, share {share}",
            [c["sliding_window"] or "off", c["softcap"] or "off", "yes" if c["alibi"] else "no",
             c["query_weight_scale"], ", ".join("%.3f" % v for v in r["sinks"]),
             f"{r['share_min']:.2f} / {r['share_mean']:.2f} / {r['share_max']:.2f}"])


README_HEAD = r"""# Attention-sink reference fixtures (issue 41)

Attention sinks (`mha::attention_scores{.sinks = true}`, gpt-oss's learned
per-head sink logits), alone and with a sliding window, soft-capping and ALiBi,
on the causal book `MultiHeadAttention` and the Llama `GroupedQueryAttention`
(with and without RoPE) of `tools/reference_modules.py`, float32 and float64.
Generated by `tools/make_sink_fixtures.py`; regenerate (this deletes every
`*.json` here first and rewrites this README) with Debian's python3, which
provides PyTorch:

    /usr/bin/python3 tools/make_sink_fixtures.py

Do not edit these files by hand. Made with torch {torch_version}. Read by
`test/test_sinks.cpp` through `test/variant_fixture.hpp`.

## Schema

The schema of `test/data/scores/README.md` (the variant schema of
`test/data/variants/README.md` with `causal: true`, plus `softcap`, `alibi`,
`alibi_slopes`, `query_weight_scale`), plus:

- `sliding_window` (integer, 0 = off): the window W; query i sees keys
  max(0, i - W + 1)..i;
- `sinks`: `{"name": "sinks", "shape": [num_heads], "stream", "scale_exponent",
  "offset", "values"}`. The sinks are `stream_values(seed, stream, num_heads,
  dtype, scale_exponent) + offset` (exact in the dtype): `stream` is the
  position of `sinks` in the library module's parameter walk (after
  W_query/W_key/W_value with their biases and out_proj.weight,
  out_proj.bias; the library's modules always have out_proj.bias, a zero
  parameter of the files without it), `scale_exponent` -1 and `offset` 1, so
  values in [-1, 3). `values` repeats them (the test checks that it
  regenerates them).

## The expected output

An explicit forward, from the library-named parameters, in the fixture's
dtype:

1. Q, K, V as the book's modules compute them (`x @ W.T + b`), heads split;
   RoPE with the book's `apply_rope` (rotate-half) when `rope_theta_base > 0`;
   kv heads repeated (`repeat_interleave`, Hugging Face's `repeat_kv`);
2. `attn_weights = (Q @ K^T) * scaling`, `scaling = head_dim ** -0.5`
   (GptOssAttention);
3. soft-cap (Gemma 2's lines) and ALiBi (BLOOM's slopes, `- m_h * (i - j)`)
   where the case has them, as in `test/data/scores/README.md`;
4. the mask (`-inf` where j > i or, with a window W, j <= i - W; Hugging
   Face adds `finfo.min`, which gives the same zeros);
5. Hugging Face GptOssAttention's eager lines (`modeling_gpt_oss.py`):
   `sinks = module.sinks.reshape(1, -1, 1, 1).expand(B, -1, N, -1)`,
   `combined_logits = torch.cat([attn_weights, sinks], dim=-1)`,
   `combined_logits = combined_logits - combined_logits.max(dim=-1, keepdim=True).values`,
   `probs = softmax(combined_logits, dim=-1)`, `scores = probs[..., :-1]`;
6. `scores @ V`, heads joined, `out_proj`.

Checks before writing: float32 against the same computation in float64
(within 1e-6 relative to max(1, |expected|)); the library's formula
`e^l / (e^s_h + sum e^l)` against step 5 in float64 (1e-12); sinks of -inf
give the forward without sinks (without a window: the score fixtures'
forward, and the book module's `model(x)` when no other option is on); the
sinks (and the window) change the output; the first k tokens alone give the
first k output rows (so a KV-cache stream of the same tokens has the same
expected rows); every row gives the sink a share > 0 of its softmax, and some
row at least 30% (column "sink share": min / mean / max over the rows of
every head and sequence).

## Cases

| file | module | dtype | d_in | d_out | ctx | heads | kv heads | RoPE | batch | N | window | softcap | alibi | W_query x | sinks | sink share | covers |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
"""


def main():
    scores.write_fixtures(OUT_DIR, CASES, SEED_BASE, make_fixture, describe, README_HEAD,
                          float32_lists=(("output", "data"), ("sinks", "values")),
                          max_total=150_000)


if __name__ == "__main__":
    main()
