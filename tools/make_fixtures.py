#!/usr/bin/env python3
"""Generate golden reference fixtures for the C++ "mha" library.

Run from anywhere with Debian's python3 (which provides PyTorch; the pyenv
``python3`` on PATH has no torch):

    /usr/bin/python3 tools/make_fixtures.py

Writes one JSON file per case into ``test/data/golden/`` (stale ``*.json``
files there are deleted first). Dependencies: torch + stdlib only. The
modules come from ``tools/reference_modules.py``. See
``test/data/golden/README.md`` for the schema and the case list.
"""

import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402

from reference_modules import (  # noqa: E402
    CausalAttention,
    MultiHeadAttention,
    MultiHeadAttentionWrapper,
)

REPO = os.path.dirname(HERE)
OUT_DIR = os.path.join(REPO, "test", "data", "golden")
SCRIPT = "tools/make_fixtures.py"
SEED_BASE = 1000

# name, module, dtype, d_in, d_out, context_length, num_heads, qkv_bias, batch, tokens
CASES = [
    ("ca_f32_book_shape", "causal_attention", "float32", 3, 2, 6, 1, False, 2, 6),
    ("ca_f64_din5_dout7_bias", "causal_attention", "float64", 5, 7, 8, 1, True, 3, 5),
    ("ca_f32_n1", "causal_attention", "float32", 4, 4, 4, 1, False, 2, 1),
    ("wrap_f32_h3_bias", "multi_head_attention_wrapper", "float32", 6, 3, 8, 3, True, 2, 7),
    ("wrap_f64_din8_dout2", "multi_head_attention_wrapper", "float64", 8, 2, 5, 2, False, 1, 5),
    ("wrap_f32_n1_ex32", "multi_head_attention_wrapper", "float32", 3, 1, 6, 2, False, 2, 1),
    ("mha_f32_h3_bias_full", "multi_head_attention", "float32", 5, 6, 9, 3, True, 2, 9),
    ("mha_f64_din12_dout8_h4", "multi_head_attention", "float64", 12, 8, 10, 4, False, 3, 6),
    ("mha_f32_n1_h2", "multi_head_attention", "float32", 4, 4, 3, 2, False, 1, 1),
    ("mha_f64_h5_bias", "multi_head_attention", "float64", 10, 15, 7, 5, True, 2, 4),
    ("mha_f32_din48_dout64_h4", "multi_head_attention", "float32", 48, 64, 40, 4, True, 2, 33),
    ("mha_f32_din64_dout32_h8", "multi_head_attention", "float32", 64, 32, 32, 8, False, 1, 32),
]

DTYPES = {"float32": torch.float32, "float64": torch.float64}


def constructor_call(module, d_in, d_out, ctx, heads, bias):
    if module == "causal_attention":
        return f"CausalAttention({d_in}, {d_out}, {ctx}, 0.0, qkv_bias={bias})"
    if module == "multi_head_attention_wrapper":
        return f"MultiHeadAttentionWrapper({d_in}, {d_out}, {ctx}, 0.0, {heads}, qkv_bias={bias})"
    if module == "multi_head_attention":
        return f"MultiHeadAttention({d_in}, {d_out}, {ctx}, 0.0, {heads}, qkv_bias={bias})"
    raise ValueError(module)


def construct(module, d_in, d_out, ctx, heads, bias):
    if module == "causal_attention":
        return CausalAttention(d_in, d_out, ctx, 0.0, qkv_bias=bias)
    if module == "multi_head_attention_wrapper":
        return MultiHeadAttentionWrapper(d_in, d_out, ctx, 0.0, heads, qkv_bias=bias)
    if module == "multi_head_attention":
        return MultiHeadAttention(d_in, d_out, ctx, 0.0, heads, qkv_bias=bias)
    raise ValueError(module)


def redraw_float64(model):
    """Re-draw every nn.Linear parameter directly in float64.

    Uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)], fan_in = weight.shape[1];
    the bias uses the bound of its layer's weight.
    """
    with torch.no_grad():
        for layer in model.modules():
            if isinstance(layer, torch.nn.Linear):
                bound = 1.0 / math.sqrt(layer.weight.shape[1])
                layer.weight.uniform_(-bound, bound)
                if layer.bias is not None:
                    layer.bias.uniform_(-bound, bound)


def tensor_entry(t):
    t = t.detach().contiguous()
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1).tolist()]}


def make_case(index, case):
    name, module, dtype_name, d_in, d_out, ctx, heads, bias, batch, tokens = case
    dtype = DTYPES[dtype_name]
    seed = SEED_BASE + index
    call = constructor_call(module, d_in, d_out, ctx, heads, bias)

    torch.manual_seed(seed)
    model = construct(module, d_in, d_out, ctx, heads, bias)
    if dtype == torch.float64:
        model = model.double()
        redraw_float64(model)
        init = ("then .double() and every Linear parameter re-drawn in float64 as "
                "uniform(-1/sqrt(fan_in), 1/sqrt(fan_in))")
    else:
        init = "with the default float32 nn.Linear init"
    model.eval()
    x = torch.randn(batch, tokens, d_in, dtype=dtype) * 1.5
    with torch.no_grad():
        y = model(x)

    assert y.dtype == dtype and x.dtype == dtype
    params = {}
    for key, value in model.state_dict().items():
        if key == "mask" or key.endswith(".mask"):
            continue
        assert value.dtype == dtype, (name, key, value.dtype)
        if key.endswith(".bias"):
            assert bool((value != 0).all()), (name, key)
        params[key] = tensor_entry(value)

    generated_by = (
        f"{SCRIPT} with torch {torch.__version__}: torch.manual_seed({seed}), "
        f"{call} from tools/reference_modules.py {init}, input = "
        f"torch.randn({batch}, {tokens}, {d_in}, dtype=torch.{dtype_name}) * 1.5 drawn "
        f"next from the same RNG stream, output computed with the module in eval() mode "
        f"(dropout 0.0) under torch.no_grad()."
    )
    return {
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
        "tokens": tokens,
        "params": params,
        "input": tensor_entry(x),
        "output": tensor_entry(y),
    }


def verify(path):
    """Reload a fixture and recompute the output from the stored numbers."""
    with open(path) as f:
        fx = json.load(f)
    dtype = DTYPES[fx["dtype"]]
    model = construct(fx["module"], fx["d_in"], fx["d_out"], fx["context_length"],
                      fx["num_heads"], fx["qkv_bias"]).to(dtype)
    state = {k: torch.tensor(v["data"], dtype=dtype).reshape(v["shape"])
             for k, v in fx["params"].items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected and all(m == "mask" or m.endswith(".mask") for m in missing), \
        (missing, unexpected)
    x = torch.tensor(fx["input"]["data"], dtype=dtype).reshape(fx["input"]["shape"])
    model.eval()
    with torch.no_grad():
        y = model(x)
    expected = torch.tensor(fx["output"]["data"], dtype=dtype).reshape(fx["output"]["shape"])
    # The stored float32 values must be exactly float32-representable.
    for entry in [fx["input"], fx["output"], *fx["params"].values()]:
        back = torch.tensor(entry["data"], dtype=dtype).tolist()
        assert back == entry["data"], (path, "values do not round-trip")
    assert torch.equal(y, expected), (path, (y - expected).abs().max())
    return fx


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    for entry in os.listdir(OUT_DIR):
        if entry.endswith(".json"):
            os.remove(os.path.join(OUT_DIR, entry))
    for index, case in enumerate(CASES):
        fixture = make_case(index, case)
        path = os.path.join(OUT_DIR, fixture["name"] + ".json")
        with open(path, "w") as f:
            json.dump(fixture, f, separators=(",", ":"))
            f.write("\n")
        verify(path)
        print(f"wrote {os.path.relpath(path, REPO)}  output shape {fixture['output']['shape']}")


if __name__ == "__main__":
    main()
