#!/usr/bin/env python3
"""Fails when a header uses a standard-library name without including its header.

Usage: check_includes.py INCLUDE_DIR

A header that compiles on its own may still rely on a standard header that
another standard header happens to include (libstdc++'s <vector> brings
<utility>'s std::move, for one); another standard library, or the next
version of this one, then breaks it. For every header under INCLUDE_DIR,
each std:: name of the table below that the code uses (comments and string
literals removed) must come from a standard header the file #includes itself.
Names not in the table are not checked; add a row when the library starts
using a new one. Exit status 1 on any miss, listing file, name and header.
"""
import pathlib
import re
import sys

# std:: name -> the standard headers that declare it (any one suffices)
PROVIDERS = {
    "size_t": ["cstddef"], "nullptr_t": ["cstddef"], "ptrdiff_t": ["cstddef"], "byte": ["cstddef"],
    "int8_t": ["cstdint"], "int16_t": ["cstdint"], "int32_t": ["cstdint"], "int64_t": ["cstdint"],
    "uint8_t": ["cstdint"], "uint16_t": ["cstdint"], "uint32_t": ["cstdint"], "uint64_t": ["cstdint"],
    "uintptr_t": ["cstdint"],
    "string": ["string"], "to_string": ["string"], "string_view": ["string_view"],
    "to_chars": ["charconv"],
    "vector": ["vector"], "array": ["array"], "set": ["set"], "map": ["map"],
    "initializer_list": ["initializer_list"],
    "move": ["utility"], "forward": ["utility"], "swap": ["utility"], "pair": ["utility"],
    "declval": ["utility"], "exchange": ["utility"], "index_sequence": ["utility"],
    "make_index_sequence": ["utility"], "integer_sequence": ["utility"],
    "make_integer_sequence": ["utility"],
    "integral_constant": ["type_traits"], "is_same_v": ["type_traits"],
    "is_same": ["type_traits"], "is_floating_point_v": ["type_traits"],
    "is_integral_v": ["type_traits"], "is_const_v": ["type_traits"],
    "remove_const_t": ["type_traits"], "remove_cvref_t": ["type_traits"],
    "conditional_t": ["type_traits"], "enable_if_t": ["type_traits"], "void_t": ["type_traits"],
    "is_constant_evaluated": ["type_traits"], "decay_t": ["type_traits"],
    "numeric_limits": ["limits"], "span": ["span"], "type_identity_t": ["type_traits"],
    "memcpy": ["cstring"], "memset": ["cstring"], "memcmp": ["cstring"], "strlen": ["cstring"],
    "bit_cast": ["bit"],
    "sqrt": ["cmath"], "exp": ["cmath"], "fabs": ["cmath"], "isnan": ["cmath"],
    "isfinite": ["cmath"], "isinf": ["cmath"], "ldexp": ["cmath"], "pow": ["cmath"],
    "invalid_argument": ["stdexcept"], "out_of_range": ["stdexcept"],
    "length_error": ["stdexcept"], "runtime_error": ["stdexcept"], "logic_error": ["stdexcept"],
    "bad_alloc": ["new"],
    "unique_ptr": ["memory"], "make_unique": ["memory"], "shared_ptr": ["memory"],
    "sort": ["algorithm"], "lower_bound": ["algorithm"], "min": ["algorithm"],
    "max": ["algorithm"], "fill": ["algorithm"], "copy": ["algorithm"], "equal": ["algorithm"],
    "fopen": ["cstdio"], "fclose": ["cstdio"], "fread": ["cstdio"], "fseek": ["cstdio"],
    "ftell": ["cstdio"], "FILE": ["cstdio"], "printf": ["cstdio"],
    "error_code": ["system_error"], "filesystem": ["filesystem"],
}

COMMENT_OR_STRING = re.compile(
    r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
INCLUDE = re.compile(r'^\s*#\s*include\s*<([^>]+)>', re.M)
STD_NAME = re.compile(r'\bstd::([A-Za-z_][A-Za-z_0-9]*)')


def code_of(text):
    # keep newlines so that line numbers stay right
    return COMMENT_OR_STRING.sub(lambda m: "\n" * m.group(0).count("\n"), text)


# A class-body fragment (*.inc) cannot #include a standard header: its names must
# come from the header that its includers include first, named here.
FRAGMENT_PROVIDERS = {"mha/detail/api/forward_overloads.inc": "mha/detail/api/module_interface.hpp"}


def main():
    root = pathlib.Path(sys.argv[1])
    misses = []
    checked = 0
    fragments = sorted(root.rglob("*.inc"))
    for f in fragments:
        if f.relative_to(root).as_posix() not in FRAGMENT_PROVIDERS:
            misses.append(f"{f.relative_to(root)}: a fragment without an entry in FRAGMENT_PROVIDERS")
    for path in sorted(root.rglob("*.hpp")) + fragments:
        text = path.read_text()
        code = code_of(text)
        provider = FRAGMENT_PROVIDERS.get(path.relative_to(root).as_posix())
        included = set(INCLUDE.findall(code_of((root / provider).read_text()) if provider else code))
        seen = {}
        for m in STD_NAME.finditer(code):
            name = m.group(1)
            if name in PROVIDERS and name not in seen:
                seen[name] = code.count("\n", 0, m.start()) + 1
        for name, line in sorted(seen.items(), key=lambda kv: kv[1]):
            checked += 1
            if not any(h in included for h in PROVIDERS[name]):
                misses.append(f"{path.relative_to(root)}:{line}: std::{name} needs "
                              f"#include <{PROVIDERS[name][0]}>")
    for m in misses:
        print(m)
    print(f"{checked} uses of standard-library names checked, {len(misses)} without their header")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
