# SPDX-License-Identifier: Apache-2.0
"""Programmatic dependent launch (PDL) for the kernels trident.jax compiles for sm90 and newer.

XLA launches its own kernels on sm90+ with PDL: a kernel is scheduled while the one before it still runs and
waits (griddepcontrol.wait) before it touches memory, so the launch latency of a chain of kernels overlaps.
Inside a command buffer XLA joins two kernel nodes with a PDL edge only where the second was made for it; a
custom call's kernel that was not breaks the chain on both of its sides (bench/NOTES.md: 1.19x XLA's own
fusion for the same add, 0.93x for the add compiled with launch_pdl and gdc_wait).

A Triton kernel may be launched so only when it was compiled for it (launch_pdl) and waits itself. Unless
TRIDENT_JAX_PDL=0, where the caller did not choose launch_pdl, a kernel compiled here for sm90+ gets launch_pdl
and, first in its entry (in its PTX, before ptxas), griddepcontrol.launch_dependents and griddepcontrol.wait.
The wait returns once every grid before it has finished and its memory is visible, before any instruction of the
kernel's own: it reads and writes nothing earlier than it would without PDL. The trigger lets the kernel after it
be scheduled once every block of this one has started; that kernel, launched with PDL, waits in turn before it
reads (XLA's own kernels do, as do trident's and any launch_pdl kernel keeping Triton's rule: gdc_wait before
touching what the kernel before it wrote), so only scheduling moves, not memory order. One consequence: the
trigger comes before this kernel's own wait, so the kernel after it may start while the one before it still
runs; a caller's launch_pdl kernel that reads, before its gdc_wait, what an earlier kernel wrote (not only the
one right before it) must move that read after the wait, or set TRIDENT_JAX_PDL=0. On the H200 (2026-12-02)
tests/test_jax_pdl.py's GPU test gave the same bits as without PDL with command buffers on and off, and the
trigger took a chain of trident adds between XLA fusions from 1.09x XLA's own to 1.01-1.05x (bench/NOTES.md).
TRIDENT_JAX_PDL=0 compiles kernels as Triton does, as does TRITON_STORE_BINARY_ONLY=1 (the PTX that shows the
wait is then not kept).
"""
from __future__ import annotations

import os
import re
from typing import Any, Mapping

from .platforms import CompileError, Target

ENV = "TRIDENT_JAX_PDL"
# names a patched compilation in Triton's cache key (triton_shims.ptx_patched) and trident's (compile_key): a new
# one where patch_ptx's output changes
MARK = "trident-entry-pdl-4"
MIN_ARCH = 90                  # griddepcontrol: sm_90, PTX 7.8
_PROLOGUE = "\tgriddepcontrol.launch_dependents;\n\tgriddepcontrol.wait;\n"

_ENTRY = re.compile(r"^[ \t]*(?:\.(?:visible|weak)[ \t]+)?\.entry[ \t]+([\w$]+)", re.M)
# what may stand at the top of a body before its first instruction: a line of one declaration (or .loc), a
# comment or nothing; a line where an instruction follows the declaration (inline asm) is not skipped
_DECL = re.compile(r"[ \t]*(?:\.(?:reg|local|shared|param|pragma)\b[^;\n]*;|\.loc\b[^;\n]*)?[ \t]*(?://[^\n]*)?\n")


def enabled() -> bool:
    """TRIDENT_JAX_PDL: unset or 1, on; 0, off; anything else a ValueError naming it."""
    v = os.environ.get(ENV, "1").strip()
    if v not in ("0", "1"):
        raise ValueError(f"{ENV}={os.environ[ENV]!r}: expected 0 (kernels compiled as Triton does) or 1 (PDL for "
                         f"sm90+ kernels whose caller did not choose launch_pdl)")
    return v == "1"


def wanted(t: Target, options: Mapping[str, Any]) -> bool:
    """Whether the kernel compiled for t with these options gets launch_pdl and the entry wait: CUDA sm90+, the
    caller chose no launch_pdl (theirs stands either way) and no cooperative launch, TRIDENT_JAX_PDL not 0, and
    Triton keeps PTX in its cache (TRITON_STORE_BINARY_ONLY unset). The variable is read for every target, so
    that a value it does not take is refused where no kernel would get PDL too."""
    on = enabled()
    if t.backend != "cuda" or not isinstance(t.arch, int) or t.arch < MIN_ARCH:
        return False
    if "launch_pdl" in options or options.get("launch_cooperative_grid"):
        return False
    return on and _ptx_kept()


def _ptx_kept() -> bool:
    """Whether Triton keeps a compilation's PTX in its cache: compile._check_pdl reads it there, and with
    TRITON_STORE_BINARY_ONLY no cached compilation could show that it waits (so none is made for PDL)."""
    from triton import knobs
    return not getattr(knobs.compilation, "store_binary_only", False)


def _body_start(ptx: str, m: re.Match) -> int:
    """Where the first instruction of the body of entry m stands (after its declarations); -1 where it has none."""
    # the parameter list holds no braces: the first '{' after the name opens the body
    brace = ptx.find("{", m.end())
    if brace < 0:
        return -1
    at = ptx.find("\n", brace) + 1 or len(ptx)
    while True:
        d = _DECL.match(ptx, at)
        if not d or d.end() == at:
            return at
        at = d.end()


def patch_ptx(ptx: str) -> str:
    """ptx with the prologue first in the body of every .entry (after the body's declarations); CompileError
    where the text holds no entry, or an entry without a body."""
    out, pos, n = [], 0, 0
    for m in _ENTRY.finditer(ptx):
        at = _body_start(ptx, m)
        if at < 0:
            raise CompileError(f"PDL: the PTX entry '{m.group(1)}' has no body")
        out += [ptx[pos:at], _PROLOGUE]
        pos, n = at, n + 1
    if not n:
        raise CompileError("PDL: the PTX Triton made holds no .entry")
    out.append(ptx[pos:])
    return "".join(out)


def is_patched(ptx: str) -> bool:
    """Whether every entry of ptx begins with the prologue (a compilation made by patch_ptx): the prologue's text
    elsewhere (an entry patched twice, the kernel's own instructions) does not count for an entry without it."""
    entries = list(_ENTRY.finditer(ptx))
    return bool(entries) and all((at := _body_start(ptx, m)) >= 0 and ptx.startswith(_PROLOGUE, at)
                                 for m in entries)
