#!/usr/bin/env python3
"""Every C++ code block of the documentation compiles and runs as written.

Reads markdown files, takes every fenced block whose language is C++ (```cpp,
```c++, ```cxx, ```cc, ```hpp) and checks it as its marker says. The marker
is an HTML comment on the nearest non-blank line before the fence (invisible
when the page is rendered):

    (no marker)                      a complete program: compiled with the
                                     project's flags (warnings are errors),
                                     linked and run; it must exit with 0
    <!-- snippet: fragment -->       the body of `int main() { ... }`; its
                                     leading #include/#define lines stay at
                                     file scope, before the main
    <!-- snippet: prelude=NAME -->   test/snippets/NAME.hpp (namespace-scope
                                     context: includes, declarations the text
                                     around the block describes) goes before
                                     the block (after its leading #include and
                                     #define lines); several: prelude=A,B
    <!-- snippet: namespace=NS -->   declarations: the block goes inside
                                     `namespace NS { }` (a synopsis that
                                     redeclares library names, so a wrong
                                     parameter list is an error), with an empty
                                     main
    <!-- snippet: compile-fail error="MESSAGE" [error="MESSAGE" ...] -->
                                     must FAIL to compile (-fsyntax-only), with
                                     exactly one error per error="..." and each
                                     error line containing one of the quoted
                                     messages (any other error, e.g. a name that
                                     does not exist, fails the check); combines
                                     with fragment and prelude
    <!-- snippet: excerpt=PATH[,PATH] -->
                                     library code quoted in the text: not
                                     compiled, but every line (comments dropped,
                                     whitespace ignored) must occur, in order, in
                                     the named files (relative to the source
                                     directory), so the quote cannot go stale
    file=NAME=SOURCE                 (with a program or fragment) the program
                                     runs in a directory that holds NAME: a copy
                                     of SOURCE (a path relative to the source
                                     directory, e.g. a fixture under test/data)
                                     or, for SOURCE = generate:gpt2-small-layer0,
                                     a safetensors file with GPT-2 small's
                                     layer-0 attention tensors as a Hugging Face
                                     checkpoint names them (h.0.attn.c_attn.weight
                                     [768][2304], ...; zero weights: the program
                                     is checked, not the numbers)

A fence without a language is an error too (write ```text for output and
diagrams), so C++ cannot hide in an untagged block; other languages (sh,
cmake, text) are not checked. Nothing is skipped silently: an unmarked block
that is not a complete, runnable program fails the check.

With --pch-dir DIR (g++ only), DIR goes first on the include path: it holds
mha/mha.hpp, a header that includes the library's <mha/mha.hpp>, and
mha/mha.hpp.gch/, that header precompiled with the program flags and with the
compile-fail flags (--build-pch DIR writes them, once for all pages). g++ takes
a precompiled header only for a block whose first #include is <mha/mha.hpp>
and only where its flags and macros match (otherwise it reads the header), so
every block still compiles as written.

Standard library only. Exit code 0 when every block passed.
"""

import argparse
import json
import resource
import os
import re
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import time

CXX_LANGUAGES = {"cpp", "c++", "cxx", "cc", "hpp"}
MARKER = re.compile(r"^\s*<!--\s*snippet:(.*?)-->\s*$")
FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
ERROR_LINE = re.compile(r"(?:^|: )(?:fatal )?error: ")
KEYS = {"fragment", "prelude", "namespace", "compile-fail", "error", "excerpt", "file"}
RUN_TIMEOUT = 300  # seconds per program
STACK_BYTES = 8 << 20  # programs run on the usual default stack, whatever the caller's limit
COMPILE_TIMEOUT = 300
OUTPUT_LINES = 60  # compiler or program output shown per failure


class Snippet:
    def __init__(self, path, line, language, code, marker, marker_line):
        self.path = path              # markdown file
        self.line = line              # line of the first code line (1-based)
        self.language = language
        self.code = code              # list of lines
        self.marker = marker          # attribute text or None
        self.marker_line = marker_line

    def where(self):
        return f"{self.path}:{self.line}"


def parse_markdown(path):
    """Returns (C++ snippets, problems) of one markdown file."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    snippets, problems = [], []
    pending = None  # (marker text, line number) of a marker awaiting its fence
    i = 0
    while i < len(lines):
        text = lines[i]
        m = MARKER.match(text)
        if m:
            if pending:
                problems.append(f"{path}:{pending[1]}: snippet marker not followed by a C++ block")
            pending = (m.group(1).strip(), i + 1)
            i += 1
            continue
        fence = FENCE.match(text)
        if not fence:
            if text.strip() and pending:
                problems.append(f"{path}:{pending[1]}: snippet marker not followed by a C++ block")
                pending = None
            i += 1
            continue
        indent, ticks, info = len(fence.group(1)), fence.group(2), fence.group(3).strip()
        language = info.split()[0].lower() if info else ""
        start = i + 1
        j = start
        close = re.compile(r"^ {0,3}" + re.escape(ticks[0]) + "{" + str(len(ticks)) + r",}\s*$")
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        if j == len(lines):
            problems.append(f"{path}:{i + 1}: code fence is never closed")
            break
        code = [ln[indent:] if ln[:indent].strip() == "" else ln.lstrip() for ln in lines[start:j]]
        if not language:
            problems.append(f"{path}:{i + 1}: code fence without a language: tag it "
                            "(```cpp for C++, ```text for output and diagrams, ```sh, ...)")
        if language in CXX_LANGUAGES:
            marker, marker_line = (pending if pending else (None, None))
            snippets.append(Snippet(path, start + 1, language, code, marker, marker_line))
        elif pending:
            problems.append(f"{path}:{pending[1]}: snippet marker before a ```{language} "
                            "block (markers apply to C++ blocks only)")
        pending = None
        i = j + 1
    if pending:
        problems.append(f"{path}:{pending[1]}: snippet marker not followed by a C++ block")
    return snippets, problems


def parse_marker(text):
    """Marker attributes -> dict (lists for prelude, error, excerpt, file)."""
    attrs = {"prelude": [], "error": [], "excerpt": [], "file": []}
    if text is None:
        return attrs
    try:
        words = shlex.split(text)
    except ValueError as e:
        raise ValueError(f"cannot read the marker: {e}")
    for w in words:
        key, eq, value = w.partition("=")
        if key not in KEYS:
            raise ValueError(f"unknown marker attribute '{key}' (known: {', '.join(sorted(KEYS))})")
        if key in ("fragment", "compile-fail"):
            if eq:
                raise ValueError(f"'{key}' takes no value")
            attrs[key] = True
        elif not value:
            raise ValueError(f"'{key}' needs a value ({key}=...)")
        elif key in ("prelude", "excerpt"):
            attrs[key] += value.split(",")
        elif key in ("error", "file"):
            attrs[key].append(value)
        else:
            attrs[key] = value
    if attrs["error"] and not attrs.get("compile-fail"):
        raise ValueError("error=\"...\" needs compile-fail")
    if attrs.get("compile-fail") and not attrs["error"]:
        raise ValueError("compile-fail needs the expected message(s): error=\"...\"")
    if attrs["excerpt"] and len([k for k in attrs if attrs[k]]) > 1:
        raise ValueError("excerpt=... takes no other attribute")
    if attrs.get("namespace") and (attrs.get("fragment") or attrs.get("compile-fail")):
        raise ValueError("namespace=... does not combine with fragment or compile-fail")
    if attrs["file"] and attrs.get("compile-fail"):
        raise ValueError("file=... is for programs that run, not for compile-fail blocks")
    return attrs


# ----------------------------------------------------------------------------- excerpts

def strip_comments(text):
    """C++ text without // and /* */ comments (string literals kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def squeeze(text):
    return re.sub(r"\s+", "", text)


def check_excerpt(snippet, attrs, source_dir):
    texts = []
    for rel in attrs["excerpt"]:
        p = os.path.join(source_dir, rel)
        if not os.path.isfile(p):
            return f"excerpt source {rel} does not exist"
        with open(p, encoding="utf-8") as f:
            texts.append(squeeze(strip_comments(f.read())))
    haystack = "\x00".join(texts)
    pos = 0
    for k, line in enumerate(strip_comments("\n".join(snippet.code)).split("\n")):
        needle = squeeze(line)
        if not needle:
            continue
        found = haystack.find(needle, pos)
        if found < 0:
            where = "anywhere" if haystack.find(needle) < 0 else "after the previous line"
            return (f"line {snippet.line + k} is not in {', '.join(attrs['excerpt'])} ({where}):"
                    f"\n    {snippet.code[k].strip()}")
        pos = found + len(needle)
    return None


# ----------------------------------------------------------------------------- programs

def is_hoisted(line):
    s = line.strip()
    return s == "" or s.startswith("#") or s.startswith("//")


def translation_unit(snippet, attrs, source_dir):
    """Source text of the program the snippet stands for."""
    code = snippet.code
    md = os.path.abspath(snippet.path).replace("\\", "/")
    parts = [f"// generated by test/snippets/check_snippets.py from {snippet.where()}\n"]
    body_start = 0
    if attrs.get("fragment") or attrs.get("namespace") or attrs["prelude"]:
        while body_start < len(code) and is_hoisted(code[body_start]):
            body_start += 1
        # keep trailing comments/blank lines of the hoisted part with the body
        while body_start > 0 and not code[body_start - 1].strip().startswith("#"):
            body_start -= 1
        if body_start:
            parts.append(f'#line {snippet.line} "{md}"\n')
            parts.append("\n".join(code[:body_start]) + "\n")
    for name in attrs["prelude"]:
        p = os.path.join(source_dir, "test", "snippets", name + ".hpp")
        if not os.path.isfile(p):
            raise ValueError(f"prelude '{name}': {p} does not exist")
        with open(p, encoding="utf-8") as f:
            parts.append(f'#line 1 "{p}"\n' + f.read())
    body = "\n".join(code[body_start:]) + "\n"
    line_directive = f'#line {snippet.line + body_start} "{md}"\n'
    if attrs.get("fragment"):
        parts.append("int main() {\n" + line_directive + body + "}\n")
    elif attrs.get("namespace"):
        parts.append(f"namespace {attrs['namespace']} {{\n" + line_directive + body + "}\n"
                     "int main() {}\n")
    else:
        parts.append(line_directive + body)
    return "".join(parts)


def write_gpt2_small_layer0(path):
    """GPT-2 small's layer-0 attention as a Hugging Face safetensors file names
    it (Conv1D layout: c_attn.weight [768][2304], c_proj.weight [768][768]),
    all zeros. Written with the standard library; metadata {"format": "pt"} as
    in the published checkpoint."""
    e = 768
    tensors = [("h.0.attn.c_attn.weight", [e, 3 * e]), ("h.0.attn.c_attn.bias", [3 * e]),
               ("h.0.attn.c_proj.weight", [e, e]), ("h.0.attn.c_proj.bias", [e])]
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, shape in tensors:
        count = 1
        for d in shape:
            count *= d
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + 4 * count]}
        offset += 4 * count
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        f.truncate(8 + len(text) + offset)


def provide_files(attrs, run_dir, source_dir):
    for spec in attrs["file"]:
        name, eq, source = spec.partition("=")
        if not eq or not name or not source or "/" in name:
            raise ValueError(f"file={spec}: write file=NAME=SOURCE (NAME a plain file name)")
        dest = os.path.join(run_dir, name)
        if source == "generate:gpt2-small-layer0":
            write_gpt2_small_layer0(dest)
        elif source.startswith("generate:"):
            raise ValueError(f"file={spec}: unknown generator (known: generate:gpt2-small-layer0)")
        else:
            src = os.path.join(source_dir, source)
            if not os.path.isfile(src):
                raise ValueError(f"file={spec}: {source} does not exist")
            shutil.copyfile(src, dest)


TIMES = {}  # "compile" / "run" -> seconds of the current block


def default_stack():
    _, hard = resource.getrlimit(resource.RLIMIT_STACK)
    limit = STACK_BYTES if hard == resource.RLIM_INFINITY else min(STACK_BYTES, hard)
    resource.setrlimit(resource.RLIMIT_STACK, (limit, hard))


def run(cmd, cwd, timeout):
    key = "run" if len(cmd) == 1 else "compile"
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, preexec_fn=default_stack if key == "run" else None)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    finally:
        TIMES[key] = TIMES.get(key, 0.0) + time.monotonic() - start
    return p.returncode, p.stdout.decode(errors="replace")


def describe_exit(rc):
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = str(-rc)
        hint = " (a large object on the stack?)" if -rc == signal.SIGSEGV else ""
        return f"killed by signal {name}{hint}"
    return f"exit code {rc}"


def check_program(snippet, attrs, args, work):
    tu = translation_unit(snippet, attrs, args.source_dir)
    src = os.path.join(work, "snippet.cpp")
    with open(src, "w", encoding="utf-8") as f:
        f.write(tu)
    includes = [f"-I{d}" for d in ([args.pch_dir] if args.pch_dir else []) + args.include]
    if attrs.get("compile-fail"):
        cmd = [args.cxx, *args.fail_flag, *includes, "-fsyntax-only", src]
        rc, out = run(cmd, work, COMPILE_TIMEOUT)
        if rc is None:
            return f"compiler {out}", cmd, ""
        if rc == 0:
            return "compiled, but the block is marked compile-fail: it must not", cmd, out
        errors = [ln for ln in out.split("\n") if ERROR_LINE.search(ln)]
        wanted = attrs["error"]
        problems = [f"unexpected error (not one of the quoted messages): {ln}"
                    for ln in errors if not any(w in ln for w in wanted)]
        for w in wanted:
            need = wanted.count(w)
            got = sum(1 for ln in errors if w in ln)
            if got < need:
                problems.append(f"expected error not given ({got} of {need}): {w}")
        if len(errors) != len(wanted):
            problems.append(f"{len(errors)} errors, expected {len(wanted)} (one per error=\"...\")")
        return ("\n".join(problems) or None), cmd, out
    exe = os.path.join(work, "snippet")
    cmd = [args.cxx, *args.flag, *includes, src, "-o", exe, *args.link_flag]
    rc, out = run(cmd, work, COMPILE_TIMEOUT)
    if rc != 0:
        hint = ""
        if not attrs.get("fragment") and not attrs.get("namespace") and \
                not re.search(r"\bint\s+main\s*\(", "\n".join(snippet.code)):
            hint = ("\n(the block has no main(): make it a complete program, or mark it "
                    "<!-- snippet: fragment --> with a prelude=... for its context)")
        return (f"does not build: compiler {out if rc is None else describe_exit(rc)}{hint}",
                cmd, out)
    run_dir = os.path.join(work, "run")
    os.makedirs(run_dir, exist_ok=True)
    provide_files(attrs, run_dir, args.source_dir)
    rc, run_out = run([exe], run_dir, RUN_TIMEOUT)
    if rc != 0:
        return (f"builds, but the program {run_out if rc is None else describe_exit(rc)}",
                [exe], run_out)
    return None, [exe], run_out


def build_pch(args):
    """Writes args.pch_dir (see the module's docstring); returns the exit code."""
    header = next((os.path.join(d, "mha", "mha.hpp") for d in args.include
                   if os.path.isfile(os.path.join(d, "mha", "mha.hpp"))), None)
    if header is None:
        print("FAIL --build-pch: no include directory holds mha/mha.hpp")
        return 1
    shutil.rmtree(args.pch_dir, ignore_errors=True)
    gch_dir = os.path.join(args.pch_dir, "mha", "mha.hpp.gch")
    os.makedirs(gch_dir)
    # (a header of its own: g++ warns of `#pragma once in main file` when it
    # precompiles <mha/mha.hpp> itself)
    wrapper = os.path.join(args.pch_dir, "mha", "mha.hpp")
    with open(wrapper, "w", encoding="utf-8") as f:
        f.write("// generated by test/snippets/check_snippets.py --build-pch\n"
                f'#include "{header}"\n')
    includes = [f"-I{d}" for d in args.include]
    for name, flags in (("program", args.flag), ("fail", args.fail_flag)):
        cmd = [args.cxx, *flags, *includes, "-x", "c++-header", wrapper,
               "-o", os.path.join(gch_dir, name + ".gch")]
        rc, out = run(cmd, args.pch_dir, COMPILE_TIMEOUT)
        if rc != 0:
            print(f"FAIL precompiling <mha/mha.hpp> ({name} flags): compiler "
                  f"{out if rc is None else describe_exit(rc)}")
            print("    $ " + " ".join(shlex.quote(c) for c in cmd))
            print("    " + "\n    ".join(out.rstrip().split("\n")[:OUTPUT_LINES]))
            return 1
        print(f"  ok   <mha/mha.hpp> precompiled with the {name} flags")
    return 0


def check(snippet, args):
    try:
        attrs = parse_marker(snippet.marker)
    except ValueError as e:
        return f"marker at line {snippet.marker_line}: {e}", None, ""
    if attrs["excerpt"]:
        return check_excerpt(snippet, attrs, args.source_dir), None, ""
    stem = re.sub(r"[^A-Za-z0-9]+", "_", os.path.relpath(snippet.path, args.source_dir))
    work = os.path.join(args.work_dir, f"{stem}_{snippet.line}")  # cleared per page in main()
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    try:
        return check_program(snippet, attrs, args, work)
    except ValueError as e:
        return str(e), None, ""


def kind(snippet):
    try:
        a = parse_marker(snippet.marker)
    except ValueError:
        return "?"
    if a["excerpt"]:
        return "excerpt"
    if a.get("compile-fail"):
        return "compile-fail"
    if a.get("namespace"):
        return "declarations"
    return "fragment" if a.get("fragment") else "program"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("markdown", nargs="*", help="markdown files")
    ap.add_argument("--source-dir", required=True, help="repository root")
    ap.add_argument("--work-dir", required=True, help="scratch directory")
    ap.add_argument("--cxx", required=True, help="C++ compiler")
    ap.add_argument("--flag", action="append", default=[],
                    help="flag for building programs (repeat; write --flag=-O2)")
    ap.add_argument("--fail-flag", action="append", default=[],
                    help="flag for compile-fail blocks (repeat)")
    ap.add_argument("--link-flag", action="append", default=[], help="flag after the source")
    ap.add_argument("--include", "-I", action="append", default=[], help="include directory")
    ap.add_argument("--pch-dir", help="precompiled <mha/mha.hpp> (g++), first on the include path")
    ap.add_argument("--build-pch", action="store_true",
                    help="write --pch-dir's precompiled header and exit")
    ap.add_argument("--expect-fail", type=int, metavar="N",
                    help="self-test: succeed only if no block passes and exactly N problems "
                         "are reported")
    args = ap.parse_args()
    args.source_dir = os.path.abspath(args.source_dir)
    args.include = [os.path.abspath(d) for d in args.include]
    args.work_dir = os.path.abspath(args.work_dir)
    os.makedirs(args.work_dir, exist_ok=True)
    if args.pch_dir:
        args.pch_dir = os.path.abspath(args.pch_dir)
    if args.build_pch:
        if not args.pch_dir:
            ap.error("--build-pch needs --pch-dir")
        return build_pch(args)
    if not args.markdown:
        ap.error("no markdown file given")

    failures, total, passed = 0, 0, 0
    for md in args.markdown:
        snippets, problems = parse_markdown(md)
        rel = os.path.relpath(md, args.source_dir)
        stem = re.sub(r"[^A-Za-z0-9]+", "_", rel)
        for old in os.listdir(args.work_dir):  # blocks of earlier versions of the page
            if old.startswith(stem + "_"):
                shutil.rmtree(os.path.join(args.work_dir, old), ignore_errors=True)
        for p in problems:
            print(f"FAIL {p}")
            failures += 1
        print(f"{rel}: {len(snippets)} C++ block(s)")
        for s in snippets:
            total += 1
            s.path = md
            TIMES.clear()
            problem, cmd, out = check(s, args)
            spent = ", ".join(f"{k} {v:.1f} s" for k, v in sorted(TIMES.items()))
            label = f"{rel}:{s.line} ({kind(s)}{'; ' + spent if spent else ''})"
            if problem is None:
                print(f"  ok   {label}")
                passed += 1
                continue
            failures += 1
            print(f"  FAIL {label}: {problem}")
            if cmd:
                print("    $ " + " ".join(shlex.quote(c) for c in cmd))
            if out:
                shown = out.rstrip().split("\n")
                if len(shown) > OUTPUT_LINES:
                    shown = shown[:OUTPUT_LINES] + [f"... ({len(shown) - OUTPUT_LINES} more lines)"]
                print("    " + "\n    ".join(shown))
    print(f"{total} block(s) checked, {failures} problem(s)")
    if args.expect_fail is not None:
        ok = passed == 0 and failures == args.expect_fail
        print(f"self-test: {passed} block(s) passed (expected 0), {failures} problem(s) reported "
              f"(expected {args.expect_fail}): {'ok' if ok else 'FAILED'}")
        return 0 if ok else 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
