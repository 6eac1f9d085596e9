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
   them) or of one of LIMIT_PREDICATES, the rules of the forwards that
   mha::can_forward_v reads too: each limit names its own specialisation;
 * those predicates take the limit as a template parameter `Limit` and pass
   it on only as a template argument of within_inline_limit or of one
   another (every `Limit` outside detail/api/contracts.hpp, where
   within_inline_limit is defined, other than its declaration
   `std::size_t Limit`, is such an argument), so it still reaches only
   within_inline_limit.

Exit status 1 on any other use, listing file and line.
"""
import pathlib
import re
import sys

from check_includes import code_of

USER_MACRO = re.compile(r"\bMHA_MAX_INLINE_BYTES\b")
LIMIT = re.compile(r"\bMHA_DETAIL_MAX_INLINE_BYTES\(\)")
LIMIT_PREDICATES = ("within_inline_limit", "fixed_type_ok", "fixed_type_ok_", "tensor_type_ok",
                    "output_argument_ok", "input_ok", "inputs_ok", "output_ok", "workspace_ok",
                    "stack_forward_ok", "forward_ok", "linear_input_ok", "linear_forward_ok")
CHECK = re.compile(r"\b(?:" + "|".join(LIMIT_PREDICATES) + r")\s*<")
PARAM = re.compile(r"\bLimit\b")
PARAM_DECL = re.compile(r"std::size_t\s+$")
READER = "mha/detail/macros.hpp"
DEFINER = "mha/detail/api/contracts.hpp"


def inside_check(before):
    """The nearest check< before this point is still open: no end of
    statement or block between it and here."""
    check = None
    for c in CHECK.finditer(before):
        check = c
    return check is not None and not re.search(r"[;{}]", before[check.end():])


def main():
    root = pathlib.Path(sys.argv[1])
    bad = []
    uses = 0
    # (the class-body fragments, *.inc, too: forward_overloads.inc holds the forwards' checks)
    for path in sorted([*root.rglob("*.hpp"), *root.rglob("*.inc")]):
        name = path.relative_to(root).as_posix()
        code = code_of(path.read_text())
        line = lambda pos: code.count("\n", 0, pos) + 1
        if name == READER:
            continue
        for m in USER_MACRO.finditer(code):
            bad.append(f"{name}:{line(m.start())}: reads MHA_MAX_INLINE_BYTES (only {READER} may)")
        for m in LIMIT.finditer(code):
            uses += 1
            if not inside_check(code[:m.start()]):
                bad.append(f"{name}:{line(m.start())}: MHA_DETAIL_MAX_INLINE_BYTES() outside "
                           "a within_inline_limit<...> template argument (or one of "
                           "LIMIT_PREDICATES)")
        if name == DEFINER:
            continue
        for m in PARAM.finditer(code):
            before = code[:m.start()]
            if not PARAM_DECL.search(before) and not inside_check(before):
                bad.append(f"{name}:{line(m.start())}: the Limit parameter outside a template "
                           "argument of within_inline_limit or of one of LIMIT_PREDICATES")
    for b in bad:
        print(b)
    print(f"{uses} uses of MHA_DETAIL_MAX_INLINE_BYTES() checked, {len(bad)} problems")
    return 1 if bad or uses == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
