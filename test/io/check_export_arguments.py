#!/usr/bin/env python3
"""Fails when tools/export_weights_header.py accepts arguments that give a header
that does not compile.

Usage: check_export_arguments.py EXPORTER SAFETENSORS_DIR

Each bad case must exit with status 2, print "error: <message>" naming the
argument and write no header: a --name or --namespace that is not a C++
identifier (or identifiers joined by ::), a --context-length or --num-heads
below 1, and a --num-heads that does not divide d_out (from the file's
__metadata__ too, and through export_module's render). The good cases
(a nested namespace, --name "" with --tensors) must still write a header.
Standard-library Python only. Exit status 1 on any failure, listing it.
"""
import importlib.util
import json
import os
import struct
import subprocess
import sys
import tempfile


def write_safetensors(path, tensors, metadata=None):
    """A minimal F32 safetensors file of {name: (shape, values)}."""
    header, data = {}, b""
    for name, (shape, values) in tensors.items():
        chunk = struct.pack(f"<{len(values)}f", *values)
        header[name] = {"dtype": "F32", "shape": shape,
                        "data_offsets": [len(data), len(data) + len(chunk)]}
        data += chunk
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def book_mha(d_in, d_out):
    """The book's MultiHeadAttention tensors (no qkv bias, no mask buffer)."""
    weight = ([d_out, d_in], [0.5] * (d_out * d_in))
    return {"W_query.weight": weight, "W_key.weight": weight, "W_value.weight": weight,
            "out_proj.weight": ([d_out, d_out], [0.25] * (d_out * d_out)),
            "out_proj.bias": ([d_out], [0.0] * d_out)}


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
    for f in failures:
        print("FAIL:", f)
    print(f"{len(bad) + len(good) + 2 - len(failures)} of {len(bad) + len(good) + 2} cases passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
