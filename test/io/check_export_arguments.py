#!/usr/bin/env python3
"""Fails when tools/export_weights_header.py accepts arguments that give a header
that does not compile.

Usage: check_export_arguments.py EXPORTER SAFETENSORS_DIR

Each bad case must exit with status 2, print "error: <message>" naming the
argument and write no header: a --name or --namespace that is not a C++
identifier (or identifiers joined by ::), a --context-length or --num-heads
below 1, and a --num-heads that does not divide d_out (from the file's
__metadata__ too, and through export_module's render). So must the files and
arguments that gave a traceback, a header that does not compile or wrong data:
a malformed safetensors header (a list, a list __metadata__, an entry that is
a string, a shape that is an int or negative, a dtype that is a list,
data_offsets past the data), an F64 value beyond float with --type float, a
mask of shape [] without --context-length, an out_proj or bias of other shapes
than d_in/d_out give (a short in_proj_bias too), a zero extent, --tensors
names that are no C++ identifiers or give the same one, a --context-length
beyond 2^32 - 1, a fractional __metadata__ num_heads, an empty output path;
and an unexpected exception is one line too. The good cases (a nested
namespace, --name "" with --tensors, F64 values near FLT_MAX, --type double)
must still write a header, and names with a newline or a final backslash
(tensor, file, --prefix) stay inside the header's comments.
Standard-library Python only. Exit status 1 on any failure, listing it.
"""
import contextlib
import importlib.util
import io
import json
import os
import struct
import subprocess
import sys
import tempfile


def write_safetensors(path, tensors, metadata=None, dtype="F32"):
    """A minimal F32 (or F64) safetensors file of {name: (shape, values)}."""
    header, data = {}, b""
    for name, (shape, values) in tensors.items():
        chunk = struct.pack(f"<{len(values)}{'d' if dtype == 'F64' else 'f'}", *values)
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(chunk)]}
        data += chunk
    if metadata is not None:
        header["__metadata__"] = metadata
    write_raw(path, header, data)


def write_raw(path, header, data=b""):
    """A file of the JSON `header` as it is (valid or not) and `data`."""
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def book_mha(d_in, d_out):
    """The book's MultiHeadAttention tensors (no qkv bias, no mask buffer)."""
    weight = ([d_out, d_in], [0.5] * (d_out * d_in))
    return {"W_query.weight": weight, "W_key.weight": weight, "W_value.weight": weight,
            "out_proj.weight": ([d_out, d_out], [0.25] * (d_out * d_out)),
            "out_proj.bias": ([d_out], [0.0] * d_out)}


def file_cases(tmp):
    """(arguments, message) of the files and arguments that gave a traceback, a
    header that does not compile or wrong data."""
    def path(name, tensors=None, metadata=None, dtype="F32", header=None):
        p = os.path.join(tmp, name + ".safetensors")
        if header is None:
            write_safetensors(p, tensors, metadata, dtype)
        else:
            write_raw(p, header, b"\0" * 8)
        return p

    def mha(p, *extra):
        return [p, "--model", "multi_head_attention", "--format", "book", "--num-heads", "2",
                "--context-length", "5"] + list(extra)

    def fused(p):
        return [p, "--model", "fused_multi_head_attention", "--format", "pytorch_multihead",
                "--num-heads", "1", "--context-length", "5"]

    def entry(**kw):
        return {"a": dict({"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, **kw)}

    def malformed(name, header, message):
        p = path(name, header=header)
        return mha(p), f"{p}: {message}"

    def with_(**changes):
        t = book_mha(3, 6)
        t.update(changes)
        return t

    scalar_mask = with_(mask=([], [0.0]))
    huge = {k: (shape, [1e39] * len(v)) for k, (shape, v) in book_mha(3, 6).items()}
    pytorch = {"in_proj_weight": ([6, 2], [0.5] * 12), "in_proj_bias": ([2], [1.0, 2.0]),
               "out_proj.weight": ([2, 2], [1.0] * 4), "out_proj.bias": ([2], [0.0] * 2)}
    empty_pytorch = {"in_proj_weight": ([0, 2], []), "out_proj.weight": ([0, 0], []),
                     "out_proj.bias": ([0], [])}
    named = {"0abc": ([2], [1.0, 2.0]), "int": ([2], [1.0, 2.0]), "a.b": ([2], [1.0, 2.0]),
             "a_b": ([2], [3.0, 4.0]), "t0": ([0], [])}
    named = path("named", named)
    ok = mha(path("ok", book_mha(3, 6)))
    return [
        # a traceback before
        (mha(path("big", huge, dtype="F64")),
         "tensor W_query.weight: value 1e+39 is outside the range of float"),
        ([path("scalar_mask", scalar_mask), "--model", "multi_head_attention", "--format", "book",
          "--num-heads", "2"],
         "tensor mask has shape [], expected [context_length, context_length]"),
        malformed("list", [1, 2], "the header is a JSON list, not an object"),
        malformed("meta_list", dict(entry(), __metadata__=[1]), "__metadata__ is a JSON list"),
        malformed("shape_int", entry(shape=2), "tensor 'a': shape 2 is not a list of "
                  "non-negative integers"),
        malformed("shape_neg", entry(shape=[-1, -2]), "tensor 'a': shape [-1, -2] is not"),
        malformed("dtype_list", entry(dtype=["F32"]), "tensor 'a': dtype ['F32'] is not"),
        malformed("entry_str", {"a": "x"}, "tensor 'a': its entry is a JSON str"),
        malformed("offsets", entry(data_offsets=[0, 800]), "tensor 'a': data_offsets [0, 800] "
                  "are not two integers"),
        # a header that does not compile
        (mha(path("out_w", with_(**{"out_proj.weight": ([3, 3], [0.5] * 9)}))),
         "tensor out_proj.weight has shape [3, 3], expected [d_out, d_out] = [6, 6]"),
        (mha(path("out_b", with_(**{"out_proj.bias": ([5], [0.5] * 5)}))),
         "tensor out_proj.bias has shape [5], expected [d_out] = [6]"),
        (mha(path("q_bias", with_(**{p + ".bias": ([5], [0.5] * 5) for p in
                                     ("W_query", "W_key", "W_value")}))),
         "tensor W_query.bias has shape [5], expected [d_out] = [6]"),
        (mha(path("d_out0", book_mha(3, 0))), "tensor W_query.weight has shape [0, 3]: an "
         "extent is 0"),
        (fused(path("in_proj0", empty_pytorch)), "tensor in_proj_weight has shape [0, 2]: an "
         "extent is 0"),
        ([named, "--tensors", "t0"], "tensor t0 has shape [0]: an extent is 0"),
        ([named, "--tensors", "0abc", "--name", ""], "tensor '0abc' would be the constant "
         "'0abc', which is not a C++ identifier"),
        ([named, "--tensors", "int", "--name", ""], "tensor 'int' would be the constant 'int', "
         "which is not a C++ identifier"),
        ([named, "--tensors", "a.b", "a_b"], "tensors 'a.b' and 'a_b' would both be the "
         "constant 'model_a_b'"),
        (ok[:-1] + [str(2 ** 32)], f"--context-length {2 ** 32} is too large (at most "
         f"{2 ** 32 - 1}"),
        (ok[:-1] + ["1" + "0" * 20], f"--context-length 1{'0' * 20} is too large"),
        (ok + ["--namespace", "a::mha"],
         "--namespace 'a::mha': its inner namespace mha would hide the namespace ::mha"),
        # wrong data
        (fused(path("short_bias", pytorch)), "tensor in_proj_bias has shape [2], expected "
         "[3 * d_out] = [6]"),
        ([path("heads_float", book_mha(3, 6), {"num_heads": 2.7, "context_length": "5"})],
         "the file's __metadata__ num_heads = 2.7 is not an integer"),
        ([path("heads_text", book_mha(3, 6), {"num_heads": "2.7", "context_length": "5"})],
         "the file's __metadata__ num_heads = \"2.7\" is not an integer"),
    ]


def check_good_files(exporter, tmp, failures):
    """Valid exports that gave errors, and names that broke out of comments."""
    big = os.path.join(tmp, "near_max.safetensors")   # rounds to FLT_MAX / is beyond it
    write_safetensors(big, {"a": ([2], [3.4028235e38, -3.4e38]), "b": ([1], [1e39])}, dtype="F64")
    base = os.path.join(tmp, "back\\")                 # a file name ending with a backslash
    write_safetensors(base, {"x\nstatic_assert(false, \"injected\");\\": ([2], [1.0, 2.0])})
    cases = [([big, "--tensors", "a"], "3.40282347e+38f, -3.4e+38f"),
             ([big, "--tensors", "b", "--type", "double"], "1e+39"),
             ([base, "--tensors", "x\nstatic_assert(false, \"injected\");\\"],
              "// x\\x0astatic_assert(false, \"injected\");\\ [2] from back\\x5c\n")]
    for i, (args, expected) in enumerate(cases):
        out = os.path.join(tmp, f"good_file{i}.hpp")
        run = run_exporter(exporter, args, out)
        text = open(out, encoding="utf-8").read() if os.path.exists(out) else ""
        if run.returncode != 0 or expected not in text:
            failures.append(f"{args}: expected a header with {expected!r}, got exit status "
                            f"{run.returncode}, {run.stderr.strip()!r}:\n{text}")
    run = run_exporter(exporter, [big, "--tensors", "a"], "")
    if run.returncode != 2 or "error: the output path is empty" not in run.stderr:
        failures.append(f"output path '': expected 'error: the output path is empty', got "
                        f"{run.returncode}, {run.stderr.strip()!r}")
    return len(cases) + 1


def check_render(module, failures):
    """--prefix and the source name written into comments, and an unexpected
    exception in main: one line, exit status 2."""
    prefix = "p\n#error injected\\"
    tensors = {prefix + k: v for k, v in book_mha(3, 6).items()}
    text = module.render(tensors, None, "multi_head_attention", prefix=prefix, num_heads=2,
                         context_length=5, source="f\nstatic_assert(false);\\")
    lines = text.splitlines()
    if any(line.startswith(("#error", "static_assert(false")) or line.endswith("\\")
           for line in lines) or "prefix 'p\\x0a#error injected\\')." not in lines[1]:
        failures.append(f"render with a newline in the prefix and source:\n{text}")

    def broken(path):
        raise RuntimeError(f"no {path}\nhere")

    module.read_safetensors, saved = broken, module.read_safetensors
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            status = module.main(["w.safetensors", "o.hpp", "--num-heads", "1"])
    except Exception as e:  # pylint: disable=broad-except
        status = repr(e)
    finally:
        module.read_safetensors = saved
    if status != 2 or "error: unexpected RuntimeError: no w.safetensors\\x0ahere" not in \
            err.getvalue():
        failures.append(f"main with an unexpected exception: {status}, {err.getvalue()!r}")
    return 2


def run_exporter(exporter, args, out):
    """Runs the exporter on args[0] (the weights) writing `out`, with args[1:]."""
    return subprocess.run([sys.executable, exporter, args[0], out] + args[1:],
                          capture_output=True, text=True, check=False)


def main():
    exporter, data_dir = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        plain = os.path.join(tmp, "plain.safetensors")      # d_in 3, d_out 6, no metadata
        write_safetensors(plain, book_mha(3, 6))
        recorded = os.path.join(tmp, "recorded.safetensors")  # records num_heads 4
        write_safetensors(recorded, book_mha(3, 6), {"num_heads": "4", "context_length": "5"})
        io_file = os.path.join(data_dir, "book_mha_bf16.io.safetensors")
        base = [plain, "--model", "multi_head_attention", "--format", "book"]
        sized = base + ["--num-heads", "2", "--context-length", "5"]
        names = [("--name", "1model", "is not a C++ identifier"),
                 ("--name", "my-model", "is not a C++ identifier"),
                 ("--name", "class", "is not a C++ identifier"),
                 ("--name", "", "is not a C++ identifier"),
                 ("--namespace", "a.b", "is not a C++ namespace name"),
                 ("--namespace", "a::", "is not a C++ namespace name"),
                 ("--namespace", "::a", "is not a C++ namespace name")]
        bad = [(sized + [flag, value], f"{flag} '{value}' {what}") for flag, value, what in names]
        bad += [
            (base + ["--num-heads", "2", "--context-length", "0"],
             "--context-length 0 must be greater than 0"),
            (base + ["--num-heads", "0", "--context-length", "5"],
             "--num-heads 0 must be greater than 0"),
            (base + ["--num-heads", "4", "--context-length", "5"],
             "num_heads 4 does not divide d_out 6"),
            ([recorded, "--model", "multi_head_attention", "--format", "book"],
             "num_heads 4 does not divide d_out 6"),
            ([plain, "--model", "fused_multi_head_attention", "--format", "book",
              "--num-heads", "5", "--context-length", "5"],
             "num_heads 5 does not divide d_out 6"),
            ([io_file, "--tensors", "input", "--namespace", "io-data"],
             "--namespace 'io-data' is not a C++ namespace name"),
        ]
        bad += file_cases(tmp)
        for i, (args, message) in enumerate(bad):
            out = os.path.join(tmp, f"bad{i}.hpp")
            run = run_exporter(exporter, args, out)
            if run.returncode != 2 or f"error: {message}" not in run.stderr or os.path.exists(out):
                failures.append(f"{args}: expected exit status 2, 'error: {message}' and no "
                                f"header; got {run.returncode}, {run.stderr.strip()!r}, "
                                f"header written: {os.path.exists(out)}")
        good = [
            base + ["--num-heads", "3", "--context-length", "5", "--namespace", "a::b_2",
                    "--name", "_m"],
            [io_file, "--tensors", "input", "output", "--name", "", "--namespace", "io_data"],
        ]
        for i, args in enumerate(good):
            out = os.path.join(tmp, f"good{i}.hpp")
            run = run_exporter(exporter, args, out)
            if run.returncode != 0 or not os.path.exists(out):
                failures.append(f"{args}: expected a header, got exit status {run.returncode}, "
                                f"{run.stderr.strip()!r}")
        # the Python entry point (export_module's render) refuses the same names
        spec = importlib.util.spec_from_file_location("export_weights_header", exporter)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for kw, message in (({"name": "a b"}, "--name 'a b' is not a C++ identifier"),
                            ({"namespace": "x::"}, "--namespace 'x::' is not a C++ namespace")):
            try:
                module.render(book_mha(3, 6), None, "multi_head_attention", num_heads=2,
                              context_length=5, **kw)
                failures.append(f"render({kw}): no error")
            except ValueError as e:
                if message not in str(e):
                    failures.append(f"render({kw}): {e}")
        total = len(bad) + len(good) + 2 + check_good_files(exporter, tmp, failures) \
            + check_render(module, failures)
    for f in failures:
        print("FAIL:", f)
    print(f"{total - len(failures)} of {total} cases passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
