#!/usr/bin/env python3
"""Fails when MHA_MAX_INLINE_BYTES can give an entity a value.

Usage: check_inline_limit.py INCLUDE_DIR

MHA_MAX_INLINE_BYTES (mha/config.hpp) may differ between translation units:
it must only decide which types a unit may use, never a value that units
share. An inline variable initialised from it (the library's former
`detail::max_inline_bytes`) has one definition per value, an ODR violation
that no tool reports. So, in the code of every header under INCLUDE_DIR
(comments and string literals removed):

 * MHA_MAX_INLINE_BYTES is read only by detail/macros.hpp, which turns it
   into the internal MHA_DETAIL_MAX_INLINE_BYTES();
 * every MHA_DETAIL_MAX_INLINE_BYTES() elsewhere is a template argument of
   detail::within_inline_limit (static_asserts and the `if constexpr` behind
   them): each limit names its own specialisation.

Exit status 1 on any other use, listing file and line.
"""
import pathlib
import re
import sys

from check_includes import code_of

USER_MACRO = re.compile(r"\bMHA_MAX_INLINE_BYTES\b")
LIMIT = re.compile(r"\bMHA_DETAIL_MAX_INLINE_BYTES\(\)")
CHECK = re.compile(r"\bwithin_inline_limit\s*<")
READER = "mha/detail/macros.hpp"


def main():
    root = pathlib.Path(sys.argv[1])
    bad = []
    uses = 0
    for path in sorted(root.rglob("*.hpp")):
        name = path.relative_to(root).as_posix()
        code = code_of(path.read_text())
        line = lambda pos: code.count("\n", 0, pos) + 1
        if name == READER:
            continue
        for m in USER_MACRO.finditer(code):
            bad.append(f"{name}:{line(m.start())}: reads MHA_MAX_INLINE_BYTES (only {READER} may)")
        for m in LIMIT.finditer(code):
            uses += 1
            before = code[:m.start()]
            check = None
            for c in CHECK.finditer(before):
                check = c
            # the nearest within_inline_limit< must still be open: no end of
            # statement or block between it and the limit
            if check is None or re.search(r"[;{}]", before[check.end():]):
                bad.append(f"{name}:{line(m.start())}: MHA_DETAIL_MAX_INLINE_BYTES() outside "
                           "a within_inline_limit<...> template argument")
    for b in bad:
        print(b)
    print(f"{uses} uses of MHA_DETAIL_MAX_INLINE_BYTES() checked, {len(bad)} problems")
    return 1 if bad or uses == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
