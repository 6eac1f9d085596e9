#!/usr/bin/env python3
"""Write the grouped-query-attention fixtures with query/key/value biases (Qwen-style).

Run with Debian's python3 (it has PyTorch):

    /usr/bin/python3 tools/make_gqa_bias_safetensors_fixtures.py

One GQA + RoPE model with biases on W_query, W_key and W_value (no out_proj
bias; float32, d_in 8, d_out 16, 4 heads, 2 key/value heads, context 8,
theta 10000; seed 1401; biases re-drawn N(0, 0.5^2)), the book's
GroupedQueryAttention (rotate-half RoPE) with qkv_bias, stored two ways in
test/data/safetensors/:

- `gqa_rope_bias_llama_f32.safetensors`: Hugging Face names under the prefix
  "model.layers.0.self_attn." (q_proj, k_proj, v_proj with .weight and .bias,
  o_proj.weight; no o_proj.bias), rotate-half layout;
- `gqa_rope_bias_meta_f32.safetensors`: the same names with the q_proj/k_proj
  weight rows AND the q_proj/k_proj biases in Meta's interleaved RoPE layout
  (`to_meta`, the inverse of convert_llama_weights_to_hf.py's `permute`);
  v_proj unpermuted. The script asserts that Meta's complex-pair RoPE on these
  weights and biases gives the output of the rotate-half module, and that it
  does not when only the weights are permuted (the biases matter).

`gqa_rope_bias_f32.io.safetensors` holds `input` [2][7][8] and PyTorch's
`output` [2][7][16]. A separate script from make_gqa_safetensors_fixtures.py
so that writing these files leaves the older ones untouched; it uses that
script's RoPE and permutation functions. Each file is re-read and checked.
Deterministic.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402

import safetensors_file as st  # noqa: E402
from make_gqa_safetensors_fixtures import (  # noqa: E402
    CTX, D_IN, D_OUT, HD, HEADS, KV_HEADS, OUT_DIR, PREFIX, THETA, GroupedQueryAttention,
    hf_permute, rope_half, rope_meta, to_meta)

GENERATOR = "tools/make_gqa_bias_safetensors_fixtures.py"


def BiasedGroupedQueryAttention(rope=rope_half):
    """The book's GroupedQueryAttention with qkv_bias=True (no out_proj bias),
    causal, with a choice of RoPE (the module of make_gqa_safetensors_fixtures.py)."""
    return GroupedQueryAttention(rope=rope, qkv_bias=True)


def to_meta_bias(b, n_heads):
    """to_meta of a bias [rows] (as a [rows][1] weight)."""
    return to_meta(b.view(-1, 1), n_heads).view(-1).contiguous()


def metadata():
    return {"format": "pt", "generator": GENERATOR, "checkpoint_format": "llama",
            "num_heads": str(HEADS), "num_kv_heads": str(KV_HEADS), "d_in": str(D_IN),
            "d_out": str(D_OUT), "context_length": str(CTX), "qkv_bias": "true",
            "rope_theta": str(int(THETA))}


def save(name, tensors, meta):
    st.save_checked(os.path.join(OUT_DIR, name), tensors, meta)


def book_state(hf_or_meta):
    """The book module's state_dict from Llama-named tensors."""
    return {"W_query.weight": hf_or_meta[PREFIX + "q_proj.weight"],
            "W_query.bias": hf_or_meta[PREFIX + "q_proj.bias"],
            "W_key.weight": hf_or_meta[PREFIX + "k_proj.weight"],
            "W_key.bias": hf_or_meta[PREFIX + "k_proj.bias"],
            "W_value.weight": hf_or_meta[PREFIX + "v_proj.weight"],
            "W_value.bias": hf_or_meta[PREFIX + "v_proj.bias"],
            "out_proj.weight": hf_or_meta[PREFIX + "o_proj.weight"]}


def main():
    torch.manual_seed(1401)
    m = BiasedGroupedQueryAttention()
    with torch.no_grad():
        for lin in (m.W_query, m.W_key, m.W_value):
            lin.bias.copy_(torch.randn_like(lin.bias) * 0.5)
    x = torch.randn(2, 7, D_IN)
    with torch.no_grad():
        out = m.eval()(x)
    sd = {k: v.detach().clone() for k, v in m.state_dict().items()}
    hf = {}
    for part, name in (("W_query", "q_proj"), ("W_key", "k_proj"), ("W_value", "v_proj")):
        hf[PREFIX + name + ".weight"] = sd[part + ".weight"]
        hf[PREFIX + name + ".bias"] = sd[part + ".bias"]
    hf[PREFIX + "o_proj.weight"] = sd["out_proj.weight"]
    assert book_state(hf).keys() == sd.keys()
    meta = dict(hf)
    for name, heads in (("q_proj", HEADS), ("k_proj", KV_HEADS)):
        w, b = PREFIX + name + ".weight", PREFIX + name + ".bias"
        meta[w] = to_meta(hf[w], heads).contiguous()
        meta[b] = to_meta_bias(hf[b], heads)
        # to_meta is the inverse of Hugging Face's permute, for the weight and the bias
        assert torch.equal(hf_permute(meta[w], heads), hf[w])
        assert torch.equal(hf_permute(meta[b].view(-1, 1), heads).view(-1), hf[b])
        assert not torch.equal(meta[w], hf[w]) and not torch.equal(meta[b], hf[b])
    # Meta's RoPE on Meta's layout (weights and biases) == rotate-half on Hugging Face's.
    mm = BiasedGroupedQueryAttention(rope=rope_meta).eval()
    mm.load_state_dict(book_state(meta))
    with torch.no_grad():
        out_meta = mm(x)
    assert torch.allclose(out_meta, out, rtol=1e-5, atol=1e-6), (out_meta - out).abs().max()
    # ... not with the biases left in the rotate-half layout (they must be permuted too) ...
    half_bias = book_state(meta)
    half_bias["W_query.bias"], half_bias["W_key.bias"] = sd["W_query.bias"], sd["W_key.bias"]
    mm.load_state_dict(half_bias)
    with torch.no_grad():
        assert not torch.allclose(mm(x), out, rtol=1e-3, atol=1e-4)
    # ... and the rotate-half module on Meta's layout does not either.
    mh = BiasedGroupedQueryAttention().eval()
    mh.load_state_dict(book_state(meta))
    with torch.no_grad():
        assert not torch.allclose(mh(x), out, rtol=1e-3, atol=1e-4)
    save("gqa_rope_bias_llama_f32.safetensors", hf, metadata())
    save("gqa_rope_bias_meta_f32.safetensors", meta, metadata())
    save("gqa_rope_bias_f32.io.safetensors", {"input": x, "output": out},
         {"module": "GroupedQueryAttention (qkv_bias)", "d_in": str(D_IN), "d_out": str(D_OUT),
          "context_length": str(CTX), "num_heads": str(HEADS), "num_kv_heads": str(KV_HEADS),
          "qkv_bias": "true", "rope_theta": str(int(THETA)), "generator": GENERATOR})


if __name__ == "__main__":
    main()
