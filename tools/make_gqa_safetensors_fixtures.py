#!/usr/bin/env python3
"""Write the grouped-query-attention safetensors fixtures of the mha loader.

Run with Debian's python3 (it has PyTorch):

    /usr/bin/python3 tools/make_gqa_safetensors_fixtures.py

One GQA + RoPE model (float32, d_in 8, d_out 16, 4 heads, 2 key/value heads,
context 8, theta 10000; seed 1301), the book's GroupedQueryAttention written
here from its definition (rotate-half RoPE as Hugging Face's rotate_half, no
out_proj bias), stored three ways in test/data/safetensors/:

- `gqa_rope_book_f32.safetensors`: the module's state_dict (book names
  W_query.weight, W_key.weight, W_value.weight, out_proj.weight);
- `gqa_rope_llama_f32.safetensors`: the same weights under Hugging Face
  LlamaAttention names with the prefix "model.layers.0.self_attn." (q_proj,
  k_proj, v_proj, o_proj; no o_proj.bias);
- `gqa_rope_meta_f32.safetensors`: the Llama names with q_proj/k_proj rows in
  Meta's interleaved RoPE layout (the inverse of `permute` in Hugging Face's
  convert_llama_weights_to_hf.py). The script asserts that Meta's own RoPE
  (llama/model.py's apply_rotary_emb: complex multiplication of the adjacent
  pairs (2i, 2i+1) by polar(1, pos * inv_freq)) on these weights gives the
  output of the rotate-half module on the Hugging Face weights.

`gqa_rope_f32.io.safetensors` holds `input` [2][7][8] and PyTorch's `output`
of the module. Each file is re-read and checked. Deterministic.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

import safetensors_file as st  # noqa: E402

OUT_DIR = os.path.join(os.path.dirname(HERE), "test", "data", "safetensors")
GENERATOR = "tools/make_gqa_safetensors_fixtures.py"
D_IN, D_OUT, CTX, HEADS, KV_HEADS, THETA = 8, 16, 8, 4, 2, 10000.0
HD = D_OUT // HEADS
PREFIX = "model.layers.0.self_attn."


def inv_freq():
    return 1.0 / (THETA ** (torch.arange(0, HD, 2, dtype=torch.float32) / HD))


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rope_half(x):
    """x [b][heads][n][hd], rotate-half RoPE (Hugging Face, the book)."""
    angles = torch.arange(x.shape[2], dtype=torch.float32)[:, None] * inv_freq()[None, :]
    angles = torch.cat((angles, angles), dim=-1)
    return x * torch.cos(angles) + rotate_half(x) * torch.sin(angles)


def rope_meta(x):
    """x [b][heads][n][hd], Meta's apply_rotary_emb: pairs (2i, 2i+1) as complex numbers."""
    freqs = torch.outer(torch.arange(x.shape[2], dtype=torch.float32), inv_freq())
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(xc * freqs_cis).flatten(3)


class GroupedQueryAttention(nn.Module):
    """The book's GroupedQueryAttention (no out_proj bias) with a choice of RoPE;
    qkv_bias=True puts biases on W_query, W_key and W_value (Qwen-style, used by
    make_gqa_bias_safetensors_fixtures.py)."""

    def __init__(self, rope=rope_half, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(D_IN, D_OUT, bias=qkv_bias)
        self.W_key = nn.Linear(D_IN, KV_HEADS * HD, bias=qkv_bias)
        self.W_value = nn.Linear(D_IN, KV_HEADS * HD, bias=qkv_bias)
        self.out_proj = nn.Linear(D_OUT, D_OUT, bias=False)
        self.rope = rope

    def forward(self, x):
        b, n, _ = x.shape
        q = self.W_query(x).view(b, n, HEADS, HD).transpose(1, 2)
        k = self.W_key(x).view(b, n, KV_HEADS, HD).transpose(1, 2)
        v = self.W_value(x).view(b, n, KV_HEADS, HD).transpose(1, 2)
        q, k = self.rope(q), self.rope(k)
        k = k.repeat_interleave(HEADS // KV_HEADS, dim=1)
        v = v.repeat_interleave(HEADS // KV_HEADS, dim=1)
        scores = q @ k.transpose(2, 3)
        mask = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(mask, -torch.inf)
        w = torch.softmax(scores / HD ** 0.5, dim=-1)
        return self.out_proj((w @ v).transpose(1, 2).reshape(b, n, D_OUT))


def hf_permute(w, n_heads):
    """Hugging Face's convert_llama_weights_to_hf.py permute (Meta -> HF rows)."""
    dim1, dim2 = w.shape
    return w.view(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(1, 2).reshape(dim1, dim2)


def to_meta(w, n_heads):
    """The inverse of hf_permute: HF (rotate-half) rows -> Meta's interleaved rows."""
    dim1, dim2 = w.shape
    return w.view(n_heads, 2, dim1 // n_heads // 2, dim2).transpose(1, 2).reshape(dim1, dim2)


def metadata(fmt):
    return {"format": "pt", "generator": GENERATOR, "checkpoint_format": fmt,
            "num_heads": str(HEADS), "num_kv_heads": str(KV_HEADS), "d_in": str(D_IN),
            "d_out": str(D_OUT), "context_length": str(CTX), "qkv_bias": "false",
            "rope_theta": str(int(THETA))}


def save(name, tensors, meta):
    st.save_checked(os.path.join(OUT_DIR, name), tensors, meta)


def main():
    torch.manual_seed(1301)
    m = GroupedQueryAttention()
    x = torch.randn(2, 7, D_IN)
    with torch.no_grad():
        out = m.eval()(x)
    sd = {k: v.detach().clone() for k, v in m.state_dict().items()}
    hf = {PREFIX + "q_proj.weight": sd["W_query.weight"], PREFIX + "k_proj.weight": sd["W_key.weight"],
          PREFIX + "v_proj.weight": sd["W_value.weight"], PREFIX + "o_proj.weight": sd["out_proj.weight"]}
    meta = dict(hf)
    meta[PREFIX + "q_proj.weight"] = to_meta(hf[PREFIX + "q_proj.weight"], HEADS).contiguous()
    meta[PREFIX + "k_proj.weight"] = to_meta(hf[PREFIX + "k_proj.weight"], KV_HEADS).contiguous()
    # to_meta is the inverse of Hugging Face's permute.
    assert torch.equal(hf_permute(meta[PREFIX + "q_proj.weight"], HEADS), hf[PREFIX + "q_proj.weight"])
    assert torch.equal(hf_permute(meta[PREFIX + "k_proj.weight"], KV_HEADS), hf[PREFIX + "k_proj.weight"])
    assert not torch.equal(meta[PREFIX + "q_proj.weight"], hf[PREFIX + "q_proj.weight"])
    # Meta's RoPE on Meta's layout == rotate-half on Hugging Face's layout.
    mm = GroupedQueryAttention(rope=rope_meta)
    mm.load_state_dict({"W_query.weight": meta[PREFIX + "q_proj.weight"],
                        "W_key.weight": meta[PREFIX + "k_proj.weight"],
                        "W_value.weight": sd["W_value.weight"], "out_proj.weight": sd["out_proj.weight"]})
    with torch.no_grad():
        out_meta = mm.eval()(x)
    assert torch.allclose(out_meta, out, rtol=1e-5, atol=1e-6), (out_meta - out).abs().max()
    # ... and Meta's RoPE on the rotate-half layout does not.
    mm.load_state_dict(sd)
    with torch.no_grad():
        assert not torch.allclose(mm.eval()(x), out, rtol=1e-3, atol=1e-4)
    save("gqa_rope_book_f32.safetensors", sd, metadata("book"))
    save("gqa_rope_llama_f32.safetensors", hf, metadata("llama"))
    save("gqa_rope_meta_f32.safetensors", meta, metadata("llama"))
    save("gqa_rope_f32.io.safetensors", {"input": x, "output": out},
         {"module": "GroupedQueryAttention", "d_in": str(D_IN), "d_out": str(D_OUT),
          "context_length": str(CTX), "num_heads": str(HEADS), "num_kv_heads": str(KV_HEADS),
          "rope_theta": str(int(THETA)), "generator": GENERATOR})


if __name__ == "__main__":
    main()
