#!/usr/bin/env python3
"""Checks the frame bound of the stack limit against g++'s frames.

Usage: check_frames.py [--emulator=COMMAND] BOUNDS_PROGRAM COMPILER SOURCE WORK_DIR -- FLAGS... [-- FLAGS...]

COMMAND (words separated by spaces, e.g. "qemu-aarch64 -L /usr/aarch64-linux-gnu")
runs BOUNDS_PROGRAM of a cross build; empty or absent: run it directly.

BOUNDS_PROGRAM (frames.cpp built) prints "<function> <bound>" lines. For each
flag set, SOURCE is compiled with -fcallgraph-info=su; the deepest call chain
below each function (the sum of the stack use of the functions on it, from
the .ci call graph; unbounded dynamic stack use anywhere fails) must not exceed
its bound. Exit status 1 otherwise.
"""
import functools
import pathlib
import re
import shlex
import subprocess
import sys


def chains(ci_text):
    nodes, edges = {}, {}
    for m in re.finditer(r'node: \{ title: "([^"]*)" label: "([^"]*)"', ci_text):
        title, label = m.groups()
        su = re.search(r"\\n(\d+) bytes \(([a-z,]+)\)", label)
        nodes[title] = (int(su.group(1)) if su else 0, su.group(2) if su else "static",
                        label.split("\\n")[0])
    for m in re.finditer(r'edge: \{ sourcename: "([^"]*)" targetname: "([^"]*)"', ci_text):
        edges.setdefault(m.group(1), []).append(m.group(2))

    @functools.lru_cache(None)
    def depth(title):
        own = nodes.get(title, (0, "static", ""))[0]
        return own + max([depth(t) for t in edges.get(title, []) if t != title] or [0])

    return nodes, depth


def main():
    args = sys.argv[1:]
    emulator = []
    if args and args[0].startswith("--emulator="):
        emulator = shlex.split(args[0][len("--emulator="):])
        args = args[1:]
    program, compiler, source, work = args[:4]
    flag_sets, current = [], None
    for a in args[4:]:
        if a == "--":
            current = []
            flag_sets.append(current)
        else:
            current.append(a)
    bounds = {}
    for line in subprocess.run([*emulator, program], check=True, capture_output=True,
                               text=True).stdout.splitlines():
        name, value = line.split()
        bounds[name] = int(value)
    bad = 0
    for i, flags in enumerate(flag_sets):
        obj = pathlib.Path(work) / f"frames_{i}.o"
        subprocess.run([compiler, *flags, "-fcallgraph-info=su", "-c", source, "-o", str(obj)],
                       check=True)
        nodes, depth = chains(obj.with_suffix(".ci").read_text())
        for name, bound in bounds.items():
            titles = [t for t, n in nodes.items() if n[2].split("(")[0].endswith(name)]
            if not titles:
                print(f"{' '.join(flags)}: {name} not in the call graph")
                bad += 1
                continue
            for t in titles:
                dynamic = [n for n in nodes.values() if n[1] not in ("static", "dynamic,bounded")]
                used = depth(t)
                ok = used <= bound and not dynamic
                bad += not ok
                print(f"{' '.join(flags)}: {name}: deepest chain {used} bytes, bound {bound}"
                      f"{'' if ok else '  <-- over' if not dynamic else '  <-- dynamic stack use'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
