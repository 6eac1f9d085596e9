#!/usr/bin/env python3
"""Generate the score-option reference fixtures (issue 41: logit soft-capping,
ALiBi, sliding-window attention) for the C++ "mha" library.

Run from anywhere with Debian's python3 (which provides PyTorch; the pyenv
``python3`` on PATH has no torch):

    /usr/bin/python3 tools/make_score_fixtures.py

Writes one JSON file per case into ``test/data/scores/`` (stale ``*.json``
files there are deleted first) and its README.md. Dependencies: torch + stdlib.

The files use the schema of the attention-variant fixtures
(``test/data/variants/README.md``, read by ``test/variant_fixture.hpp``) for
the book's MultiHeadAttention and the Llama GroupedQueryAttention of
``tools/reference_modules.py`` (causal), plus the keys ``softcap``, ``alibi``,
``alibi_slopes``, ``query_weight_scale`` and, in the windowed files only,
``sliding_window``. Weights and inputs are not
stored: they come from the splitmix64 stream generator of
``tools/make_kv_fixtures.py``; W_query's weight and bias are then multiplied
by ``query_weight_scale`` (a power of two, so exactly) to make the logits
large enough for the soft-cap to bend them.

The expected output is an explicit forward written from the public model
code, not from the library: the projections, RoPE (the book's apply_rope) and
the per-head product q k^T / sqrt(head_dim) of the book's modules; then
Hugging Face Gemma 2's soft-capping lines (modeling_gemma2.py, eager
attention: ``attn_weights / softcap``, ``torch.tanh``, ``* softcap``); then
the ALiBi bias -m_h * (i - j) with BLOOM's slopes (modeling_bloom.py,
build_alibi_tensor, computed here in the fixture's dtype); then the causal
mask and, with a sliding window W, Hugging Face's sliding-window mask (key k
visible to query q iff k <= q and k > q - W: masking_utils'
causal_mask_function and sliding_window_overlay, the mask of Mistral's
create_sliding_window_causal_mask), masked logits -inf, and the softmax.
float32 fixtures are checked against the same computation in float64, ALiBi
against BLOOM's own form (+m_h * j, which gives the same softmax), and the
window against Mistral's additive mask of transformers 4.4x
(_prepare_4d_causal_attention_mask_with_cache_position: finfo.min where
`arange(N) > cache_position` or `arange(N) <= cache_position - W`) and against
a softmax over the window's keys alone (sliced, no mask).

The forward (reference_forward) also serves the attention-sink generators:
tools/make_sink_fixtures.py and tools/make_sink_safetensors_fixtures.py call
it with an optional sink step (Hugging Face GptOssAttention's eager lines: a
learned logit per head joins each softmax denominator unscaled and adds no
value row; or the direct formula e^l / (e^s_h + sum e^l)), GptOssAttention's
scaling (q k^T * head_dim ** -0.5 in place of the book's division by
sqrt(head_dim)) and, for the safetensors file, its own RoPE (the score
fixtures use none of them). make_sink_fixtures.py also shares this file's
case set-up (prepare), tolerance checks (checker, check_prefixes), JSON
object (fixture_json), re-read check (verify) and main loop (write_fixtures).
"""

import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402

from make_kv_fixtures import DTYPES, FLOAT32_VS_FLOAT64, RTOL, _check_generator  # noqa: E402
from make_kv_fixtures import max_violation  # noqa: E402
import make_variant_fixtures as variants  # noqa: E402
import reference_modules as book  # noqa: E402

REPO = os.path.dirname(HERE)
OUT_DIR = os.path.join(REPO, "test", "data", "scores")
SCRIPT = "tools/make_score_fixtures.py"
SEED_BASE = 4100


# --------------------------------------------------------------------------
# Cases. Case i (0-based) uses seed 4100 + i.


def case(name, module, dtype, d_in, d_out, ctx, H, qkv_bias, B, N, softcap=0, alibi=False,
         gqa=None, query_scale=1, window=0, covers=""):
    """A causal book module (multi_head_attention or grouped_query_attention)
    with score options. gqa: (num_kv_heads, rope_theta_base, out_proj_bias).
    window: the sliding window W (0: none)."""
    c = variants.book_case(name, module, dtype, d_in, d_out, ctx, H, qkv_bias, B, N, gqa=gqa,
                           covers=covers)
    c["causal"] = True
    c.update(softcap=softcap, alibi=alibi, query_weight_scale=query_scale, sliding_window=window)
    assert window >= 0 and N <= ctx
    return c


MHA, GQA = "multi_head_attention", "grouped_query_attention"

CASES = [
    # soft-capping only (cap 2; W_query scaled so that many |logits| exceed it)
    case("softcap_mha_f32_h3_n6", MHA, "float32", 12, 12, 8, 3, True, 2, 6, softcap=2,
         query_scale=32, covers="cap 2, head_dim 4, qkv bias, batch 2"),
    case("softcap_mha_f64_h3_n6", MHA, "float64", 12, 12, 8, 3, True, 2, 6, softcap=2,
         query_scale=32, covers="as softcap_mha_f32_h3_n6 in float64"),
    case("softcap_gqa_f32_rope_h4_kv2_n7", GQA, "float32", 8, 16, 8, 4, False, 2, 7, softcap=2,
         gqa=(2, 10_000, False), query_scale=64, covers="GQA with RoPE 10000, no biases"),
    case("softcap_gqa_f64_norope_h4_kv2_n5", GQA, "float64", 8, 16, 8, 4, True, 2, 5,
         softcap=2, gqa=(2, 0, True), query_scale=64, covers="GQA without RoPE, biases"),
    case("softcap_mha_f32_h4_n40", MHA, "float32", 32, 32, 48, 4, True, 1, 40, softcap=2,
         query_scale=32, covers="40 tokens, d_in 32: blocked kernels (dynamic twin, chunks "
         "of more than 8 cached tokens)"),
    # ALiBi only
    case("alibi_mha_f32_h3_n6", MHA, "float32", 12, 12, 8, 3, True, 2, 6, alibi=True,
         covers="3 heads: BLOOM's extra slope (slopes 2^-4, 2^-8, 2^-2)"),
    case("alibi_mha_f64_h6_n7", MHA, "float64", 12, 12, 8, 6, False, 2, 7, alibi=True,
         covers="6 heads of width 2: slopes 2^-2, 2^-4, 2^-6, 2^-8, 2^-1, 2^-3"),
    case("alibi_gqa_f32_norope_h6_kv3_n7", GQA, "float32", 12, 24, 8, 6, True, 2, 7,
         alibi=True, gqa=(3, 0, True), covers="GQA without RoPE, 6 heads (extra slopes)"),
    case("alibi_gqa_f64_rope_h4_kv2_n6", GQA, "float64", 8, 16, 8, 4, False, 2, 6, alibi=True,
         gqa=(2, 10_000, False), covers="GQA with RoPE and ALiBi together"),
    case("alibi_gqa_f32_rope_h8_kv2_n8", GQA, "float32", 16, 32, 8, 8, False, 1, 8, alibi=True,
         gqa=(2, 10_000, False), covers="8 heads: slopes 2^-1 .. 2^-8, RoPE"),
    case("alibi_mha_f64_h6_n40", MHA, "float64", 32, 48, 48, 6, True, 1, 40, alibi=True,
         covers="40 tokens (distances up to 39), blocked kernels, d_in != d_out"),
    # soft-capping and ALiBi together (cap 3)
    case("both_mha_f32_h6_n7", MHA, "float32", 12, 12, 8, 6, True, 2, 7, softcap=3, alibi=True,
         query_scale=32, covers="cap 3 then ALiBi, 6 heads"),
    case("both_mha_f64_h3_n6", MHA, "float64", 12, 12, 8, 3, True, 2, 6, softcap=3, alibi=True,
         query_scale=32, covers="cap 3 then ALiBi, 3 heads"),
    case("both_gqa_f32_rope_h6_kv3_n7", GQA, "float32", 12, 24, 8, 6, True, 2, 7, softcap=3,
         alibi=True, gqa=(3, 10_000, True), query_scale=64,
         covers="GQA, RoPE, soft-cap and ALiBi, 6 heads"),
    case("both_gqa_f64_norope_h4_kv1_n5", GQA, "float64", 8, 16, 8, 4, False, 2, 5, softcap=3,
         alibi=True, gqa=(1, 0, False), query_scale=64, covers="multi-query, no RoPE"),
    case("both_gqa_f64_rope_h4_kv2_n7", GQA, "float64", 8, 16, 8, 4, True, 1, 7, softcap=3,
         alibi=True, gqa=(2, 10_000, True), query_scale=64, covers="GQA, RoPE, float64"),
    case("both_mha_f32_h3_n40", MHA, "float32", 32, 24, 48, 3, True, 1, 40, softcap=3,
         alibi=True, query_scale=64, covers="40 tokens, 3 heads, blocked kernels"),
    # sliding window (Mistral's and Hugging Face's: query q sees keys q-W+1..q)
    case("window_mha_f32_h3_w3_n10", MHA, "float32", 12, 12, 16, 3, True, 2, 10, window=3,
         covers="window 3, 10 tokens (N > 3W), batch 2"),
    case("window_mha_f64_h4_w4_n13", MHA, "float64", 16, 16, 16, 4, False, 1, 13, window=4,
         covers="window 4, 13 tokens (N > 3W), no qkv bias; small shapes (simple loops), "
         "a cached chunk of 11 tokens"),
    case("window_gqa_f32_rope_h4_kv2_w3_n9", GQA, "float32", 8, 16, 16, 4, False, 2, 9,
         window=3, gqa=(2, 10_000, False), covers="GQA with RoPE 10000, window 3, no biases"),
    case("window_gqa_f64_norope_h4_kv1_w1_n6", GQA, "float64", 8, 16, 8, 4, True, 2, 6,
         window=1, gqa=(1, 0, True), covers="window 1 (each query sees only itself), "
         "multi-query, no RoPE, biases"),
    case("window_softcap_gqa_f32_rope_h4_kv2_w4_n11", GQA, "float32", 16, 16, 16, 4, True, 2,
         11, softcap=2, window=4, gqa=(2, 10_000, False), query_scale=64,
         covers="Gemma 2's local layers: GQA, RoPE, soft-cap then window"),
    case("window_alibi_mha_f64_h3_w5_n12", MHA, "float64", 12, 12, 16, 3, True, 2, 12,
         alibi=True, window=5, covers="ALiBi then window 5, 3 heads (BLOOM's extra slope)"),
    case("window_mha_f32_h4_w8_n40", MHA, "float32", 32, 32, 48, 4, True, 1, 40, window=8,
         covers="40 tokens, window 8: blocked kernels (dynamic twin, chunks of more than 8 "
         "cached tokens)"),
    case("window_gqa_f64_rope_h4_kv2_w8_n40", GQA, "float64", 32, 16, 48, 4, True, 1, 40,
         window=8, gqa=(2, 10_000, True), covers="40 tokens, window 8, GQA with RoPE, blocked "
         "kernels, float64"),
]


# --------------------------------------------------------------------------
# The reference: BLOOM's slopes, Gemma 2's soft-cap, an explicit forward
# (with gpt-oss's sinks for make_sink_fixtures.py).


def build_alibi_slopes(num_heads, dtype):
    """The slopes of transformers/models/bloom/modeling_bloom.py's
    build_alibi_tensor (the same lines), in `dtype`."""
    closest_power_of_2 = 2 ** math.floor(math.log2(num_heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3))), dtype=dtype)
    powers = torch.arange(1, 1 + closest_power_of_2, dtype=torch.int32)
    slopes = torch.pow(base, powers)
    if closest_power_of_2 != num_heads:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3))),
                                  dtype=dtype)
        num_remaining_heads = min(closest_power_of_2, num_heads - closest_power_of_2)
        extra_powers = torch.arange(1, 1 + 2 * num_remaining_heads, 2, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra_base, extra_powers)], dim=0)
    assert slopes.dtype == dtype
    return slopes


def visible_keys(N, window):
    """[N][N] bool, True where query q (row) attends to key k (column): Hugging
    Face's causal mask (transformers' masking_utils, causal_mask_function:
    kv_idx <= q_idx), and with a sliding window W > 0 also its
    sliding_window_overlay (kv_idx > q_idx - W), the two AND-ed as
    create_sliding_window_causal_mask does for Mistral."""
    q_idx = torch.arange(N)[:, None]
    kv_idx = torch.arange(N)[None, :]
    visible = kv_idx <= q_idx
    if window:
        visible = visible & (kv_idx > q_idx - window)
    return visible


def mistral_additive_mask(N, window, dtype):
    """[N][N] the additive mask of Mistral's eager attention in transformers 4.4x
    (_prepare_4d_causal_attention_mask_with_cache_position, no cache, no
    padding): torch.finfo(dtype).min where key k > q (diagonal_attend_mask) or
    k <= q - W (sliding_attend_mask), 0 elsewhere."""
    cache_position = torch.arange(N)
    causal_mask = torch.full((N, N), torch.finfo(dtype).min, dtype=dtype)
    attend = torch.arange(N) > cache_position.reshape(-1, 1)
    attend |= torch.arange(N) <= cache_position.reshape(-1, 1) - window
    return causal_mask * attend


def reference_forward(case_, lib, x, bloom_form=False, options=True, logits_only=False,
                      window_form="mask", window=None, sinks=None, sink_form="hf",
                      weights_only=False, scaling="book", rope=None):
    """The output [B][N][d_out] from the library-named parameters `lib` and
    the input x (all in one dtype). bloom_form: the ALiBi bias as BLOOM adds
    it (+m_h * j) instead of -m_h * (i - j). options=False: no soft-cap, no
    ALiBi, no window (the book module's function). logits_only: the scaled
    logits q k^T / sqrt(head_dim) [B][H][N][N] instead (the values the cap
    sees). window: the sliding window (None: the case's). window_form: how
    the window is applied: "mask" (visible_keys, -inf), "mistral" (Mistral's
    additive mask, mistral_additive_mask) or "sliced" (each query's softmax
    over its window's keys alone, no mask).

    The attention-sink step (make_sink_fixtures.py and
    make_sink_safetensors_fixtures.py): sinks [H], one learned logit per head
    that joins each softmax denominator unscaled and contributes no value row,
    after the soft-cap, ALiBi and the mask. sink_form "hf": Hugging Face
    GptOssAttention's eager lines (the sinks as one more column, the row
    maximum subtracted, softmax, the column dropped); "direct": the weights
    e^l / (e^s_h + sum e^l) (the library's formula). weights_only: the
    attention weights [B][H][N][N] instead of the output. scaling "book":
    (q k^T) / sqrt(head_dim), the book's modules; "gpt-oss": (q k^T) *
    head_dim ** -0.5, GptOssAttention's `scaling` (other bits where
    sqrt(head_dim) is inexact). rope: a function applied to Q and K
    [B][heads][N][head_dim] in place of the book's apply_rope with the case's
    rope_theta_base."""
    B, N = x.shape[0], x.shape[1]
    H = case_["num_heads"]
    kv_heads = case_.get("num_kv_heads", H)

    def linear(t, name):
        y = t @ lib[f"{name}.weight"].T
        return y + lib[f"{name}.bias"] if f"{name}.bias" in lib else y

    Q = linear(x, "W_query").view(B, N, H, -1).transpose(1, 2)
    K = linear(x, "W_key").view(B, N, kv_heads, -1).transpose(1, 2)
    V = linear(x, "W_value").view(B, N, kv_heads, -1).transpose(1, 2)
    if rope is not None:
        Q, K = rope(Q), rope(K)
    elif case_.get("rope_theta_base", 0) > 0:
        model = variants.construct(case_, x.dtype)  # only its cos / sin tables
        Q = book.apply_rope(Q, model.cos, model.sin)
        K = book.apply_rope(K, model.cos, model.sin)
    # (repeat_kv of Hugging Face: head h reads kv head h // (H / kv_heads))
    K = K.repeat_interleave(H // kv_heads, dim=1)
    V = V.repeat_interleave(H // kv_heads, dim=1)
    if scaling == "book":
        # the book's scores: q k^T, then the division by sqrt(head_dim)
        attn_weights = (Q @ K.transpose(-1, -2)) / K.shape[-1] ** 0.5
    else:
        assert scaling == "gpt-oss", scaling
        # GptOssAttention: q k^T times scaling = head_dim ** -0.5
        attn_weights = (Q @ K.transpose(-1, -2)) * K.shape[-1] ** -0.5
    if logits_only:
        return attn_weights
    softcap = case_["softcap"] if options else 0
    if softcap:
        # Gemma 2 (modeling_gemma2.py, eager attention), verbatim
        attn_weights = attn_weights / softcap
        attn_weights = torch.tanh(attn_weights)
        attn_weights = attn_weights * softcap
    if options and case_["alibi"]:
        slopes = build_alibi_slopes(H, x.dtype)[None, :, None, None]
        i = torch.arange(N)[:, None]
        j = torch.arange(N)[None, :]
        if bloom_form:
            attn_weights = attn_weights + slopes * j.to(x.dtype)
        else:
            attn_weights = attn_weights - slopes * (i - j).to(x.dtype)
    W = (case_["sliding_window"] if window is None else window) if options else 0
    if W and window_form == "sliced":
        assert sinks is None and not weights_only, "the sliced form: no sinks, no weights"
        rows = []
        for q in range(N):
            first = max(0, q - W + 1)
            p = torch.softmax(attn_weights[:, :, q, first:q + 1], dim=-1)
            rows.append((p[..., None, :] @ V[:, :, first:q + 1])[..., 0, :])
        context = torch.stack(rows, dim=2).transpose(1, 2).reshape(B, N, -1)
        return linear(context, "out_proj")
    if W and window_form == "mistral":
        attn_weights = attn_weights + mistral_additive_mask(N, W, x.dtype)
    else:
        # (Hugging Face adds finfo.min, which gives the same exact zeros)
        attn_weights = attn_weights.masked_fill(~visible_keys(N, W), -math.inf)
    if sinks is None:
        attn_weights = torch.softmax(attn_weights, dim=-1)
    elif sink_form == "hf":
        # GptOss eager_attention_forward (modeling_gpt_oss.py), verbatim
        sinks_ = sinks.reshape(1, -1, 1, 1).expand(B, -1, N, -1)
        combined_logits = torch.cat([attn_weights, sinks_], dim=-1)
        combined_logits = combined_logits - combined_logits.max(dim=-1, keepdim=True).values
        probs = torch.nn.functional.softmax(combined_logits, dim=-1, dtype=combined_logits.dtype)
        attn_weights = probs[..., :-1]
    else:
        assert sink_form == "direct", sink_form
        e = torch.exp(attn_weights)
        attn_weights = e / (torch.exp(sinks)[None, :, None, None] + e.sum(dim=-1, keepdim=True))
    if weights_only:
        return attn_weights
    context = (attn_weights @ V).transpose(1, 2).reshape(B, N, -1)
    return linear(context, "out_proj")


def scaled_logits(case_, lib, x):
    """The scaled logits of the visible keys (the ones the masks keep)."""
    N = x.shape[1]
    keep = visible_keys(N, case_["sliding_window"])
    return reference_forward(case_, lib, x, logits_only=True)[..., keep]


# --------------------------------------------------------------------------
# Shared with make_sink_fixtures.py: the case's model and input, the
# tolerance checks, the JSON object, the main loop and its verification.


def prepare(case_, seed):
    """The case's causal book module (parameters from the splitmix64 streams,
    then W_query's weight and bias times query_weight_scale), its parameter
    plan, the input x and the library-named parameters."""
    name, dtype_name = case_["name"], case_["dtype"]
    model, plan = variants.make_model(case_, seed, dtype_name)
    model.causal = True  # (make_model builds the book module with causal=False)
    scale = case_["query_weight_scale"]
    assert scale >= 1 and scale & (scale - 1) == 0, (name, "query_weight_scale: a power of two")
    with torch.no_grad():
        model.W_query.weight.mul_(scale)
        if model.W_query.bias is not None:
            model.W_query.bias.mul_(scale)
    x = variants.make_inputs(case_, seed, dtype_name)["x"]
    return model, plan, x, variants.library_parameters(model, case_)


def checker(name, worst):
    """within(label, actual, expected, tol): records the largest violation
    of each label in `worst` and stops the script (nothing written) if it
    exceeds the tolerance."""

    def within(label, actual, expected, tol):
        v = max_violation(actual.double(), expected.double(), tol)
        worst[label] = max(worst.get(label, 0.0), v)
        if v > 1:
            raise SystemExit(f"{name}: {label} differs by {v} x {tol}; nothing written")

    return within


def check_prefixes(case_, within, forward, x, out):
    """causal: the first k tokens alone (forward(x[:, :k])) give the first k
    rows of out (what a cache streams)."""
    for k in sorted({1, 2, case_["num_queries"] // 2, case_["num_queries"] - 1} - {0}):
        within("prefix", forward(x[:, :k]), out[:, :k], RTOL[case_["dtype"]])


def fixture_json(case_, seed, plan, out, script, how):
    """The variant schema's JSON object of the output `out`, its generated_by
    naming `script` and ending with `how`, plus softcap, alibi, alibi_slopes
    and query_weight_scale."""
    res = {"output": out, "weights": None, "average_weights": None, "fast_path": False,
           "notes": []}
    fx = variants.fixture_json(case_, seed, plan, res)
    fx["generated_by"] = (
        f"{script} with torch {torch.__version__}: parameters and inputs from the splitmix64 "
        f"stream generator of test/data/kv_cache/README.md with seed {seed}, W_query's weight "
        f"and bias times query_weight_scale{how}")
    fx["softcap"] = case_["softcap"]
    fx["alibi"] = case_["alibi"]
    fx["alibi_slopes"] = ([float(v) for v in build_alibi_slopes(
        case_["num_heads"], DTYPES[case_["dtype"]]).tolist()] if case_["alibi"] else None)
    fx["query_weight_scale"] = case_["query_weight_scale"]
    return fx


def verify(path, expected, float32_lists):
    """Re-reads a written file: the same JSON, and in a float32 file every
    value of the lists fx[key][subkey] ((key, subkey) in float32_lists)
    exactly a float32."""
    with open(path) as f:
        fx = json.load(f)
    assert fx == json.loads(json.dumps(expected)), path
    if fx["dtype"] == "float32":
        for key, subkey in float32_lists:
            for v in fx[key][subkey]:
                assert float(torch.tensor(v, dtype=torch.float32)) == v, (path, v)


def write_fixtures(out_dir, cases, seed_base, make_fixture, describe, readme_head,
                   float32_lists=(("output", "data"),), max_total=None):
    """The main loop: deletes the stale *.json of out_dir, then for case i
    (0-based, seed seed_base + i) make_fixture(seed, case, report) gives the
    JSON object, written compactly to <name>.json and re-read (verify).
    describe(case, report[name]) gives the printed summary of the file and
    the README table's cells between the N and covers columns. Last,
    README.md: readme_head (with {torch_version}) and the table's rows."""
    _check_generator()
    os.makedirs(out_dir, exist_ok=True)
    for f in os.listdir(out_dir):
        if f.endswith(".json"):
            os.remove(os.path.join(out_dir, f))
    report = {}
    rows = []
    total = 0
    for index, c in enumerate(cases):
        seed = seed_base + index
        fx = make_fixture(seed, c, report)
        path = os.path.join(out_dir, c["name"] + ".json")
        text = json.dumps(fx, separators=(",", ":")) + "\n"
        with open(path, "w") as f:
            f.write(text)
        total += len(text)
        verify(path, fx, float32_lists)
        r = report[c["name"]]
        summary, cells = describe(c, r)
        print(f"{c['name']}: {len(text)} bytes, {summary}, " +
              ", ".join(f"{k} {v:.3g}" for k, v in r["worst"].items()))
        cells = [f"{c['name']}.json", c["module"], c["dtype"], c["d_in"], c["d_out"],
                 c["context_length"], c["num_heads"], c.get("num_kv_heads", c["num_heads"]),
                 c.get("rope_theta_base", 0) or "no", c["batch"], c["num_queries"], *cells,
                 c["covers"]]
        rows.append("| " + " | ".join(str(v) for v in cells) + " |")
    assert max_total is None or total < max_total, total
    with open(os.path.join(out_dir, "README.md"), "w") as f:
        f.write(readme_head.replace("{torch_version}", torch.__version__))
        f.write("\n".join(rows) + "\n")
    print(f"{len(cases)} files, {total} bytes")


# --------------------------------------------------------------------------
# The score fixtures.


def make_fixture(seed, case_, report):
    """Computes and checks one case; returns its JSON object."""
    name, dtype_name = case_["name"], case_["dtype"]
    model, plan, x, lib = prepare(case_, seed)
    lib64 = {k: v.double() for k, v in lib.items()}
    x64 = x.double()
    worst = {}
    within = checker(name, worst)

    with torch.no_grad():
        out = reference_forward(case_, lib, x)
        out64 = reference_forward(case_, lib64, x64)
        if dtype_name == "float32":
            within("float32 vs float64", out, out64, FLOAT32_VS_FLOAT64)
        # BLOOM's form of the bias gives the same softmax
        if case_["alibi"]:
            within("vs BLOOM's +m*j form (float64)",
                   reference_forward(case_, lib64, x64, bloom_form=True), out64, RTOL["float64"])
        W, N = case_["sliding_window"], case_["num_queries"]
        if W:
            assert W < N, (name, "the window hides no key")
            # Mistral's additive mask (transformers 4.4x) and the sliced
            # softmax over the window's keys give the same output
            for form in ("mistral", "sliced"):
                within(f"window: {form} form (float64)",
                       reference_forward(case_, lib64, x64, window_form=form), out64,
                       RTOL["float64"])
            # the first W rows hide no key: the causal rows, the same bits
            unwindowed = reference_forward(case_, lib, x, window=0)
            assert torch.equal(unwindowed[:, :W], out[:, :W]), (name, "rows before the window")
            assert not torch.allclose(unwindowed[:, W:], out[:, W:], rtol=1e-3, atol=1e-3), (
                name, "the window has no effect")
        # without the options, the explicit forward is the book module's
        plain = reference_forward(case_, lib, x, options=False)
        within("no options vs book module", plain, model(x), RTOL[dtype_name])
        assert not torch.allclose(plain, out, rtol=1e-3, atol=1e-3), (name, "no effect")
        check_prefixes(case_, within, lambda xk: reference_forward(case_, lib, xk), x, out)
        logits = scaled_logits(case_, lib64, x64)
        over = float((logits.abs() > case_["softcap"]).double().mean()) if case_["softcap"] else 0
        if case_["softcap"]:
            assert over >= 0.2, (name, "the cap bends too few logits", over)
    assert not bool(out.isnan().any())
    report[name] = {"worst": worst, "over_cap": over,
                    "max_abs_logit": float(logits.abs().max())}
    window = case_["sliding_window"]
    masks = (f"the causal mask and Hugging Face's sliding-window mask of {window} keys"
             if window else "mask")
    fx = fixture_json(
        case_, seed, plan, out, SCRIPT,
        f"; the explicit causal forward of test/data/scores/README.md in {dtype_name} (the "
        f"book's projections and RoPE, Gemma 2's soft-cap, BLOOM's ALiBi slopes, {masks}, "
        f"softmax).")
    if window:  # (absent from the files without a window)
        fx["sliding_window"] = window
    return fx


def describe(c, r):
    """The printed summary and the README table's cells of a score fixture."""
    return (f"over cap {r['over_cap']:.2f}, max |logit| {r['max_abs_logit']:.2f}",
            [c["softcap"] or "off", "yes" if c["alibi"] else "no", c["sliding_window"] or "off",
             c["query_weight_scale"], "%.0f%%" % (100 * r["over_cap"]) if c["softcap"] else "-"])


README_HEAD = r"""# Score-option reference fixtures (issue 41)

Logit soft-capping (`mha::attention_scores{.softcap = c}`), ALiBi
(`{.alibi = true}`), both together, and the sliding window
(`{.sliding_window = W}`, alone and with either), on the causal book
`MultiHeadAttention` and the Llama `GroupedQueryAttention` (with and without
RoPE) of `tools/reference_modules.py`, float32 and float64. Generated by
`tools/make_score_fixtures.py`; regenerate (this deletes every `*.json` here
first and rewrites this README) with Debian's python3, which provides
PyTorch:

    /usr/bin/python3 tools/make_score_fixtures.py

Do not edit these files by hand. Made with torch {torch_version}. Read by
`test/test_scores.cpp` through `test/variant_fixture.hpp`.

## Schema

The schema of `test/data/variants/README.md` (book modules, self-attention,
`causal: true`, no lengths, no weights; weights and inputs regenerated from
the splitmix64 streams of `test/data/kv_cache/README.md`, output stored as
`{"shape", "data"}`), plus:

- `softcap` (integer, 0 = off): the cap c;
- `alibi` (bool) and `alibi_slopes` (the slope of each head in the fixture's
  dtype, or null): BLOOM's slopes, for the reader's information (the test
  checks them against the library's);
- `query_weight_scale` (a power of two): after the parameters are generated,
  `W_query.weight` and `W_query.bias` (if any) are multiplied by it (exact),
  so that the scaled logits are large enough for a cap of 2 or 3 to bend
  them;
- `sliding_window` (integer W >= 1), only in the windowed files (`window_*`;
  absent: no window): query q attends to keys k with q - W < k <= q, i.e.
  max(0, q - W + 1)..q.

## The expected output

An explicit forward, from the library-named parameters, in the fixture's
dtype:

1. Q, K, V as the book's modules compute them (`x @ W.T + b`), heads split;
   RoPE with the book's `apply_rope` when `rope_theta_base > 0`; kv heads
   repeated (`repeat_interleave`) for grouped-query attention;
2. `attn_weights = (Q @ K^T) / sqrt(head_dim)`;
3. soft-cap (Hugging Face Gemma 2, `modeling_gemma2.py`, eager attention):
   `attn_weights = attn_weights / softcap; attn_weights = torch.tanh(attn_weights);
   attn_weights = attn_weights * softcap`;
4. ALiBi: `attn_weights -= m_h * (i - j)` (i the query position, j the key
   position), m_h from BLOOM's `build_alibi_tensor` lines
   (`modeling_bloom.py`: closest power of two c <= n; base
   `2**(-(2**-(log2(c)-3)))`, slopes `base**(1..c)`; for n > c the extra
   base `2**(-(2**-(log2(2c)-3)))` to the powers 1, 3, 5, ...), computed in
   the fixture's dtype;
5. the masks: key k is visible to query q iff `k <= q` (Hugging Face's
   `causal_mask_function` in `masking_utils.py`) and, with a sliding window
   W, also `k > q - W` (its `sliding_window_overlay`; the two AND-ed, as
   `create_sliding_window_causal_mask` does for Mistral); the logits of the
   other keys are `-inf`;
6. `softmax`, `@ V`, `out_proj`.

Checks before writing: float32 against the same computation in float64
(within 1e-6 relative to max(1, |expected|)); ALiBi against BLOOM's own form
of the bias (`+ m_h * j`, the same softmax) in float64 (1e-12); with the
options off the explicit forward equals the book module's `model(x)`; the
options change the output; the first k tokens alone give the first k output
rows (so a KV-cache stream of the same tokens has the same expected rows);
for the soft-cap cases at least 20% of the scaled logits (of the visible
keys) exceed the cap. With a window (W < N in every case): the output equals,
in float64 within 1e-12, Mistral's additive mask of transformers 4.4x
(`_prepare_4d_causal_attention_mask_with_cache_position`, no cache:
`torch.finfo(dtype).min` where `arange(N) > cache_position` or
`arange(N) <= cache_position - W`, added to the logits) and a softmax over
each query's window keys alone (sliced, no mask); the first W output rows
equal, bit for bit, those of the same forward without the window (no key is
hidden there), and the later rows differ from them.

## Cases

| file | module | dtype | d_in | d_out | ctx | heads | kv heads | RoPE | batch | N | softcap | alibi | window | W_query x | logits over cap | covers |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
"""


def main():
    write_fixtures(OUT_DIR, CASES, SEED_BASE, make_fixture, describe, README_HEAD)


if __name__ == "__main__":
    main()
