#!/usr/bin/env python3
"""Fails when two object files define a weak mha:: function with different code.

Usage: compare_weak_symbols.py [--nm NM] [--objdump OBJDUMP] [--all] A.o B.o

An inline function or a template instantiation is a weak (COMDAT) symbol in
every object that uses it; the linker keeps one copy and every caller in the
program runs that copy. If A.o and B.o were compiled for different instruction
sets and both define the same weak mha:: symbol with different machine code,
the copy the linker keeps runs in the other object's context too: another
vector width or FMA contraction (other rounding, or a kernel that does not
match its caller's data layout), or an instruction the CPU of the other path
lacks (SIGILL). That is the ODR hazard of issue 11, defect 6.

For every weak function symbol (nm type W) whose mangled name is under the
mha namespace (including lambdas and local entities of mha functions) and
that both objects define, the disassembly (objdump -dr) is compared with the
instruction offsets, comments and objdump's <symbol+offset> names of
addresses stripped (the addresses stay) and relocations to local sections
(constant pools) anonymised; relocation targets that are symbols are
compared by name. Exit status 1 if any differ, listing them. Two
byte-identical objects pass without being disassembled.

With --all, every function both objects define (local ones included) is
compared: for two objects built from the same source with the same flags but
one macro (test/CMakeLists.txt: MHA_MAX_INLINE_BYTES changes no code); no
function in common is then a failure too.

One kind of symbol is exempt (listed, never a failure): the implicitly
defined default constructors of the fixed-size modules. They are aggregates
(no constructor can be declared without losing aggregate initialisation, so
the ISA's ABI tag cannot be put on it); the constructor only stores T(0) into
`dropout` (the one default member initialiser), so its copies differ only in
the encoding of that store (SSE or VEX), and it is emitted only without
optimisation. docs/design.md, "ISA namespaces", describes this limit.
"""
import argparse
import filecmp
import re
import subprocess
import sys

MHA_SYMBOL = re.compile(r"^_ZZ?N[rVKRO]*3mha")
HEADER = re.compile(r"^[0-9a-f]+ <(.+)>:$")
INSN = re.compile(r"^\s*[0-9a-f]+:\t(.*)$")
ANNOTATION = re.compile(r"\s*<[^>]*>")
RELOC = re.compile(r"^\s*[0-9a-f]+: (R_\S+)\s+(\S+)$")
EXEMPT = re.compile(r"^mha::(causal_attention|multi_head_attention|multi_head_attention_wrapper|"
                    r"fused_multi_head_attention)<.*>::\1\(\)$")


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def weak_mha_addresses(nm, obj, every_function=False):
    """The weak mha:: functions defined in obj (with every_function: all its
    functions, local ones included), mangled name -> value (its offset in its
    section)."""
    names = {}
    for line in run([nm, "--defined-only", obj]).splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        if every_function and parts[1] in ("T", "t", "W"):
            names[parts[2]] = parts[0]
        elif parts[1] == "W" and MHA_SYMBOL.match(parts[2]):
            names[parts[2]] = parts[0]
    return names


# The complete-object and base-object constructor (C1, C2) and destructor (D1,
# D2) of a class without virtual bases are one function: the compiler emits one
# body with both names at the same address, and objdump heads it with one name.
# (The same address is checked too: the marker is looked for as the first
# C1E/C2E/D1E/D2E of the name, which a class name could imitate.)
STRUCTOR = re.compile(r"([CD])([12])E")


def structor_twin(name):
    m = STRUCTOR.search(name)
    if not m:
        return None
    other = "1" if m.group(2) == "2" else "2"
    return name[:m.start()] + m.group(1) + other + name[m.start() + 2:]


def demangle(nm_path, names):
    if not names:
        return {}
    filt = nm_path[:-2] + "c++filt" if nm_path.endswith("nm") else "c++filt"
    try:
        out = subprocess.run([filt], input="\n".join(names), check=True, capture_output=True,
                             text=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        out = names
    return dict(zip(names, out))


def normalise_reloc(kind, target):
    # section symbols and local labels (constant pools, .LC0) differ between
    # objects even for identical code; symbols keep their names
    if target.startswith("."):
        return f"{kind} <local>"
    return f"{kind} {re.sub(r'[-+]0x[0-9a-f]+$', '', target)}"


def disassembly(objdump, obj, wanted, sections=()):
    """Normalised disassembly of each wanted symbol: a list of lines. With
    sections, only those sections are disassembled (objdump -j)."""
    code = {}
    current = None
    # Without -w: objdump -w prints a relocation on its instruction's line,
    # after the "#" comment of a RIP-relative operand, where it was cut off
    # with the comment (and not anonymised where it was not).
    only = [arg for section in sections for arg in ("-j", section)]
    for line in run([objdump, "-d", "-r", "--no-show-raw-insn", *only, obj]).splitlines():
        m = HEADER.match(line)
        if m:
            current = m.group(1) if m.group(1) in wanted else None
            if current is not None:
                code[current] = []
            continue
        if current is None or not line.strip():
            continue
        r = RELOC.match(line)
        if r:
            code[current].append(normalise_reloc(r.group(1), r.group(2)))
            continue
        i = INSN.match(line)
        if i:
            insn = i.group(1).split("#")[0]
            # objdump names an address by the nearest symbol before it, which
            # for a function in its own section can be an unrelated local
            # label (a constant pool, <.LC215+0x1>) whose number differs
            # between objects; the address itself stays in the comparison
            insn = ANNOTATION.sub("", insn)
            insn = re.sub(r"\s+", " ", insn).strip()
            code[current].append(insn)
    return code


def disassemble_all(objdump, obj, names, address, every_function):
    """disassembly() of each of names in obj. A weak (COMDAT) function has a
    section of its own, .text.<mangled name> (GCC and Clang), and objdump -j
    with those sections only is about 15 times quicker on the -O0 objects than
    the whole object (2 s against 30 s: objdump's time grows with the object's
    symbols, not with the code asked for); what it does not find that way is
    disassembled from the whole object."""
    def add_aliases():
        # An alias that objdump did not head (C2 of C1 ...) has its twin's
        # code when both are at the same address.
        for n in set(names) - set(code):
            twin = structor_twin(n)
            if twin in code and address.get(twin) == address.get(n):
                code[n] = code[twin]

    code = {}
    if not every_function and names:
        code = disassembly(objdump, obj, set(names), [".text." + n for n in names])
        add_aliases()
    rest = set(names) - set(code)
    if rest:
        code.update(disassembly(objdump, obj, rest))
        add_aliases()
    return code


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--objdump", default="objdump")
    ap.add_argument("--all", action="store_true",
                    help="compare every function both define (A.o and B.o built from the same "
                         "source with the same instruction set), not only weak mha:: ones")
    ap.add_argument("a")
    ap.add_argument("b")
    args = ap.parse_args()

    in_a = weak_mha_addresses(args.nm, args.a, args.all)
    in_b = weak_mha_addresses(args.nm, args.b, args.all)
    common = sorted(in_a.keys() & in_b.keys())
    if filecmp.cmp(args.a, args.b, shallow=False):
        # Byte-identical objects hold the same code in every function: the
        # disassembly would only confirm it (30 s for an instrumented -O0 pair).
        what = "functions" if args.all else "weak mha:: functions"
        print(f"{args.a} and {args.b} are byte-identical: {len(common)} {what}, identical code")
        return 1 if args.all and not common else 0
    code_a = disassemble_all(args.objdump, args.a, common, in_a, args.all)
    code_b = disassemble_all(args.objdump, args.b, common, in_b, args.all)
    names = demangle(args.nm, common)
    missing = [s for s in common if s not in code_a or s not in code_b]
    for s in missing:
        print(f"NOT DISASSEMBLED (objdump printed no code for it): {names.get(s, s)}\n    ({s})")
    differ = [s for s in common if code_a.get(s) != code_b.get(s)]
    exempt = [s for s in differ if EXEMPT.match(names.get(s, ""))]
    differ = [s for s in differ if s not in exempt]
    what = "functions" if args.all else "weak mha:: functions"
    print(f"{args.a}: {len(in_a)} {what}")
    print(f"{args.b}: {len(in_b)} {what}")
    print(f"defined in both: {len(common)}, identical code: {len(common) - len(differ) - len(exempt)}, "
          f"different code: {len(differ)} (and {len(exempt)} exempt)")
    for s in exempt:
        print(f"exempt (implicit constructor of an aggregate module): {names.get(s, s)}")
    for s in differ:
        print(f"DIFFERENT CODE: {names.get(s, s)}\n    ({s})")
    return 1 if differ or missing or (args.all and not common) else 0


if __name__ == "__main__":
    sys.exit(main())
