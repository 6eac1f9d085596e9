#!/usr/bin/env python3
"""Write the safetensors test files of the mha loader (test/data/safetensors/).

Run with Debian's python3 (it has PyTorch):

    /usr/bin/python3 tools/make_safetensors_fixtures.py

For every case it builds a real PyTorch module (the book's CausalAttention,
MultiHeadAttentionWrapper and MultiHeadAttention from reference_modules.py,
torch.nn.MultiheadAttention used with a causal attn_mask, or a GPT-2-shaped
attention written here from Hugging Face's Conv1D layout, or a GPT-NeoX
attention written here from its definition with the per-head interleaved fused
QKV), saves its
state_dict as `<case>.safetensors` (names exactly as PyTorch writes them) and
saves the input and PyTorch's output in `<case>.io.safetensors` (tensors
`input`, `output`; metadata describes the model). The weight file's
`__metadata__` records the hyperparameters the loader checks (`num_heads`,
`d_in`, `d_out`, `context_length`, `qkv_bias`, `checkpoint_format` and, for
the fused formats, `qkv_layout`; see docs/loading-weights.md) besides the
conventional `"format": "pt"`, and names this script as `generator`. The
cross-attention case (torch.nn.MultiheadAttention(8, 2, kdim=5, vdim=7)) is
stored twice, as PyTorch's state_dict (q_proj_weight, k_proj_weight,
v_proj_weight, in_proj_bias, out_proj.*) and under the book's names, with
`kdim` and `vdim` in the metadata; its io file holds `query`, `key`, `value`
and `output`. F16/BF16 cases store the
weights rounded to that dtype and the output PyTorch computes in float32 with
the same rounded weights. `dtypes.safetensors` holds F16, BF16 and F64 values
with PyTorch's conversion of each to float32 (to test the loader's own
conversions). Every file is re-read and checked after writing. Deterministic.
"""

import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

import safetensors_file as st  # noqa: E402
from reference_modules import (  # noqa: E402
    CausalAttention,
    MultiHeadAttention,
    MultiHeadAttentionWrapper,
    book_batch,
)

REPO = os.path.dirname(HERE)
OUT_DIR = os.path.join(REPO, "test", "data", "safetensors")


class Conv1D(nn.Module):
    """Hugging Face GPT-2's Conv1D: weight [nx][nf] (transposed vs nn.Linear), y = x W + b."""

    def __init__(self, nf, nx):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.3)
        self.bias = nn.Parameter(torch.randn(nf) * 0.3)

    def forward(self, x):
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).view(
            *x.shape[:-1], self.weight.shape[1])


class GPT2Attention(nn.Module):
    """GPT-2's causal self-attention (Hugging Face GPT2Attention, no cache/dropout)."""

    def __init__(self, embed_dim, num_heads, n_ctx):
        super().__init__()
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.head_dim = embed_dim // num_heads
        self.c_attn = Conv1D(3 * embed_dim, embed_dim)
        self.c_proj = Conv1D(embed_dim, embed_dim)
        # The buffers older transformers versions save; the loader ignores them.
        self.register_buffer("bias", torch.tril(torch.ones(n_ctx, n_ctx, dtype=torch.bool))
                             .view(1, 1, n_ctx, n_ctx))
        self.register_buffer("masked_bias", torch.tensor(-1e4))

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = self.c_attn(x).split(self.embed_dim, dim=2)

        def heads(t):
            return t.view(b, n, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

        q, k, v = heads(q), heads(k), heads(v)
        w = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)
        w = w.masked_fill(~self.bias[:, :, :n, :n], float("-inf"))
        a = torch.softmax(w, dim=-1) @ v
        return self.c_proj(a.permute(0, 2, 1, 3).reshape(b, n, self.embed_dim))


class NeoXAttention(nn.Module):
    """GPT-NeoX's attention (Hugging Face GPTNeoXAttention) without rotary
    position embeddings (rotary_pct = 0), no cache/dropout: one fused
    `query_key_value` Linear whose output is viewed as [B][N][num_heads][3 *
    head_dim], i.e. its rows are per-head interleaved [q_h0 k_h0 v_h0 q_h1 ...]
    (Megatron-LM's layout too), causal softmax(q k^T / sqrt(head_dim)) v, then
    the `dense` Linear."""

    def __init__(self, hidden, num_heads, max_positions):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden // num_heads
        self.query_key_value = nn.Linear(hidden, 3 * hidden)
        self.dense = nn.Linear(hidden, hidden)
        # The buffers GPTNeoXAttention saves (the loader ignores them).
        self.register_buffer("bias", torch.tril(torch.ones(max_positions, max_positions,
                                                           dtype=torch.bool))
                             .view(1, 1, max_positions, max_positions))
        self.register_buffer("masked_bias", torch.tensor(-1e9))

    def forward(self, x):
        b, n, _ = x.shape
        qkv = self.query_key_value(x).view(b, n, self.num_heads, 3 * self.head_dim)
        hd = self.head_dim
        q = qkv[..., :hd].permute(0, 2, 1, 3)
        k = qkv[..., hd:2 * hd].permute(0, 2, 1, 3)
        v = qkv[..., 2 * hd:].permute(0, 2, 1, 3)
        w = q @ k.transpose(-1, -2) / math.sqrt(hd)
        w = w.masked_fill(~self.bias[:, :, :n, :n], float("-inf"))
        a = torch.softmax(w, dim=-1) @ v
        return self.dense(a.permute(0, 2, 1, 3).reshape(b, n, self.num_heads * hd))


class TorchCausalMHA(nn.MultiheadAttention):
    """torch.nn.MultiheadAttention(E, H, bias=True, batch_first=True) used as causal
    self-attention: forward(x) = MultiheadAttention.forward(x, x, x, attn_mask=causal)."""

    def __init__(self, embed_dim, num_heads, bool_mask=False):
        super().__init__(embed_dim, num_heads, bias=True, batch_first=True)
        self.bool_mask = bool_mask

    def forward(self, x):
        n = x.shape[1]
        if self.bool_mask:
            mask = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
        else:
            mask = torch.triu(torch.full((n, n), float("-inf"), dtype=x.dtype), diagonal=1)
        return super().forward(x, x, x, attn_mask=mask, need_weights=False)[0]


class TorchCrossMHA(nn.MultiheadAttention):
    """torch.nn.MultiheadAttention(E, H, bias=True, kdim, vdim, batch_first=True) used as
    cross-attention: forward(query, key, value) without a mask, need_weights=False."""

    def __init__(self, embed_dim, num_heads, kdim, vdim):
        super().__init__(embed_dim, num_heads, bias=True, kdim=kdim, vdim=vdim, batch_first=True)

    def forward(self, query, key, value):
        return super().forward(query, key, value, need_weights=False)[0]


def book_cross_forward(sd, num_heads, query, key, value):
    """Cross-attention written out from the book's names (W_query, W_key, W_value,
    out_proj; no mask): checks the renaming of a TorchCrossMHA state_dict."""
    def linear(x, name):
        return x @ sd[name + ".weight"].T + sd[name + ".bias"]

    def heads(t):
        b, n, e = t.shape
        return t.view(b, n, num_heads, e // num_heads).transpose(1, 2)

    q, k, v = heads(linear(query, "W_query")), heads(linear(key, "W_key")), heads(linear(value, "W_value"))
    w = torch.softmax(q @ k.transpose(2, 3) / math.sqrt(q.shape[-1]), dim=-1)
    b, _, nq, _ = q.shape
    return linear((w @ v).transpose(1, 2).reshape(b, nq, -1), "out_proj")


def randomise_biases(module, scale=0.3):
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.endswith("bias"):
                p.copy_(torch.randn_like(p) * scale)


def round_weights(state, dtype):
    """state_dict with every floating tensor rounded to `dtype` (buffers too)."""
    return {k: (v.to(dtype) if v.is_floating_point() else v) for k, v in state.items()}


def forward_with(module, state, x):
    """PyTorch's output of `module` after loading `state` (converted to x's dtype)."""
    m = module.to(x.dtype)
    m.load_state_dict({k: (v.to(x.dtype) if v.is_floating_point() else v) for k, v in state.items()})
    with torch.no_grad():
        return m.eval()(x)


GENERATOR = "tools/make_safetensors_fixtures.py"
FUSED_LAYOUT = {"pytorch_multihead": "contiguous", "gpt2": "contiguous",
                "neox": "interleaved_per_head"}


def hyperparameters(meta):
    """The weight file's __metadata__: the hyperparameters mha::io checks."""
    h = {"format": "pt", "generator": GENERATOR, "checkpoint_format": meta["format"]}
    for key in ("num_heads", "d_in", "d_out", "context_length", "kdim", "vdim"):
        if key in meta:
            h[key] = str(meta[key])
    h["qkv_bias"] = "true" if meta["qkv_bias"] else "false"
    if meta["format"] in FUSED_LAYOUT:
        h["qkv_layout"] = FUSED_LAYOUT[meta["format"]]
    return h


def write_case(name, module, x, meta, dtype=torch.float32, prefix="", extra=None,
               extra_outputs=None):
    state = {k: v.detach().clone() for k, v in module.state_dict().items()}
    stored = round_weights(state, dtype)
    out = forward_with(module, stored, x)
    tensors = {prefix + k: v for k, v in stored.items()}
    if extra:
        tensors.update(extra)
    st.save(os.path.join(OUT_DIR, name + ".safetensors"), tensors, hyperparameters(meta))
    io = {"input": x, "output": out}
    for key, (mod_dtype, x2) in (extra_outputs or {}).items():
        io[key] = forward_with(module, stored, x2)
    meta = dict(meta, dtype=st.DTYPES[dtype], prefix=prefix)
    st.save(os.path.join(OUT_DIR, name + ".io.safetensors"), io, meta)
    # Self-check: re-read and recompute.
    back, back_meta = st.load(os.path.join(OUT_DIR, name + ".safetensors"))
    assert back_meta == hyperparameters(meta), name
    for k, v in tensors.items():
        assert back[k].dtype == v.dtype and torch.equal(back[k], v), (name, k)
    again = forward_with(module, {k: back[prefix + k] for k in stored}, x)
    assert torch.equal(again, out), name
    iob, _ = st.load(os.path.join(OUT_DIR, name + ".io.safetensors"))
    assert torch.equal(iob["output"], out) and torch.equal(iob["input"], x), name
    print(f"wrote {name}: {sorted(tensors)}")


def book_cases():
    cases = []
    torch.manual_seed(501)
    ca = CausalAttention(4, 5, 7, 0.0, qkv_bias=True)
    randomise_biases(ca)
    cases.append(("book_ca_f32", ca, torch.randn(2, 6, 4),
                  dict(module="CausalAttention", d_in=4, d_out=5, context_length=7, num_heads=1,
                       qkv_bias=1, format="book")))
    torch.manual_seed(502)
    wr = MultiHeadAttentionWrapper(5, 3, 6, 0.0, num_heads=3, qkv_bias=False)
    cases.append(("book_wrapper_f32", wr, torch.randn(2, 6, 5),
                  dict(module="MultiHeadAttentionWrapper", d_in=5, d_out=3, context_length=6,
                       num_heads=3, qkv_bias=0, format="book")))
    torch.manual_seed(503)
    wrb = MultiHeadAttentionWrapper(3, 2, 4, 0.0, num_heads=2, qkv_bias=True)
    randomise_biases(wrb)
    cases.append(("book_wrapper_bias_f32", wrb, torch.randn(1, 3, 3),
                  dict(module="MultiHeadAttentionWrapper", d_in=3, d_out=2, context_length=4,
                       num_heads=2, qkv_bias=1, format="book")))
    torch.manual_seed(504)
    mha = MultiHeadAttention(6, 8, 9, 0.0, num_heads=4, qkv_bias=True)
    randomise_biases(mha)
    cases.append(("book_mha_f32", mha, torch.randn(3, 7, 6),
                  dict(module="MultiHeadAttention", d_in=6, d_out=8, context_length=9,
                       num_heads=4, qkv_bias=1, format="book")))
    torch.manual_seed(505)
    mha2 = MultiHeadAttention(4, 6, 5, 0.0, num_heads=2, qkv_bias=False)
    cases.append(("book_mha_nobias_f32", mha2, torch.randn(1, 5, 4),
                  dict(module="MultiHeadAttention", d_in=4, d_out=6, context_length=5,
                       num_heads=2, qkv_bias=0, format="book")))
    for name, module, x, meta in cases:
        write_case(name, module, x, meta)
    # The book's own seed-123 MultiHeadAttention(3, 2, 6, 0.0, num_heads=2) on
    # the book's batch (the weights of examples/book_weights.hpp), for the demo.
    torch.manual_seed(123)
    book = MultiHeadAttention(3, 2, 6, 0.0, num_heads=2)
    write_case("book_mha_seed123", book, book_batch()[1],
               dict(module="MultiHeadAttention", d_in=3, d_out=2, context_length=6, num_heads=2,
                    qkv_bias=0, format="book"))
    # Reduced precision: the same book MultiHeadAttention stored as F16 / BF16.
    write_case("book_mha_f16", mha, cases[3][2], cases[3][3], dtype=torch.float16)
    write_case("book_mha_bf16", mha, cases[3][2], cases[3][3], dtype=torch.bfloat16)
    # F64: weights drawn in float64 (not float32-representable); `output` is
    # PyTorch's float64 result, `output_f32` its float32 result with the
    # weights rounded to float32 (what a float model loading F64 must give).
    torch.manual_seed(506)
    m64 = MultiHeadAttention(5, 6, 8, 0.0, num_heads=3, qkv_bias=True).double()
    with torch.no_grad():
        for p in m64.parameters():
            p.copy_(torch.randn_like(p) * 0.4)
    x64 = torch.randn(2, 8, 5, dtype=torch.float64)
    write_case("book_mha_f64", m64, x64,
               dict(module="MultiHeadAttention", d_in=5, d_out=6, context_length=8, num_heads=3,
                    qkv_bias=1, format="book"),
               dtype=torch.float64, extra_outputs={"output_f32": (torch.float32, x64.float())})


def torch_cases():
    torch.manual_seed(601)
    m = TorchCausalMHA(8, 2)
    randomise_biases(m)
    x = torch.randn(2, 6, 8)
    m.eval()
    mb = TorchCausalMHA(8, 2, bool_mask=True).eval()
    mb.load_state_dict(m.state_dict())
    with torch.no_grad():
        assert torch.equal(m(x), mb(x)), "float and bool causal masks disagree"
    meta = dict(module="torch.nn.MultiheadAttention", d_in=8, d_out=8, context_length=6,
                num_heads=2, qkv_bias=1, format="pytorch_multihead")
    write_case("torch_mha_f32", m, x, meta)
    write_case("torch_mha_bf16", m, x, meta, dtype=torch.bfloat16)


def gpt2_cases():
    torch.manual_seed(701)
    g = GPT2Attention(12, 3, 10)
    x = torch.randn(2, 8, 12)
    meta = dict(module="GPT2Attention", d_in=12, d_out=12, context_length=10, num_heads=3,
                qkv_bias=1, format="gpt2")
    extra = {"wte.weight": torch.randn(5, 12), "h.0.ln_1.weight": torch.randn(12),
             "h.1.attn.c_attn.weight": torch.randn(12, 36)}
    write_case("gpt2_f32", g, x, meta, prefix="h.0.attn.", extra=extra)
    write_case("gpt2_f16", g, x, meta, dtype=torch.float16, prefix="h.0.attn.", extra=extra)


def neox_cases():
    # GPT-NeoX / Megatron-LM fused QKV, per-head interleaved rows: 3 heads, so
    # the interleaved and the contiguous readings differ in every head.
    torch.manual_seed(901)
    m = NeoXAttention(12, 3, 8)
    randomise_biases(m)
    x = torch.randn(2, 7, 12)
    meta = dict(module="GPTNeoXAttention (rotary_pct = 0)", d_in=12, d_out=12, context_length=8,
                num_heads=3, qkv_bias=1, format="neox")
    prefix = "gpt_neox.layers.0.attention."
    extra = {"gpt_neox.layers.0.input_layernorm.weight": torch.randn(12)}
    # The interleaving is real: the row blocks of head 1 are not those of the
    # contiguous layout.
    with torch.no_grad():
        qkv = m.query_key_value.weight.view(3, 3, 4, 12)  # [head][q/k/v][head_dim][in]
        assert not torch.equal(qkv[1, 0], m.query_key_value.weight[4:8])
    write_case("neox_f32", m, x, meta, prefix=prefix, extra=extra)
    # F64: all parameters re-drawn in float64; `output` is PyTorch's float64 result.
    torch.manual_seed(902)
    m64 = NeoXAttention(12, 3, 8).double()
    with torch.no_grad():
        for p in m64.parameters():
            p.copy_(torch.randn_like(p) * 0.4)
    write_case("neox_f64", m64, torch.randn(2, 7, 12, dtype=torch.float64), meta,
               dtype=torch.float64, prefix=prefix)


def cross_cases():
    # nn.MultiheadAttention(8, 2, kdim=5, vdim=7) as cross-attention: PyTorch
    # stores q_proj_weight, k_proj_weight, v_proj_weight (no in_proj_weight).
    torch.manual_seed(1001)
    m = TorchCrossMHA(8, 2, 5, 7)
    randomise_biases(m)
    m.eval()
    assert not m._qkv_same_embed_dim and m.in_proj_weight is None
    query, key, value = torch.randn(2, 3, 8), torch.randn(2, 6, 5), torch.randn(2, 6, 7)
    with torch.no_grad():
        out = m(query, key, value)
    state = {k: v.detach().clone() for k, v in m.state_dict().items()}
    assert sorted(state) == sorted(["q_proj_weight", "k_proj_weight", "v_proj_weight",
                                    "in_proj_bias", "out_proj.weight", "out_proj.bias"]), sorted(state)
    e = 8
    bias = state["in_proj_bias"]
    book = {"W_query.weight": state["q_proj_weight"], "W_query.bias": bias[:e].clone(),
            "W_key.weight": state["k_proj_weight"], "W_key.bias": bias[e:2 * e].clone(),
            "W_value.weight": state["v_proj_weight"], "W_value.bias": bias[2 * e:].clone(),
            "out_proj.weight": state["out_proj.weight"], "out_proj.bias": state["out_proj.bias"]}
    with torch.no_grad():
        by_book = book_cross_forward(book, 2, query, key, value)
    assert torch.allclose(by_book, out, rtol=1e-5, atol=1e-6), (by_book - out).abs().max()
    meta = dict(module="torch.nn.MultiheadAttention(8, 2, kdim=5, vdim=7) cross-attention",
                d_in=8, d_out=8, context_length=6, num_heads=2, qkv_bias=1, kdim=5, vdim=7)
    files = {"torch_cross_f32": (state, dict(meta, format="pytorch_multihead")),
             "torch_cross_book_f32": (book, dict(meta, format="book"))}
    for name, (tensors, file_meta) in files.items():
        st.save(os.path.join(OUT_DIR, name + ".safetensors"), tensors, hyperparameters(file_meta))
    io = {"query": query, "key": key, "value": value, "output": out}
    st.save(os.path.join(OUT_DIR, "torch_cross_f32.io.safetensors"), io,
            dict(meta, dtype="F32", formats="pytorch_multihead, book"))
    # Self-check: re-read; PyTorch's module on the re-read state_dict gives `output`.
    for name, (tensors, file_meta) in files.items():
        back, back_meta = st.load(os.path.join(OUT_DIR, name + ".safetensors"))
        assert back_meta == hyperparameters(file_meta), name
        assert list(back) == list(tensors), name
        for k, v in tensors.items():
            assert back[k].dtype == v.dtype and torch.equal(back[k], v), (name, k)
    again = TorchCrossMHA(8, 2, 5, 7).eval()
    again.load_state_dict(st.load(os.path.join(OUT_DIR, "torch_cross_f32.safetensors"))[0])
    iob, _ = st.load(os.path.join(OUT_DIR, "torch_cross_f32.io.safetensors"))
    with torch.no_grad():
        assert torch.equal(again(iob["query"], iob["key"], iob["value"]), out)
    for k, v in io.items():
        assert torch.equal(iob[k], v), k
    for name, (tensors, _) in files.items():
        print(f"wrote {name}: {sorted(tensors)}")


def dtype_case():
    # F16: every exponent with a spread of mantissas, both signs (incl. 0,
    # subnormals, max, inf, NaN). BF16: the same idea. F64: random values,
    # exact float32 ties, near-overflow, subnormal and underflowing values.
    f16_bits = []
    for sign in (0, 1):
        for e in range(32):
            for m in (0, 1, 2, 3, 0x155, 0x200, 0x2AA, 0x3FE, 0x3FF, 0x123, 0x0F0):
                f16_bits.append((sign << 15) | (e << 10) | m)
    f16 = torch.tensor(f16_bits, dtype=torch.int32).to(torch.int16).view(torch.float16)
    bf16_bits = []
    for sign in (0, 1):
        for e in range(256):
            for m in (0, 1, 0x40, 0x55, 0x7F, 0x2A):
                bf16_bits.append((sign << 15) | (e << 7) | m)
    bf16 = torch.tensor(bf16_bits, dtype=torch.int32).to(torch.int16).view(torch.bfloat16)
    g = torch.Generator().manual_seed(801)
    f64 = (torch.randn(200, dtype=torch.float64, generator=g) *
           torch.pow(10.0, torch.randint(-40, 39, (200,), generator=g).double()))
    one = 1.0
    ties = [one + 2.0 ** -24, one + 3 * 2.0 ** -24, -(one + 2.0 ** -24), 2.0 ** -149 * 1.5,
            2.0 ** -150, 2.0 ** -151, 3.4028235677973366e38, 3.4028235e38, 1e-46, 0.1, -0.0]
    f64 = torch.cat([f64, torch.tensor(ties, dtype=torch.float64)])
    tensors = {"f16": f16, "f16_as_f32": f16.float(), "bf16": bf16, "bf16_as_f32": bf16.float(),
               "f64": f64, "f64_as_f32": f64.float()}
    st.save(os.path.join(OUT_DIR, "dtypes.safetensors"), tensors, {"generator": GENERATOR})
    back, _ = st.load(os.path.join(OUT_DIR, "dtypes.safetensors"))
    for k, v in tensors.items():
        assert back[k].dtype == v.dtype, k
        assert torch.equal(back[k].float().nan_to_num(7.0), v.float().nan_to_num(7.0)), k
    print("wrote dtypes:", {k: tuple(v.shape) for k, v in tensors.items()})


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    # Stale files go, except another generator's (the GQA generators record
    # themselves in __metadata__ 'generator'; this one's .io files record none).
    for f in os.listdir(OUT_DIR):
        if f.endswith(".safetensors"):
            path = os.path.join(OUT_DIR, f)
            try:
                owner = st.load(path)[1].get("generator", GENERATOR)
            except Exception:  # unreadable: not a fixture worth keeping
                owner = GENERATOR
            if owner == GENERATOR:
                os.remove(path)
    book_cases()
    torch_cases()
    gpt2_cases()
    neox_cases()
    cross_cases()
    dtype_case()


if __name__ == "__main__":
    main()
