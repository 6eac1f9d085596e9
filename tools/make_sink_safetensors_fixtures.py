#!/usr/bin/env python3
"""Write the gpt-oss-style safetensors fixtures: grouped-query attention with
learned attention sinks (``mha::attention_scores{.sinks = true}``).

Run with Debian's python3 (it has PyTorch):

    /usr/bin/python3 tools/make_sink_safetensors_fixtures.py

One GQA + RoPE model as a gpt-oss layer has it (float32, d_in 8, d_out 16,
4 heads, 2 key/value heads, context 8, theta 10000, rotate-half RoPE; biases on
q/k/v and o; a sliding window of 3 tokens; one sink logit per head, N(1, 1);
seed 1501), stored two ways in test/data/safetensors/:

- `gqa_sinks_llama_f32.safetensors`: Hugging Face names under the prefix
  "model.layers.0.self_attn." (q_proj, k_proj, v_proj, o_proj with .weight
  and .bias, and `sinks` [4], as GptOssAttention's state_dict);
- `gqa_sinks_book_f32.safetensors`: the book's names (W_query, W_key,
  W_value, out_proj with .weight and .bias) and `sinks`, the library's
  parameter walk.

`gqa_sinks_f32.io.safetensors` holds `input` [2][7][8] and `output`
[2][7][16]: Hugging Face GptOssAttention's eager forward
(transformers/models/gpt_oss/modeling_gpt_oss.py, eager_attention_forward:
``q @ k^T * scaling`` plus the causal sliding-window mask, the sinks joined
as one more softmax column after subtracting the row maximum, that column
dropped, ``@ v``), checked against the same computation in float64 and
against the direct formula e^l / (e^s + sum e^l). A separate script from the
other GQA generators so that writing these files leaves the older ones
untouched; it uses make_gqa_safetensors_fixtures.py's RoPE and
make_score_fixtures.py's reference forward (its sink step, GptOssAttention's
scaling). Each file is re-read and checked. Deterministic.
"""

import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402

import make_score_fixtures as scores  # noqa: E402
import safetensors_file as st  # noqa: E402
from make_gqa_safetensors_fixtures import (  # noqa: E402
    CTX, D_IN, D_OUT, HD, HEADS, KV_HEADS, OUT_DIR, PREFIX, THETA, rope_half)

GENERATOR = "tools/make_sink_safetensors_fixtures.py"
WINDOW = 3
BOOK = ("W_query", "W_key", "W_value", "out_proj")
LLAMA = ("q_proj", "k_proj", "v_proj", "o_proj")


def forward(p, x, form="hf"):
    """GptOssAttention's eager forward with the book-named parameters p
    (weights, biases, `sinks`) on x [b][n][D_IN]; form "direct": the weights
    e^l / (e^s + sum e^l) instead of the concatenated softmax. The reference
    forward of make_score_fixtures.py (its sink step, GptOssAttention's
    scaling q k^T * head_dim ** -0.5) with this file's shapes, window and
    RoPE (rope_half, in float32 angles, back in x's dtype)."""
    case_ = {"num_heads": HEADS, "num_kv_heads": KV_HEADS, "softcap": 0, "alibi": False,
             "sliding_window": WINDOW}
    return scores.reference_forward(case_, p, x, sinks=p["sinks"], sink_form=form,
                                    scaling="gpt-oss", rope=lambda t: rope_half(t).to(x.dtype))


def metadata(fmt):
    return {"format": "pt", "generator": GENERATOR, "checkpoint_format": fmt,
            "num_heads": str(HEADS), "num_kv_heads": str(KV_HEADS), "d_in": str(D_IN),
            "d_out": str(D_OUT), "context_length": str(CTX), "qkv_bias": "true",
            "rope_theta": str(int(THETA)), "sliding_window": str(WINDOW)}


def save(name, tensors, meta):
    st.save_checked(os.path.join(OUT_DIR, name), tensors, meta)


def main():
    torch.manual_seed(1501)
    p = {}
    for name, (rows, cols) in zip(BOOK, ((D_OUT, D_IN), (KV_HEADS * HD, D_IN),
                                         (KV_HEADS * HD, D_IN), (D_OUT, D_OUT))):
        p[name + ".weight"] = torch.randn(rows, cols) / cols ** 0.5
        p[name + ".bias"] = torch.randn(rows) * 0.5
    p["sinks"] = torch.randn(HEADS) + 1.0
    x = torch.randn(2, 7, D_IN)
    with torch.no_grad():
        out = forward(p, x)
        p64 = {k: v.double() for k, v in p.items()}
        out64 = forward(p64, x.double())
        assert torch.allclose(out.double(), out64, rtol=1e-6, atol=1e-6), (out.double() - out64).abs().max()
        direct = forward(p64, x.double(), form="direct")
        assert torch.allclose(direct, out64, rtol=1e-12, atol=1e-12)
        # the sinks and the window matter
        no_sinks = dict(p, sinks=torch.full((HEADS,), -math.inf))
        assert not torch.allclose(forward(no_sinks, x), out, rtol=1e-3, atol=1e-3)
    book = dict(p)
    hf = {}
    for b, h in zip(BOOK, LLAMA):
        hf[PREFIX + h + ".weight"] = p[b + ".weight"]
        hf[PREFIX + h + ".bias"] = p[b + ".bias"]
    hf[PREFIX + "sinks"] = p["sinks"]
    print("sinks", [round(v, 4) for v in p["sinks"].tolist()])
    save("gqa_sinks_llama_f32.safetensors", hf, metadata("llama"))
    save("gqa_sinks_book_f32.safetensors", book, metadata("book"))
    save("gqa_sinks_f32.io.safetensors", {"input": x, "output": out},
         {"module": "GptOssAttention (eager, sliding window 3, sinks)", "d_in": str(D_IN),
          "d_out": str(D_OUT), "context_length": str(CTX), "num_heads": str(HEADS),
          "num_kv_heads": str(KV_HEADS), "qkv_bias": "true", "rope_theta": str(int(THETA)),
          "sliding_window": str(WINDOW), "generator": GENERATOR})


if __name__ == "__main__":
    main()
