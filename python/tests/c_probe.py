# SPDX-License-Identifier: Apache-2.0
"""C's own answers, for the tests that hold a Python copy of a C layout or constant to its header: a small C
program built with the C compiler ($CC, else cc) against the header prints the values of C expressions (sizeof,
offsetof, enum constants); the header's text gives what a compiler cannot list (a struct's member names, an
enum's constants, in order). Where no compiler or header is found the calling test skips, saying which."""
from __future__ import annotations

import ctypes
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Optional, Sequence

import pytest


def _strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", "", text, flags=re.S))


def _body(text: str, opener: str, what: str) -> str:
    """The text between the brace that ends opener (a regex) and its match."""
    m = re.search(opener + r"\s*\{", text)
    assert m, f"{what} is not in the header"
    depth, i = 1, m.end()
    while depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[m.end():i - 1]


def members(header: str, tag: str, union: Optional[str] = None) -> list[str]:
    """The member names of `struct tag` in the header's text, in order (with union: those of the named union
    member of the struct)."""
    body = _body(_strip_comments(header), r"struct\s+" + tag, f"struct {tag}")
    if union is not None:
        m = re.search(r"union\s*\{([^{}]*)\}\s*" + union + r"\s*;", body)
        assert m, f"union {union} is not in struct {tag}"
        body = m.group(1)
    body = re.sub(r"(union|struct)\s*\{[^{}]*\}", r"\1", body)   # a nested aggregate is one member
    out = []
    for decl in filter(None, (d.strip() for d in body.split(";"))):
        m = re.search(r"(\w+)\s*(?:\[[^\]]*\])?\s*\)?\s*$", decl)
        assert m, f"struct {tag}: cannot read the member of {decl!r}"
        out.append(m.group(1))
    return out


def enumerators(header: str, tag: str) -> list[str]:
    """The constants of `enum tag` (or of a typedef'd anonymous enum named tag) in the header's text, in order."""
    text = _strip_comments(header)
    m = re.search(r"enum\s+" + tag + r"\s*\{", text)
    if m:
        body = _body(text, r"enum\s+" + tag, f"enum {tag}")
    else:
        m = re.search(r"typedef\s+enum\s*\{([^{}]*)\}\s*" + tag + r"\s*;", text)
        assert m, f"enum {tag} is not in the header"
        body = m.group(1)
    return [e.split("=")[0].strip() for e in body.split(",") if e.strip()]


def compiler() -> Optional[list[str]]:
    cc = shlex.split(os.environ.get("CC") or "cc")
    return cc if cc and shutil.which(cc[0]) else None


def values(includes: Sequence[str], include_dirs: Sequence[Path], exprs: Sequence[str]) -> list[int]:
    """The value of each C expression (an integer), from a program built with the includes."""
    cc = compiler()
    if cc is None:
        pytest.skip(f"no C compiler ({os.environ.get('CC') or 'cc'}) to read the C layout with")
    src = "".join(f"#include {h}\n" for h in ("<stddef.h>", "<stdio.h>", *includes))
    src += "int main(void)\n{\n"
    src += "".join(f'    printf("%lld\\n", (long long)({e}));\n' for e in exprs)
    src += "    return 0;\n}\n"
    with tempfile.TemporaryDirectory() as d:
        c, exe = Path(d) / "probe.c", Path(d) / "probe"
        c.write_text(src)
        r = subprocess.run([*cc, "-std=gnu11", *(f"-I{p}" for p in include_dirs), "-o", str(exe), str(c)],
                           capture_output=True, text=True)
        assert r.returncode == 0, f"the probe does not build ({' '.join(cc)}):\n{r.stderr}\n{src}"
        out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()
    assert len(out) == len(exprs)
    return [int(v) for v in out]


def layout_exprs(c_type: str, names: Sequence[str]) -> list[str]:
    """sizeof(c_type), then each member's offset and size."""
    out = [f"sizeof({c_type})"]
    for n in names:
        out += [f"offsetof({c_type}, {n})", f"sizeof((({c_type} *)0)->{n})"]
    return out


def py_layout(cls: type) -> list[int]:
    """What layout_exprs gives for a ctypes struct or union, its own member names."""
    out = [ctypes.sizeof(cls)]
    for name, *_ in cls._fields_:
        f = getattr(cls, name)
        out += [f.offset, f.size]
    return out
