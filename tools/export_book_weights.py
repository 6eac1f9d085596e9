#!/usr/bin/env python3
"""Export the book's chapter-3 weights and outputs as a C++ header.

Run from anywhere with Debian's python3 (which provides PyTorch; the pyenv
``python3`` on PATH has no torch):

    /usr/bin/python3 tools/export_book_weights.py

Writes ``examples/book_weights.hpp``: the book's input embeddings, the
torch.manual_seed(123) weights of CausalAttention, MultiHeadAttentionWrapper
(main text and exercise 3.2) and MultiHeadAttention, and PyTorch's outputs
for the book's batch, as ``inline constexpr mha::tensor<float, ...>``
constants in ``namespace mha_book``. Dependencies: torch + stdlib only; the
modules come from ``tools/reference_modules.py``.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402

from export_weights_header import float_literal  # noqa: E402
from reference_modules import (  # noqa: E402
    CausalAttention,
    MultiHeadAttention,
    MultiHeadAttentionWrapper,
    book_batch,
)

REPO = os.path.dirname(HERE)
OUT_PATH = os.path.join(REPO, "examples", "book_weights.hpp")
COMMAND = "/usr/bin/python3 tools/export_book_weights.py"


def constant(name, tensor, comment):
    t = tensor.detach().to(torch.float32).contiguous()
    dims = ", ".join(str(d) for d in t.shape)
    values = [float_literal(x) for x in t.reshape(-1).tolist()]
    lines = [f"// {comment}", f"inline constexpr mha::tensor<float, {dims}> {name}{{{{"]
    per_line = 6
    for i in range(0, len(values), per_line):
        lines.append("    " + ", ".join(values[i:i + per_line]) + ",")
    lines[-1] = lines[-1].rstrip(",")
    lines.append("}};")
    return "\n".join(lines)


def build():
    inputs, batch = book_batch()
    blocks = [
        constant("inputs", inputs,
                 'The book\'s 3-dim embeddings of "Your journey starts with one step": '
                 "[tokens=6][d_in=3]."),
        constant("batch", batch,
                 "torch.stack((inputs, inputs), dim=0): [batch=2][tokens=6][d_in=3]."),
    ]

    # CausalAttention (section 3.5.3).
    torch.manual_seed(123)
    ca = CausalAttention(3, 2, 6, 0.0).eval()
    with torch.no_grad():
        ca_out = ca(batch)
    call = "torch.manual_seed(123); CausalAttention(3, 2, 6, 0.0)"
    for proj in ("query", "key", "value"):
        blocks.append(constant(
            f"causal_attention_w_{proj}", getattr(ca, f"W_{proj}").weight,
            f"{call}: W_{proj}.weight, [d_out=2][d_in=3]."))
    blocks.append(constant(
        "causal_attention_expected", ca_out,
        f"{call} applied to batch: [batch=2][tokens=6][d_out=2]."))

    # MultiHeadAttentionWrapper (section 3.6.1) and exercise 3.2.
    for prefix, d_out, label in (("wrapper", 2, "MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2)"),
                                 ("exercise_3_2", 1, "MultiHeadAttentionWrapper(3, 1, 6, 0.0, num_heads=2)")):
        torch.manual_seed(123)
        wrapper = MultiHeadAttentionWrapper(3, d_out, 6, 0.0, num_heads=2).eval()
        with torch.no_grad():
            out = wrapper(batch)
        call = f"torch.manual_seed(123); {label}"
        for h, head in enumerate(wrapper.heads):
            for proj in ("query", "key", "value"):
                blocks.append(constant(
                    f"{prefix}_head{h}_w_{proj}", getattr(head, f"W_{proj}").weight,
                    f"{call}: heads.{h}.W_{proj}.weight, [d_out={d_out}][d_in=3]."))
        blocks.append(constant(
            f"{prefix}_expected", out,
            f"{call} applied to batch: [batch=2][tokens=6][num_heads*d_out={2 * d_out}]."))

    # MultiHeadAttention (section 3.6.2).
    torch.manual_seed(123)
    mha = MultiHeadAttention(3, 2, 6, 0.0, num_heads=2).eval()
    with torch.no_grad():
        mha_out = mha(batch)
    call = "torch.manual_seed(123); MultiHeadAttention(3, 2, 6, 0.0, num_heads=2)"
    for proj in ("query", "key", "value"):
        blocks.append(constant(
            f"mha_w_{proj}", getattr(mha, f"W_{proj}").weight,
            f"{call}: W_{proj}.weight, [d_out=2][d_in=3]."))
    blocks.append(constant("mha_out_proj_weight", mha.out_proj.weight,
                           f"{call}: out_proj.weight, [d_out=2][d_out=2] ([out][in])."))
    blocks.append(constant("mha_out_proj_bias", mha.out_proj.bias,
                           f"{call}: out_proj.bias, [d_out=2]."))
    blocks.append(constant("mha_expected", mha_out,
                           f"{call} applied to batch: [batch=2][tokens=6][d_out=2]."))

    # Ready-made constexpr models built from the constants above (aggregate
    # initialisation; tools/export_weights_header.py uses mha::from_parameters).
    def heads(prefix, n):
        return ",\n        ".join(
            f"T::head_type{{{{{prefix}_head{h}_w_query}}, {{{prefix}_head{h}_w_key}}, "
            f"{{{prefix}_head{h}_w_value}}, 0.0f}}" for h in range(n))
    blocks.append(
        "// The four models with these weights, ready to use (constexpr, static storage).\n"
        "inline constexpr mha::causal_attention<float, 3, 2, 6> causal_attention_model{\n"
        "    {causal_attention_w_query}, {causal_attention_w_key}, {causal_attention_w_value}, 0.0f};\n"
        "inline constexpr mha::multi_head_attention_wrapper<float, 3, 2, 6, 2> wrapper_model = [] {\n"
        "  using T = mha::multi_head_attention_wrapper<float, 3, 2, 6, 2>;\n"
        f"  return T{{decltype(T::heads){{\n        {heads('wrapper', 2)}}}}};\n"
        "}();\n"
        "inline constexpr mha::multi_head_attention_wrapper<float, 3, 1, 6, 2> exercise_3_2_model = [] {\n"
        "  using T = mha::multi_head_attention_wrapper<float, 3, 1, 6, 2>;\n"
        f"  return T{{decltype(T::heads){{\n        {heads('exercise_3_2', 2)}}}}};\n"
        "}();\n"
        "inline constexpr mha::multi_head_attention<float, 3, 2, 6, 2> mha_model{\n"
        "    {mha_w_query}, {mha_w_key}, {mha_w_value}, {mha_out_proj_weight, mha_out_proj_bias}, 0.0f};")

    header = [
        "// GENERATED FILE - do not edit.",
        f"// Generated by `{COMMAND}` with torch {torch.__version__}",
        "// (modules from tools/reference_modules.py, eval() mode, dropout 0.0).",
        "// Weights use PyTorch's nn.Linear layout [out_features][in_features].",
        "#pragma once",
        "",
        "#include <mha/causal_attention.hpp>",
        "#include <mha/multi_head_attention.hpp>",
        "#include <mha/multi_head_attention_wrapper.hpp>",
        "#include <mha/tensor.hpp>",
        "",
        "namespace mha_book {",
        "",
        "",
    ]
    body = "\n\n".join(blocks)
    return "\n".join(header) + body + "\n\n}  // namespace mha_book\n"


def main():
    text = build()
    os.makedirs(os.path.dirname(OUT_PATH), exist_ok=True)
    with open(OUT_PATH, "w") as f:
        f.write(text)
    print(f"wrote {os.path.relpath(OUT_PATH, REPO)}")


if __name__ == "__main__":
    main()
