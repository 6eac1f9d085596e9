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
every block still compiles as written. A merged program (below) starts with
#include <mha/mha.hpp> when one of its blocks includes it, so it takes the
precompiled header too.

One program per page. The runnable blocks of a page (programs and fragments)
are compiled together where that cannot change what they mean: one source,
one compile and link, one executable, so the library templates the blocks
share are instantiated once. The executable then runs once per block, with
the block's line as its argument, in the block's own directory with the
block's files, on the same 8 MiB stack, timeout and exit-code check as a
block built alone. In the merged source every block's leading #include lines
(and its preludes) stand at file scope, then each block in
`namespace mha_snippet_<line> { }` behind a #line directive naming the
markdown file and line, so a diagnostic points into the page as for a block
built alone: a fragment is the body (in braces of its own) of an `int main()` in that namespace, a
program's main stays as written in it (neither is the program's main, so
they do not clash; a `return 0;` follows the fragment and is inserted before
the program's closing brace, on the same line, as only the global main returns
0 by itself; after a return it is not reached). A function named main is the
one GCC optimises as run once (less inlining), so the block's code is
optimised as when built alone: renamed, docs/parameters.md's first block gave
a -Wformat-overflow warning (an error) merged that it does not give alone. The
generated global main runs the block whose line argv[1] names.

The rule (merge_plan() and merge_groups()): a block is merged only if
  - it is a program or a fragment (compile-fail, excerpt and namespace=
    blocks are checked as above);
  - its only preprocessor lines are its leading #include lines, each
    `#include <H>` with H a standard header (a name without extension) or
    mha/...: no #define (configuration before the library's headers), #if,
    #pragma, quoted or other #include; a prelude only if it holds nothing but
    such #include lines and comments (a prelude that declares something, e.g.
    gpt2_layer0_arrays, keeps its block alone);
  - it has no template<> (an explicit specialization), namespace definition
    (named or unnamed: `namespace mha { }` reopened inside another namespace
    would declare something else), operator new/delete, extern (extern "C",
    extern template), __NAME__ identifier (__func__, __FILE__, ...),
    source_location or typeid (names that change with the namespace), or raw
    string literal (the scanner does not read them);
  - a fragment does not name main; a program names main once, as
    `int main()` (argc/argv would be the merged program's), and has at
    namespace scope only function definitions, class/struct/union/enum
    definitions (no inline static data member unless constexpr), using,
    typedef, static_assert and constexpr declarations:
    no variable whose initialisation would run at start-up in every block's
    run, nothing that must be at global scope;
  - its #include lines, with its preludes', read exactly the files another
    such block's read (the compiler's -M list, the program flags, without
    --pch-dir; not asked when all of a page's such blocks name the same
    headers). The page's blocks with the same list form a group, compiled
    as one program if it has two or more; so no block is compiled with a
    header its own compile would not read (another block's #include cannot
    hide a missing one), and the order of the #include lines in the merged
    source changes nothing.
Every other block is checked alone, as above. In its own namespace a block's
names cannot clash with another's (no ODR or redefinition error), shadow them
(-Wshadow) or be found by them, and a warning about its own code (an unused
variable or static function) is given merged as alone. If the merged program
does not build (an error, a warning, which -Werror makes an error, a timeout)
every block of the group is checked alone, so the block at fault is reported
with the compiler output of its own compile; a block that builds alone never
fails because it was merged. If a block's run fails in the merged program, the
block is checked alone and that result is reported. Left open: a warning
that depends on GCC's optimiser (-Wmaybe-uninitialized, -Wformat-overflow at
-O1) could still be given for a block alone and not merged, or the other way,
where inlining decisions differ (a library function the blocks share is called
from several of them merged, from one alone), and undefined behaviour could
show in one build and not the other; --no-merge checks every block alone.

Output: one line per block (ok or FAIL, its kind, compile and run seconds);
a merged group has one line with its blocks and its compile time, and its
blocks say "merged" with their run time only.

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


def run(cmd, cwd, timeout, key=None):
    key = key or ("run" if len(cmd) == 1 else "compile")
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
    return run_program([exe], attrs, args, work)


def run_program(cmd, attrs, args, work):
    """Runs cmd (a block's program) in work/run, which holds the block's files."""
    run_dir = os.path.join(work, "run")
    os.makedirs(run_dir, exist_ok=True)
    provide_files(attrs, run_dir, args.source_dir)
    rc, run_out = run(cmd, run_dir, RUN_TIMEOUT, "run")
    if rc != 0:
        return (f"builds, but the program {run_out if rc is None else describe_exit(rc)}",
                cmd, run_out)
    return None, cmd, run_out


# ----------------------------------------------------------------------------- merging

MERGE_PREFIX = "mha_snippet_"
ALLOWED_INCLUDE = re.compile(r"^\s*#\s*include\s*<((?:mha/[A-Za-z0-9_./-]+)|[a-z_0-9]+)>\s*(//.*)?$")
# What makes a block stay alone (the module's docstring, "One program per page").
NOT_MERGED = [
    (re.compile(r"\btemplate\s*<\s*>"), "an explicit specialization (template<>)"),
    (re.compile(r"\bnamespace\s+\w+\s*(?:::\s*\w+\s*)*\{"), "a namespace definition"),
    (re.compile(r"\bnamespace\s*\{"), "an unnamed namespace"),
    (re.compile(r"\boperator\s+(?:new|delete)\b"), "an operator new/delete"),
    (re.compile(r"\bextern\b"), "an extern declaration"),
    (re.compile(r"\b__\w*__\b"), "a __name__ (predefined macro or extension)"),
    (re.compile(r"\b(?:source_location|typeid)\b"), "source_location/typeid (names would change)"),
    (re.compile(r'R"'), "a raw string literal"),
]
FUNCTION_HEAD = re.compile(
    r"\)\s*(?:const\s*|noexcept\s*|override\s*|final\s*|&&?\s*|->[^{;=]*)*$")
TYPE_HEAD = re.compile(r"^(?:template\s*<[^{;]*>\s*)?(?:struct|class|union|enum(?:\s+(?:class|struct))?)"
                       r"\s+\w+\s*(?:<[^{;]*>\s*)?(?:final\s*)?(?::(?!:)[^{;]*)?$")
ALLOWED_DECLARATION = re.compile(
    r"^(?:using|typedef|static_assert|(?:template\s*<[^{;]*>\s*)?(?:(?:inline|static)\s+)*constexpr)\b")
# (a run of declaration specifiers, in any order: static and inline together make an
# inline static data member, initialised at start-up unless constexpr)
STATIC_INLINE = re.compile(
    r"\b((?:(?:static|inline|const|constexpr|constinit|volatile|thread_local)\s+)+)([^;{]*)")
MAIN_HEAD = re.compile(r"^int\s+main\s*\(\s*(?:void\s*)?\)$")


def blank_comments_and_literals(text):
    """text with comments and the contents of string/character literals turned
    into spaces (newlines kept), so positions stay those of text."""
    out, i, n = list(text), 0, len(text)
    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "
    while i < n:
        c = text[i]
        if c == '"' or (c == "'" and not (i and (text[i - 1].isalnum()))):  # 1'000 is a digit separator
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, min(j, n))
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        else:
            i += 1
    return "".join(out)


def top_level_chunks(text):
    """(start, end) of the namespace-scope declarations of text (blanked): each
    ends at a ';' at brace depth 0 or at a '}' back to depth 0 (with the ';'
    right after it, if any). None if the braces do not balance."""
    chunks, depth, start, i, n = [], 0, 0, 0, len(text)
    while i < n:
        c = text[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                return None
            if depth == 0:
                j = i + 1
                while j < n and text[j] in " \t\n":
                    j += 1
                end = j + 1 if j < n and text[j] == ";" else i + 1
                chunks.append((start, end))
                start = i = end
                continue
        elif c == ";" and depth == 0:
            chunks.append((start, i + 1))
            start = i + 1
        i += 1
    if depth != 0 or text[start:].strip():
        return None
    return [(a, b) for a, b in chunks if text[a:b].strip()]


class Mergeable:
    """How a block goes into a page's merged program (see plan_merge)."""
    def __init__(self, snippet, attrs, hoisted, includes, body, body_line, main_close):
        self.snippet, self.attrs = snippet, attrs
        self.hoisted = hoisted        # leading #include/comment lines (text)
        self.includes = includes      # header names (block's, then its preludes'), in order
        self.preludes = []            # (path, text) of include-only preludes
        self.body = body              # text after the hoisted lines
        self.body_line = body_line    # markdown line of the body's first line
        self.main_close = main_close  # program: offset in body of main's closing '}'


def merge_plan(snippet, attrs, source_dir):
    """A Mergeable for a runnable block that can share a page's program, or the
    reason it is compiled alone (a string)."""
    if attrs["excerpt"] or attrs.get("compile-fail") or attrs.get("namespace"):
        return "not a runnable program"
    code = snippet.code
    body_start = 0
    while body_start < len(code) and is_hoisted(code[body_start]):
        body_start += 1
    while body_start > 0 and not code[body_start - 1].strip().startswith("#"):
        body_start -= 1
    includes = []
    for ln in code[:body_start]:
        s = ln.strip()
        if s.startswith("#"):
            m = ALLOWED_INCLUDE.match(ln)
            if not m:
                return f"a leading line that is not #include <standard or mha/ header>: {s}"
            includes.append(m.group(1))
    body = "\n".join(code[body_start:]) + "\n"
    blanked = blank_comments_and_literals(body)
    if re.search(r"^\s*#", blanked, re.M):
        return "a preprocessor line after its first declaration or statement"
    for pattern, why in NOT_MERGED:
        if pattern.search(blanked):
            return f"it has {why}"
    preludes = []
    for name in attrs["prelude"]:
        p = os.path.join(source_dir, "test", "snippets", name + ".hpp")
        if not os.path.isfile(p):
            return f"prelude '{name}' does not exist"
        with open(p, encoding="utf-8") as f:
            text = f.read()
        for ln in blank_comments_and_literals(text).split("\n"):
            if not ln.strip():
                continue
            m = ALLOWED_INCLUDE.match(ln)
            if not m:
                return f"prelude '{name}' declares more than #include <...> lines"
            includes.append(m.group(1))
        preludes.append((p, text))
    main_close = None
    mains = len(re.findall(r"\bmain\b", blanked))
    if attrs.get("fragment"):
        if mains:
            return "a fragment that names main"
    else:
        chunks = top_level_chunks(blanked)
        if chunks is None:
            return "unbalanced braces"
        if mains != 1:
            return "not exactly one `int main()` (without argc/argv)"
        main_seen = False
        for a, b in chunks:
            text = blanked[a:b].strip()
            head = text.split("{", 1)[0].strip()
            if "{" in text and text.endswith("}") and MAIN_HEAD.match(re.sub(r"\s+", " ", head)):
                main_seen = True
                main_close = blanked.rindex("}", a, b)
            elif "{" in text and text.endswith("}") and FUNCTION_HEAD.search(head) \
                    and "=" not in head.split("(", 1)[0]:
                pass  # a function definition
            elif "{" in text and text.endswith("};") and TYPE_HEAD.match(head):
                # a class/struct/union/enum definition, without an inline static data
                # member that is not constexpr (initialised at start-up)
                for member in STATIC_INLINE.finditer(text):
                    words = member.group(1).split()
                    if "static" in words and "inline" in words and "constexpr" not in words:
                        return "a class with an inline static data member that is not constexpr"
            elif ALLOWED_DECLARATION.match(text):
                pass
            else:
                return ("a namespace-scope declaration other than functions, types, using, "
                        "static_assert and constexpr (e.g. a variable initialised at start-up): "
                        + re.sub(r"\s+", " ", text)[:60])
        if not main_seen:
            return "no `int main()` at namespace scope"
    m = Mergeable(snippet, attrs, "\n".join(code[:body_start]), includes, body,
                  snippet.line + body_start, main_close)
    m.preludes = preludes
    return m


HEADER_SETS = {}  # tuple of header names -> frozenset of the files they read, or None


def header_set(includes, args, work):
    """Every file the #include lines pull in (the compiler's -M list with the
    program flags, without --pch-dir: its mha/mha.hpp reads the same files), or
    None if they do not preprocess."""
    key = tuple(sorted(set(includes)))
    if key not in HEADER_SETS:
        src = os.path.join(work, "headers.cpp")
        with open(src, "w", encoding="utf-8") as f:
            f.write("".join(f"#include <{h}>\n" for h in key))
        cmd = [args.cxx, *args.flag, *[f"-I{d}" for d in args.include], "-M", src]
        rc, out = run(cmd, work, COMPILE_TIMEOUT, "scan")
        if rc != 0:
            HEADER_SETS[key] = None
        else:
            files = out.replace("\\\n", " ").split(":", 1)[-1].split()
            HEADER_SETS[key] = frozenset(os.path.realpath(p) for p in files if os.path.isfile(p)
                                         and os.path.realpath(p) != os.path.realpath(src))
    return HEADER_SETS[key]


def merged_unit(members, md, src):
    """Source text of the program of a page's merged blocks: their #include
    lines (and include-only preludes) at file scope, <mha/mha.hpp> first if any
    block includes it (so g++ can take the precompiled header); each block in
    namespace mha_snippet_<line> with its own main; a global main that runs
    the block whose line is argv[1]."""
    md = os.path.abspath(md).replace("\\", "/")
    lines = [f"// generated by test/snippets/check_snippets.py: the blocks at lines "
             f"{', '.join(str(m.snippet.line) for m in members)} of {md}, merged\n"]
    if any(h == "mha/mha.hpp" for m in members for h in m.includes):
        lines.append("#include <mha/mha.hpp>\n")
    for m in members:
        if m.hoisted.strip():
            lines.append(f'#line {m.snippet.line} "{md}"\n{m.hoisted}\n')
        for p, text in m.preludes:
            lines.append(f'#line 1 "{p}"\n{text}' + ("" if text.endswith("\n") else "\n"))
    for m in members:
        ns = f"{MERGE_PREFIX}{m.snippet.line}"
        at = f'#line {m.body_line} "{md}"\n'
        # (a main outside the global namespace returns nothing by itself: return 0, which
        # is not reached after a return)
        if m.attrs.get("fragment"):
            # (the body in braces of its own, so that a statement it leaves open, a
            # label or an `else` at its end, stays an error, as alone)
            lines.append(f"namespace {ns} {{\nint main() {{\n{{\n{at}{m.body}}}\nreturn 0; }}\n}}\n")
        else:
            body = m.body[:m.main_close] + "return 0; " + m.body[m.main_close:]
            lines.append(f"namespace {ns} {{\n{at}{body}}}\n")
    text = "".join(lines)
    driver = [f'#line {text.count(chr(10)) + 2} "{src}"',
              "namespace mha_snippet_driver {",
              "static bool same(const char* a, const char* b) {",
              "  while (*a != 0 && *a == *b) {",
              "    ++a;",
              "    ++b;",
              "  }",
              "  return *a == *b;",
              "}",
              "}  // namespace mha_snippet_driver",
              "int main(int argc, char** argv) {",
              "  if (argc != 2) return 125;"]
    for m in members:
        line = m.snippet.line
        driver.append(f'  if (mha_snippet_driver::same(argv[1], "{line}")) '
                      f"return {MERGE_PREFIX}{line}::main();")
    driver += ["  return 125;", "}", ""]
    return text + "\n".join(driver)


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


def block_work(snippet, args, suffix=""):
    """A fresh scratch directory for a block (cleared per page in main())."""
    stem = re.sub(r"[^A-Za-z0-9]+", "_", os.path.relpath(snippet.path, args.source_dir))
    work = os.path.join(args.work_dir, f"{stem}_{snippet.line}{suffix}")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    return work


def merge_groups(snippets, args):
    """The page's groups of blocks compiled as one program (lists of
    Mergeable, two or more each): runnable blocks merge_plan accepts whose
    #include lines read the same set of files (header_set)."""
    candidates = []
    for s in snippets:
        try:
            plan = merge_plan(s, parse_marker(s.marker), args.source_dir)
        except ValueError:
            continue
        if isinstance(plan, Mergeable):
            candidates.append(plan)
    if len(candidates) < 2:
        return []
    if len({tuple(sorted(set(m.includes))) for m in candidates}) == 1:
        return [candidates]  # the same headers: the same files (no need to ask the compiler)
    work = block_work(candidates[0].snippet, args, "_headers")
    groups = {}
    TIMES.clear()
    for m in candidates:
        files = header_set(m.includes, args, work)
        if files is not None:
            groups.setdefault(files, []).append(m)
    print(f"  (#include lines of {len(candidates)} mergeable block(s) scanned in "
          f"{TIMES.get('scan', 0.0):.1f} s: {len(groups)} file list(s))")
    return [g for g in groups.values() if len(g) > 1]


class Group:
    def __init__(self, members):
        self.members = members
        self.exe = None       # the merged program, once it built
        self.built = False    # compile attempted


def build_group(group, md, rel, args):
    """Compiles and links a group's blocks as one program; prints one line."""
    group.built = True
    first = group.members[0].snippet
    work = block_work(first, args, "_merged")
    src = os.path.join(work, "merged.cpp")
    with open(src, "w", encoding="utf-8") as f:
        f.write(merged_unit(group.members, md, src))
    exe = os.path.join(work, "merged")
    includes = [f"-I{d}" for d in ([args.pch_dir] if args.pch_dir else []) + args.include]
    cmd = [args.cxx, *args.flag, *includes, src, "-o", exe, *args.link_flag]
    TIMES.clear()
    rc, _ = run(cmd, work, COMPILE_TIMEOUT, "compile")
    lines = ", ".join(str(m.snippet.line) for m in group.members)
    spent = f"{TIMES['compile']:.1f} s"
    if rc == 0:
        group.exe = exe
        print(f"  merged {rel}:{lines} ({len(group.members)} blocks, one program; compile {spent})")
    else:
        print(f"  merged {rel}:{lines} ({len(group.members)} blocks): the merged compile failed "
              f"({spent}): each block is compiled alone")


def check_merged(snippet, group, args):
    """(problem, cmd, output, note) of a block of a group that built: its run
    in its own directory; if that fails, the block is checked alone (built and
    run as without merging), which gives the result."""
    attrs = parse_marker(snippet.marker)
    work = block_work(snippet, args)
    try:
        problem, cmd, out = run_program([group.exe, str(snippet.line)], attrs, args, work)
    except ValueError as e:
        return str(e), None, "", None
    if problem is None:
        return None, cmd, out, "merged"
    merged_problem = problem
    TIMES.clear()
    problem, cmd, out = check(snippet, args)
    note = "merged run failed, checked alone"
    if problem is None:
        note += f" (merged: {merged_problem.split(chr(10))[0]})"
    return problem, cmd, out, note


def check(snippet, args):
    try:
        attrs = parse_marker(snippet.marker)
    except ValueError as e:
        return f"marker at line {snippet.marker_line}: {e}", None, ""
    if attrs["excerpt"]:
        return check_excerpt(snippet, attrs, args.source_dir), None, ""
    work = block_work(snippet, args)
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
    ap.add_argument("--no-merge", action="store_true",
                    help="compile every block alone (no merged programs)")
    ap.add_argument("--expect-fail", type=int, metavar="N",
                    help="self-test: succeed only if no block passes and exactly N problems "
                         "are reported")
    ap.add_argument("--expect-pass", type=int, metavar="M", default=0,
                    help="self-test, with --expect-fail: exactly M blocks pass instead of none, "
                         "at least one of them in a merged program, and the blocks that fail are "
                         "exactly those whose code holds the comment `selftest: must fail`")
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

    failures, total, passed, failed, snippets_checked, merged_ok = 0, 0, 0, [], [], 0
    for md in args.markdown:
        snippets, problems = parse_markdown(md)
        snippets_checked += snippets
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
            s.path = md
        groups = [] if args.no_merge else [Group(g) for g in merge_groups(snippets, args)]
        group_of = {id(m.snippet): g for g in groups for m in g.members}
        for s in snippets:
            total += 1
            group, note = group_of.get(id(s)), None
            if group and not group.built:
                build_group(group, md, rel, args)
            TIMES.clear()
            if group and group.exe:
                problem, cmd, out, note = check_merged(s, group, args)
            else:
                problem, cmd, out = check(s, args)
            spent = ", ".join(f"{k} {v:.1f} s" for k, v in sorted(TIMES.items()))
            label = f"{rel}:{s.line} ({kind(s)}{', ' + note if note else ''}" \
                    f"{'; ' + spent if spent else ''})"
            if problem is None:
                print(f"  ok   {label}")
                passed += 1
                merged_ok += note == "merged"
                continue
            failures += 1
            failed.append(s)
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
        ok = passed == args.expect_pass and failures == args.expect_fail
        if args.expect_pass:
            if not merged_ok:
                ok = False
                print("self-test: no block passed in a merged program")
            for s in snippets_checked:
                tagged = any("selftest: must fail" in ln for ln in s.code)
                if tagged != (s in failed):
                    ok = False
                    print(f"self-test: {s.where()} {'passed' if tagged else 'failed'}, but its "
                          f"code {'holds' if tagged else 'does not hold'} `selftest: must fail`")
        print(f"self-test: {passed} block(s) passed (expected {args.expect_pass}), {failures} "
              f"problem(s) reported (expected {args.expect_fail}): {'ok' if ok else 'FAILED'}")
        return 0 if ok else 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
