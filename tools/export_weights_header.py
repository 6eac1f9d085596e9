#!/usr/bin/env python3
"""Export attention weights into a C++ header of constexpr data and a
ready-made constexpr mha model object (ROM-able, usable at compile time).

From a safetensors file (needs only the Python standard library):

    python3 tools/export_weights_header.py WEIGHTS.safetensors OUT.hpp \\
        --model multi_head_attention --format gpt2 --prefix h.0.attn. \\
        --num-heads 12 --context-length 1024 [--type float] \\
        [--namespace my_weights] [--name model]

(`cmake --install` installs this file as the program `mha-export-weights`:
the same arguments. It needs only the standard library; keep it so, the
installed copy has no tools/ directory beside it.)

From a PyTorch module (in Python, with torch):

    from export_weights_header import export_module
    export_module(module, "out.hpp", model="multi_head_attention", num_heads=2,
                  context_length=6)      # format "book" by default

The file's tensors become the model kind's parameters as PyTorch's
named_parameters() lists them for the book's class (nn.MultiheadAttention's
for the fused kind), which is mha::parameter_names<type>:

    causal_attention             W_query.weight, [W_query.bias,] W_key..., W_value...
    multi_head_attention         the same, then out_proj.weight, out_proj.bias
    multi_head_attention_wrapper heads.0.W_query.weight, ..., heads.1.W_query.weight, ...
    fused_multi_head_attention   in_proj_weight, [in_proj_bias,] out_proj.weight, out_proj.bias

The header defines, in the namespace, one `inline constexpr mha::tensor<T, ...>`
array per parameter, in that order, named `<name>_` + the parameter's name
lower-cased with every other character than a letter, digit or _ as _
(`<name>_w_query_weight` [d_out][d_in], nn.Linear layout, ...,
`<name>_heads_0_w_query_weight`, `<name>_in_proj_weight`), then
`using <name>_type = <model type>;`, a static_assert that
mha::parameter_names<<name>_type> are the exported names, and
`inline constexpr <name>_type <name> = mha::from_parameters<<name>_type>(...)`
(static storage duration; `static constexpr` if you copy it into a class).
Formats and names are those of
mha::io::checkpoint_format (book, pytorch_multihead, gpt2); GPT-2's Conv1D
weights are transposed to [out][in]. d_in, d_out, qkv_bias and (for the book
wrapper) num_heads come from the tensor shapes; context_length defaults to the
book's `mask` buffer size when there is one. When the file records
`num_heads` / `context_length` in its `__metadata__` (as the files of
tools/make_safetensors_fixtures.py do), they are the defaults of --num-heads /
--context-length, and a different argument is an error (as is a recorded
checkpoint_format other than --format).

`--tensors NAME...` instead exports the named tensors as they are (any shape)
as `mha::tensor` constants, e.g. test inputs and PyTorch outputs.

--name must be a C++ identifier (or "" with --tensors) and --namespace C++
identifiers joined by `::` (no inner `mha` or `std`, which would hide the
namespaces the header names); --context-length is 1 to 2^32 - 1 (a
std::size_t of a 32-bit target), --num-heads at least 1, and num_heads divides
d_out; the output path is not empty. Every tensor's shape is checked against
the model's d_in and d_out (weights [d_out, d_in], out_proj [d_out, d_out],
biases [d_out], fused ones [3 * d_out]), every extent is at least 1, the
recorded num_heads / context_length are decimal integers, every value fits
T, and the --tensors constants are distinct C++ identifiers. The safetensors
header must be an object of tensor entries (dtype, shape, data_offsets) that
agree with the data. Text from the file or the arguments written into
comments (tensor names, the file name, --prefix) has its non-printable
characters escaped. Anything else stops the exporter with one line
`error: ...` (exit status 2) before it writes anything.

Values are printed as the shortest literal that converts back to the exact
value in T (float: round to nearest float32 first). NaN/inf are rejected.
"""

import argparse
import json
import math
import os
import re
import struct
import sys
from fractions import Fraction

COMMAND = "tools/export_weights_header.py"
MODEL_KINDS = ("causal_attention", "multi_head_attention_wrapper", "multi_head_attention",
               "fused_multi_head_attention")
# The largest --context-length: the model types' std::size_t template argument
# on a 32-bit target (above 2^64 - 1 g++ even wraps the literal without an error).
MAX_CONTEXT_LENGTH = 2 ** 32 - 1

# ----------------------------------------------------------------- reading

_SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "BOOL": 1, "U8": 1, "I8": 1, "I16": 2,
          "U16": 2, "I32": 4, "U32": 4, "I64": 8, "U64": 8}


def _read_header(path):
    """(header dict without __metadata__, metadata dict, data bytes) of a
    safetensors file, its structure checked: a JSON object of tensor entries,
    each an object with a known dtype, a shape of non-negative integers and
    data_offsets of two integers within the data matching dtype and shape;
    __metadata__ an object. ValueError otherwise."""
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise ValueError(f"{path}: truncated (fewer than 8 bytes)")
    (n,) = struct.unpack("<Q", raw[:8])
    if n > len(raw) - 8:
        raise ValueError(f"{path}: header length {n} exceeds the file")
    try:
        header = json.loads(raw[8:8 + n])
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError
        raise ValueError(f"{path}: the header is not JSON ({e})") from None
    if not isinstance(header, dict):
        raise ValueError(f"{path}: the header is a JSON {type(header).__name__}, not an object")
    data = raw[8 + n:]
    metadata = header.pop("__metadata__", {})
    if not isinstance(metadata, dict):
        raise ValueError(f"{path}: __metadata__ is a JSON {type(metadata).__name__}, not an object")
    for name, info in header.items():
        what = f"{path}: tensor {name!r}"
        if not isinstance(info, dict):
            raise ValueError(f"{what}: its entry is a JSON {type(info).__name__}, not an object")
        dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
        if not isinstance(dtype, str) or dtype not in _SIZES:
            raise ValueError(f"{what}: dtype {dtype!r} is not one of {', '.join(_SIZES)}")
        if not isinstance(shape, list) or not all(_is_int(d) and d >= 0 for d in shape):
            raise ValueError(f"{what}: shape {shape!r} is not a list of non-negative integers")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(map(_is_int, offsets))
                and 0 <= offsets[0] <= offsets[1] <= len(data)):
            raise ValueError(f"{what}: data_offsets {offsets!r} are not two integers "
                             f"0 <= begin <= end <= {len(data)} (the data's size)")
        if offsets[1] - offsets[0] != math.prod(shape) * _SIZES[dtype]:
            raise ValueError(f"{what}: inconsistent dtype/shape/data_offsets")
    return header, metadata, data


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def read_safetensors(path):
    """dict name -> (shape, flat list of Python floats) of every float tensor."""
    header, _, data = _read_header(path)
    out = {}
    for name, info in header.items():
        dtype, shape = info["dtype"], list(info["shape"])
        begin, end = info["data_offsets"]
        count = math.prod(shape)
        chunk = data[begin:end]
        if dtype == "F64":
            vals = list(struct.unpack(f"<{count}d", chunk))
        elif dtype == "F32":
            vals = list(struct.unpack(f"<{count}f", chunk))
        elif dtype == "F16":
            vals = list(struct.unpack(f"<{count}e", chunk))
        elif dtype == "BF16":
            vals = [struct.unpack("<f", struct.pack("<I", h << 16))[0]
                    for h in struct.unpack(f"<{count}H", chunk)]
        else:
            continue  # integer/bool buffers (e.g. GPT-2's attn.bias) are not weights
        out[name] = (shape, vals)
    return out


def read_metadata(path):
    """The `__metadata__` dict of a safetensors file ({} when it has none)."""
    return _read_header(path)[1]


def check_metadata(metadata, fmt, num_heads, context_length):
    """(num_heads, context_length): the arguments, defaulted from the file's
    recorded hyperparameters (tools/make_safetensors_fixtures.py writes them, as
    mha::io checks them); a conflict with an argument is an error."""
    recorded = metadata.get("checkpoint_format")
    if recorded is not None and recorded != fmt:
        raise ValueError(f"--format {fmt} differs from the file's __metadata__ "
                         f"checkpoint_format = {recorded}")
    if metadata.get("qkv_layout", "contiguous") != "contiguous":
        raise ValueError(f"the file's fused QKV layout is {metadata['qkv_layout']}; "
                         "the exporter reads only the contiguous layout")
    out = []
    for key, arg, flag in (("num_heads", num_heads, "--num-heads"),
                           ("context_length", context_length, "--context-length")):
        if key in metadata:
            value = _metadata_count(metadata, key)
            if arg is not None and arg != value:
                raise ValueError(f"{flag} {arg} differs from the file's __metadata__ {key} = {value}")
            arg = value
        out.append(arg)
    return tuple(out)


def _metadata_count(metadata, key):
    """A `__metadata__` value as a count, as mha::io reads it: a string of
    decimal digits (or a JSON integer); 2.7, "2.7", "4 heads" are errors."""
    value = metadata[key]
    if _is_int(value):
        return value
    if isinstance(value, str) and re.fullmatch(r"[0-9]+", value):
        return int(value)
    raise ValueError(f"the file's __metadata__ {key} = {json.dumps(value)} is not an integer")


def tensors_from_module(module):
    """dict name -> (shape, flat values) of a torch module's state_dict."""
    out = {}
    for name, t in module.state_dict().items():
        if t.is_floating_point():
            out[name] = (list(t.shape), t.detach().double().reshape(-1).tolist())
    return out

# ----------------------------------------------------------------- mapping


def _get(tensors, name, shape=None, dims=None, optional=False):
    """(shape, values) of tensor `name` (None when optional and absent), its
    extents at least 1 and, given `shape`, equal to it (`dims` names them)."""
    if name not in tensors:
        if optional:
            return None
        raise KeyError(f"tensor {name} not found")
    s, v = tensors[name]
    if shape is not None:
        _check_shape(name, s, shape, dims)
    if not all(d > 0 for d in s):
        raise ValueError(f"tensor {name} has shape {s}: an extent is 0 (mha::tensor extents "
                         "are at least 1)")
    return s, v


def _check_shape(name, shape, expected, dims=None):
    if list(shape) != list(expected):
        raise ValueError(f"tensor {name} has shape {list(shape)}, expected "
                         + (f"{dims} = " if dims else "") + f"{list(expected)}")


def _matrix(tensors, name):
    """(shape, values) of the 2-D tensor `name`."""
    s, v = _get(tensors, name)
    if len(s) != 2:
        raise ValueError(f"tensor {name} has shape {s}, expected a matrix [rows, columns]")
    return s, v


def _transpose(vals, rows, cols):
    """[rows][cols] -> [cols][rows]."""
    return [vals[r * cols + c] for c in range(cols) for r in range(rows)]


def linears(tensors, fmt, prefix, model):
    """(list of (q, k, v) per head, out_proj or None, the book's mask or None)
    with each projection a dict {weight: (shape, vals), bias: (shape, vals) or
    None, name: its tensors' name without .weight/.bias}, weights [out][in], and
    the mask (name, (shape, vals)). The fused tensors of pytorch_multihead and
    gpt2 are checked here (their parts are consistent by construction)."""
    def lin(base):
        return {"weight": _matrix(tensors, base + ".weight"),
                "bias": _get(tensors, base + ".bias", optional=True), "name": base}

    def mask(name):
        return (name, tensors[name]) if name in tensors else None

    def split(w, b, e, d_in, base):
        return [{"weight": ([e, d_in], w[i * e * d_in:(i + 1) * e * d_in]),
                 "bias": ([e], b[1][i * e:(i + 1) * e]) if b else None, "name": base}
                for i in range(3)]

    def rows(name, three_e, what):
        if three_e % 3:
            raise ValueError(f"tensor {name}: its {three_e} {what} are not 3 * d_out (query, key "
                             "and value)")
        return three_e // 3

    if fmt == "book":
        if model == "multi_head_attention_wrapper":
            heads = []
            h = 0
            while f"{prefix}heads.{h}.W_query.weight" in tensors:
                hp = f"{prefix}heads.{h}."
                heads.append((lin(hp + "W_query"), lin(hp + "W_key"), lin(hp + "W_value")))
                h += 1
            if not heads:
                raise KeyError(f"no {prefix}heads.0.W_query.weight")
            return heads, None, mask(prefix + "heads.0.mask")
        qkv = (lin(prefix + "W_query"), lin(prefix + "W_key"), lin(prefix + "W_value"))
        out = lin(prefix + "out_proj") if model in ("multi_head_attention",
                                                    "fused_multi_head_attention") else None
        return [qkv], out, mask(prefix + "mask")
    if model not in ("multi_head_attention", "fused_multi_head_attention"):
        raise ValueError(f"format {fmt} needs model multi_head_attention or fused_multi_head_attention")
    if fmt == "pytorch_multihead":
        (three_e, d_in), w = _matrix(tensors, prefix + "in_proj_weight")
        e = rows(prefix + "in_proj_weight", three_e, "rows")
        b = _get(tensors, prefix + "in_proj_bias", [three_e], "[3 * d_out]", optional=True)
        return [tuple(split(w, b, e, d_in, prefix + "in_proj"))], lin(prefix + "out_proj"), None
    if fmt == "gpt2":
        (d_in, three_e), w = _matrix(tensors, prefix + "c_attn.weight")
        e = rows(prefix + "c_attn.weight", three_e, "columns")
        wt = _transpose(w, d_in, three_e)  # [3E][d_in]
        b = _get(tensors, prefix + "c_attn.bias", [three_e], "[3 * d_out]", optional=True)
        (pe, pe2), pw = _get(tensors, prefix + "c_proj.weight", [e, e], "[d_out, d_out]")
        out = {"weight": ([pe2, pe], _transpose(pw, pe, pe2)),
               "bias": _get(tensors, prefix + "c_proj.bias", [e], "[d_out]"),
               "name": prefix + "c_proj"}
        return [tuple(split(wt, b, e, d_in, prefix + "c_attn"))], out, None
    raise ValueError(f"unknown format {fmt}")

def model_parameters(tensors, model, fmt="book", prefix="", num_heads=None, context_length=None,
                     t_type="float"):
    """(C++ model type, its header, [(name, shape, values)]): the file's tensors
    (in format fmt, under prefix) as the parameters of the mha model kind
    `model`, named and ordered as PyTorch's named_parameters() of the book's
    class (nn.MultiheadAttention's for fused_multi_head_attention), which is
    mha::parameter_names<type>; weights [out][in]."""
    if model not in MODEL_KINDS:
        raise ValueError(f"unknown model kind {model}")
    heads, out, mask = linears(tensors, fmt, prefix, model)
    q0 = heads[0][0]
    d_out, d_in = q0["weight"][0]
    bias = q0["bias"] is not None
    # every tensor's shape from the query weight's [d_out, d_in] (a header of
    # other shapes would not compile, or read past or short of the values)
    for qkv in heads:
        for p in qkv:
            _check_shape(p["name"] + ".weight", p["weight"][0], [d_out, d_in], "[d_out, d_in]")
            if (p["bias"] is not None) != bias:
                raise ValueError(f"{p['name']} {'has no' if bias else 'has a'} bias, "
                                 f"{q0['name']} {'has one' if bias else 'has none'} "
                                 "(query/key/value projections differ in shape or bias)")
            if bias:
                _check_shape(p["name"] + ".bias", p["bias"][0], [d_out], "[d_out]")
    if out is not None:
        if out["bias"] is None:
            raise ValueError("out_proj has no bias (mha's out_proj always has one)")
        _check_shape(out["name"] + ".weight", out["weight"][0], [d_out, d_out], "[d_out, d_out]")
        _check_shape(out["name"] + ".bias", out["bias"][0], [d_out], "[d_out]")
    if context_length is None:
        if mask is None:
            raise ValueError("--context-length is required (no mask buffer in the file)")
        mname, (mshape, _) = mask
        if len(mshape) != 2 or mshape[0] != mshape[1] or mshape[0] < 1:
            raise ValueError(f"tensor {mname} has shape {mshape}, expected [context_length, "
                             "context_length] (or pass --context-length)")
        context_length = mshape[0]
    if model == "multi_head_attention_wrapper":
        if num_heads is not None and num_heads != len(heads):
            raise ValueError(f"num_heads {num_heads}, but the file has {len(heads)} heads")
        num_heads = len(heads)
    elif model == "causal_attention":
        if num_heads not in (None, 1):
            raise ValueError(f"num_heads {num_heads} for a single head (causal_attention)")
    elif num_heads is None:
        raise ValueError("--num-heads is required for " + model)
    if context_length < 1:
        raise ValueError(f"context_length {context_length} must be greater than 0")
    if context_length > MAX_CONTEXT_LENGTH:
        raise ValueError(f"context_length {context_length} is too large (at most "
                         f"{MAX_CONTEXT_LENGTH}, a std::size_t of a 32-bit target)")
    if num_heads is not None and num_heads < 1:
        raise ValueError(f"num_heads {num_heads} must be greater than 0")
    if model in ("multi_head_attention", "fused_multi_head_attention") and d_out % num_heads:
        raise ValueError(f"num_heads {num_heads} does not divide d_out {d_out} (each head gets "
                         "d_out / num_heads output features)")

    params = []

    def add(pname, p):
        params.append((pname + ".weight",) + tuple(p["weight"]))
        if p["bias"] is not None:
            params.append((pname + ".bias",) + tuple(p["bias"]))

    if model == "fused_multi_head_attention":
        q, k, v = heads[0]
        params.append(("in_proj_weight", [3 * d_out, d_in],
                       q["weight"][1] + k["weight"][1] + v["weight"][1]))
        if bias:
            params.append(("in_proj_bias", [3 * d_out], q["bias"][1] + k["bias"][1] + v["bias"][1]))
    else:
        for h, qkv in enumerate(heads):
            base = f"heads.{h}." if model == "multi_head_attention_wrapper" else ""
            for proj, p in zip(("W_query", "W_key", "W_value"), qkv):
                add(base + proj, p)
    if out is not None:
        add("out_proj", out)

    B = "true" if bias else "false"
    sizes = f"{t_type}, {d_in}, {d_out}, {context_length}"
    args = f"{sizes}, {B}" if model == "causal_attention" else f"{sizes}, {num_heads}, {B}"
    return f"mha::{model}<{args}>", f"<mha/{model}.hpp>", params


# ----------------------------------------------------------------- printing


_FLT_MAX = struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0]


def _f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def float_literal(v):
    """Shortest C++ float literal converting back to the float32 nearest to v."""
    if not math.isfinite(float(v)):
        raise ValueError(f"non-finite value {v}")
    try:
        v = _f32(float(v))
    except OverflowError:  # beyond FLT_MAX by more than half an ulp
        raise ValueError(f"value {v!r} is outside the range of float (use --type double)") from None
    if v == 0.0:
        return "-0.0f" if math.copysign(1.0, v) < 0 else "0.0f"
    for digits in range(1, 10):
        text = f"{v:.{digits}g}"
        # (a short text near FLT_MAX, e.g. 3.403e+38, rounds beyond the float range)
        if abs(float(text)) <= _FLT_MAX and _f32(float(text)) == v and _exact_nearest(text, v):
            break
    if not any(c in text for c in ".e"):
        text += ".0"
    return text + "f"


def _exact_nearest(text, v):
    """|decimal - v| < half a float32 ulp (no double rounding through float64)."""
    _, exponent = math.frexp(abs(v))
    ulp = Fraction(2) ** (max(exponent, -125) - 24)
    return abs(Fraction(text) - Fraction(v)) < ulp / 2


def double_literal(v):
    v = float(v)
    if not math.isfinite(v):
        raise ValueError(f"non-finite value {v}")
    text = repr(v)
    if not any(c in text for c in ".e"):
        text += ".0"
    return text


def tensor_constant(cname, t_type, shape, vals, comment, tensor=None):
    """The constant `cname`; ValueError naming `tensor` (default cname) for a
    value that T cannot hold."""
    lit = float_literal if t_type == "float" else double_literal
    dims = ", ".join(str(d) for d in shape)
    try:
        body = [lit(x) for x in vals]
    except ValueError as e:
        raise ValueError(f"tensor {tensor or cname}: {e}") from None
    lines = [comment_line(comment), f"inline constexpr mha::tensor<{t_type}, {dims}> {cname}{{{{"]
    for i in range(0, len(body), 8):
        lines.append("    " + ", ".join(body[i:i + 8]) + ",")
    lines[-1] = lines[-1].rstrip(",")
    lines.append("}};")
    return "\n".join(lines)


def _ident(s):
    return re.sub(r"[^0-9A-Za-z_]", "_", s)


def printable(text):
    """text with every non-printable character (a newline, other control, format
    and separator characters) escaped as \\xNN, \\uNNNN or \\UNNNNNNNN."""
    return "".join(c if c.isprintable() else
                   f"\\x{ord(c):02x}" if ord(c) < 0x100 else
                   f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}" for c in text)


def comment_line(text):
    """`// text` with text printable() (a newline would end the comment) and a
    final backslash (which would splice the next line into the comment) as
    \\x5c: names from the file or the command line cannot add code to the header."""
    text = printable(text)
    if text.rstrip().endswith("\\"):
        text = text.rstrip()[:-1] + "\\x5c"
    return "// " + text


# ----------------------------------------------------------------- arguments

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# C++20's keywords and alternative tokens: identifiers by the regex, but no name
_CPP_KEYWORDS = frozenset("""
    alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
    char32_t class compl concept const consteval constexpr constinit const_cast continue
    co_await co_return co_yield decltype default delete do double dynamic_cast else enum
    explicit export extern false float for friend goto if inline int long mutable namespace new
    noexcept not not_eq nullptr operator or or_eq private protected public register
    reinterpret_cast requires return short signed sizeof static static_assert static_cast
    struct switch template this thread_local throw true try typedef typeid typename union
    unsigned using virtual void volatile wchar_t while xor xor_eq""".split())


def _is_identifier(text):
    return _IDENTIFIER.fullmatch(text) is not None and text not in _CPP_KEYWORDS


def argument_error(name, namespace, num_heads=None, context_length=None, tensors_only=False):
    """The message for the first of the arguments that would give a header
    that does not compile, or None: a --name that is not a C++ identifier (it
    may be empty with --tensors: the constants are then named by the tensors
    alone), a --namespace that is not identifiers joined by `::`, a
    --context-length or --num-heads below 1."""
    if not (_is_identifier(name) or (tensors_only and name == "")):
        return f"--name '{name}' is not a C++ identifier (letters, digits and _, not a digit first, " \
            "not a keyword)"
    if not all(_is_identifier(part) for part in namespace.split("::")):
        return f"--namespace '{namespace}' is not a C++ namespace name (C++ identifiers joined by ::)"
    hiding = [part for part in namespace.split("::")[1:] if part in ("mha", "std")]
    if hiding:
        return f"--namespace '{namespace}': its inner namespace {hiding[0]} would hide the " \
            f"namespace ::{hiding[0]} that the header names as {hiding[0]}::"
    if context_length is not None and context_length < 1:
        return f"--context-length {context_length} must be greater than 0"
    if context_length is not None and context_length > MAX_CONTEXT_LENGTH:
        return f"--context-length {context_length} is too large (at most {MAX_CONTEXT_LENGTH}, " \
            "a std::size_t of a 32-bit target)"
    if num_heads is not None and num_heads < 1:
        return f"--num-heads {num_heads} must be greater than 0"
    return None


def render(tensors, out_path, model, fmt="book", prefix="", num_heads=None, context_length=None,
           t_type="float", namespace="mha_weights", name="model", source="", tensor_names=None):
    """Write the header; returns its text. ValueError for a name or namespace
    that is not a C++ identifier (argument_error), and for the errors of
    model_parameters."""
    error = argument_error(name, namespace, tensors_only=bool(tensor_names))
    if error:
        raise ValueError(error)
    blocks = []
    includes = {"<mha/tensor.hpp>"}
    if tensor_names:
        cnames = {}
        for tn in tensor_names:
            shape, vals = _get(tensors, tn)
            if not shape:
                shape = [1]
            cname = _ident(f"{name}_{tn}") if name else _ident(tn)
            if not _is_identifier(cname):
                raise ValueError(f"tensor {tn!r} would be the constant '{cname}', which is not a "
                                 "C++ identifier (a digit first or a keyword; give a --name)")
            if cname in cnames:
                raise ValueError(f"tensors {cnames[cname]!r} and {tn!r} would both be the constant "
                                 f"'{cname}' (each character other than a letter, digit or _ is _)")
            cnames[cname] = tn
            blocks.append(tensor_constant(cname, t_type, shape, vals, f"{tn} {shape} from {source}",
                                          tn))
    else:
        mtype, header, params = model_parameters(tensors, model, fmt, prefix, num_heads,
                                                 context_length, t_type)
        includes |= {"<array>", "<string_view>", "<mha/parameters.hpp>", header}
        cnames = []
        for pname, shape, vals in params:
            cnames.append(f"{name}_{_ident(pname.lower())}")
            blocks.append(tensor_constant(cnames[-1], t_type, shape, vals, f"{pname} {shape}"
                                          + (" ([out][in])" if len(shape) == 2 else ""), pname))
        listed = ", ".join(f'"{pname}"' for pname, _, _ in params)
        blocks.append(
            f"// The model, ready to use (static storage, constant-evaluable): its parameters\n"
            f"// are the constants above, in the order of PyTorch's named_parameters().\n"
            f"using {name}_type = {mtype};\n"
            f"static_assert(mha::parameter_names<{name}_type> ==\n"
            f"                  std::array<std::string_view, {len(params)}>{{{listed}}},\n"
            f"              \"{name}: the exported parameters are not those of {mtype} "
            f"({COMMAND})\");\n"
            f"inline constexpr {name}_type {name} = mha::from_parameters<{name}_type>(\n    "
            + ", ".join(cnames) + ");")
    head = ["// GENERATED FILE - do not edit.",
            comment_line(f"Generated by `{COMMAND}` from {source}"
                         + ("" if tensor_names else
                            f" (model {model}, format {fmt}, prefix '{prefix}')") + "."),
            "#pragma once", ""]
    head += [f"#include {i}" for i in sorted(includes, key=lambda i: (i.startswith("<mha/"), i))]
    text = "\n".join(head) + f"\n\nnamespace {namespace} {{\n\n" + "\n\n".join(blocks) + \
        f"\n\n}}  // namespace {namespace}\n"
    if out_path:
        os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
        with open(out_path, "w", encoding="utf-8") as f:
            f.write(text)
    return text


def export_module(module, out_path, model, fmt="book", **kw):
    """Export a torch module's state_dict (see render for the keyword arguments)."""
    return render(tensors_from_module(module), out_path, model, fmt,
                  source=kw.pop("source", type(module).__name__), **kw)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("weights", help="safetensors file")
    ap.add_argument("output", help="header to write")
    ap.add_argument("--model", default="multi_head_attention", choices=MODEL_KINDS)
    ap.add_argument("--format", default="detect",
                    choices=["detect", "book", "pytorch_multihead", "gpt2"],
                    help="the file's tensor names (default detect: the file's __metadata__ "
                         "checkpoint_format, else its names under --prefix, as mha::io's "
                         "checkpoint_format::detect; neox files are not supported here)")
    ap.add_argument("--prefix", default="")
    ap.add_argument("--num-heads", type=int)
    ap.add_argument("--context-length", type=int)
    ap.add_argument("--type", default="float", choices=["float", "double"])
    ap.add_argument("--namespace", default="mha_weights")
    ap.add_argument("--name", default="model")
    ap.add_argument("--tensors", nargs="+", help="export these tensors as they are instead")
    a = ap.parse_args(argv)
    error = argument_error(a.name, a.namespace, a.num_heads, a.context_length, bool(a.tensors))
    if not error and not a.output:
        error = "the output path is empty"
    if error:
        ap.error(printable(error))
    try:
        num_heads, context_length, fmt = a.num_heads, a.context_length, a.format
        tensors = read_safetensors(a.weights)
        if not a.tensors:
            metadata = read_metadata(a.weights)
            if fmt == "detect":
                fmt = detect_format(metadata, tensors, a.prefix)
            num_heads, context_length = check_metadata(metadata, fmt, num_heads, context_length)
        render(tensors, a.output, a.model, fmt, a.prefix, num_heads, context_length, a.type,
               a.namespace, a.name, os.path.basename(a.weights), a.tensors)
    except (ValueError, KeyError, OSError, struct.error) as e:
        # one line, as the loader's messages, not a traceback
        text = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
        print(f"{ap.prog}: error: {printable(text)}", file=sys.stderr)
        return 2
    except Exception as e:  # pylint: disable=broad-except  # a bug: still one line, no header
        print(f"{ap.prog}: error: unexpected {type(e).__name__}: {printable(str(e))} "
              "(please report this)", file=sys.stderr)
        return 2
    return 0


def detect_format(metadata, tensors, prefix):
    """The format as mha::io's checkpoint_format::detect finds it: the file's
    recorded checkpoint_format, else the first of in_proj_weight
    (pytorch_multihead), c_attn.weight (gpt2), query_key_value.weight (neox)
    under the prefix, else book."""
    fmt = metadata.get("checkpoint_format")
    if fmt is None:
        fmt = "book"
        for name, f in (("in_proj_weight", "pytorch_multihead"), ("c_attn.weight", "gpt2"),
                        ("query_key_value.weight", "neox")):
            if prefix + name in tensors:
                fmt = f
                break
    if fmt == "neox":
        raise ValueError("the file holds a GPT-NeoX checkpoint (checkpoint_format neox), which "
                         "the exporter does not read (its fused rows need a qkv_layout): load it "
                         "with mha::io (load_options::layout) instead")
    if fmt not in ("book", "pytorch_multihead", "gpt2"):
        raise ValueError(f"the file's __metadata__ checkpoint_format '{fmt}' is not book, "
                         "pytorch_multihead, gpt2 or neox")
    return fmt


if __name__ == "__main__":
    sys.exit(main())
