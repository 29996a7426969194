# SPDX-License-Identifier: Apache-2.0
"""The one check made before a host twin runs on XLA's buffers (JAX's CPU platform): an access that the
kernel's own source and the call's values say is certainly past the end of an array is refused at lowering.

A host kernel shares the process's memory and XLA's buffers sit on its heap: a twin that writes past an output
overwrites the heap, and the process dies later ("double free or corruption") with no word of the kernel
(buffers trident allocates itself sit between guard pages instead: drivers/host/memory.h). What the kernel
touches is known before the launch only where its source says so plainly, so this reads only that: statements
at the top of the kernel's body, before any `if`, loop or `return` (so certainly run by every program), of
Triton's blocked form

    pid = tl.program_id(0)                         # or axis=0
    offs = pid * BLOCK + tl.arange(0, BLOCK)       # directly, or through `start = pid * BLOCK`
    mask = offs < n                                # optional
    tl.store(out_ptr + offs, value, mask=mask)     # or tl.load(x_ptr + offs, mask=mask)

with BLOCK and n values the call gives (constexprs, integer scalars), `tl` Triton's language module, and
out_ptr a parameter that takes an array. Program p of the grid's first axis touches elements p * BLOCK + j
(j < BLOCK, and < n under the mask): an array with fewer elements than the largest such index + 1 is refused
naming the kernel, the parameter, the array, the statement and the values. Anything else is not judged (never
refused): python/README.md says what goes unchecked.
"""
from __future__ import annotations

import ast
import inspect
import os
import textwrap
import weakref
from typing import Any, Mapping, Optional

import numpy as np
import triton.language as _tl

from . import coords as _co
from .errors import BoundsError, KernelCallError
from .triton_shims import FRONT_END


# a kernel's parsed source, as long as the kernel lives
_sources: "weakref.WeakKeyDictionary[Any, Optional[tuple]]" = weakref.WeakKeyDictionary()


def _parsed(fn: Any) -> Optional[tuple[ast.FunctionDef, dict, str, int]]:
    """(the def, its globals, its file's name, the line before its first) or None where its source is not at hand.
    Parsed under the front end's lock (triton_shims.py: CPython 3.11's parser is not safe on two threads)."""
    with FRONT_END:
        if fn in _sources:
            return _sources[fn]
        try:
            lines, first = inspect.getsourcelines(fn.fn)
            tree = ast.parse(textwrap.dedent("".join(lines)))
            where = os.path.basename(inspect.getsourcefile(fn.fn) or "?")
            node = tree.body[0] if tree.body and isinstance(tree.body[0], ast.FunctionDef) else None
            parsed = (node, fn.fn.__globals__, where, first - 1) if node else None
        except (OSError, TypeError, AttributeError, SyntaxError):
            parsed = None
        _sources[fn] = parsed
        return parsed


def _int(v: Any) -> Optional[int]:
    if isinstance(v, (bool, np.bool_)):
        return None
    if isinstance(v, (int, np.integer)):
        return int(v)
    value = getattr(v, "value", None)   # tl.constexpr
    return int(value) if isinstance(value, (int, np.integer)) and not isinstance(value, bool) else None


class _Reader:
    """Abstract values of the straight-line prefix: ('pid',), ('start', B), ('offs', B), ('mask', B, n), int."""

    def __init__(self, glb: dict, values: Mapping[str, Any]):
        self.glb, self.values, self.env = glb, values, {}

    def _tl_call(self, node: ast.AST, name: str) -> bool:
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == name
                and isinstance(node.func.value, ast.Name) and self.glb.get(node.func.value.id) is _tl
                and node.func.value.id not in self.env)

    def value(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return _int(node.value)
        if isinstance(node, ast.Name):
            if node.id in self.env:
                return self.env[node.id]
            return _int(self.values.get(node.id))
        if self._tl_call(node, "program_id"):
            axis = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "axis"), None)
            return ("pid",) if axis is not None and self.value(axis) == 0 else None
        if self._tl_call(node, "arange") and len(node.args) == 2 and not node.keywords:
            lo, hi = self.value(node.args[0]), self.value(node.args[1])
            return ("arange", hi) if lo == 0 and isinstance(hi, int) else None
        if isinstance(node, ast.BinOp):
            a, b = self.value(node.left), self.value(node.right)
            if isinstance(node.op, ast.Mult):
                if a == ("pid",) and isinstance(b, int):
                    return ("start", b)
                if b == ("pid",) and isinstance(a, int):
                    return ("start", a)
            if isinstance(node.op, ast.Add):
                for s, r in ((a, b), (b, a)):
                    if isinstance(s, tuple) and s[0] == "start" and r == ("arange", s[1]):
                        return ("offs", s[1])
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Lt):
            a, n = self.value(node.left), self.value(node.comparators[0])
            if isinstance(a, tuple) and a[0] == "offs" and isinstance(n, int):
                return ("mask", a[1], n)
        return None


def _access(r: _Reader, call: ast.Call) -> Optional[tuple[str, int, Optional[int], str]]:
    """(pointer parameter, BLOCK, n or None, 'tl.store'/'tl.load') of a load or store of the blocked form."""
    kind = "store" if r._tl_call(call, "store") else "load" if r._tl_call(call, "load") else None
    if kind is None or not call.args:
        return None
    ptr = call.args[0]
    if not (isinstance(ptr, ast.BinOp) and isinstance(ptr.op, ast.Add)):
        return None
    for p, o in ((ptr.left, ptr.right), (ptr.right, ptr.left)):
        offs = r.value(o)
        if isinstance(p, ast.Name) and p.id not in r.env and isinstance(offs, tuple) and offs[0] == "offs":
            break
    else:
        return None
    pos = 2 if kind == "store" else 1
    mask_node = call.args[pos] if len(call.args) > pos else next(
        (k.value for k in call.keywords if k.arg == "mask"), None)
    if mask_node is None:
        return p.id, offs[1], None, f"tl.{kind}"
    m = r.value(mask_node)
    if isinstance(m, tuple) and m[0] == "mask" and m[1] == offs[1]:
        return p.id, offs[1], m[2], f"tl.{kind}"
    return None


def _array_of(v: Any) -> Optional[tuple[Any, str]]:
    if isinstance(v, _co.In):
        return v.array, f"input {v.operand}"
    if isinstance(v, _co.Out):
        return v.shape, f"output {v.result}"
    return None


def check(fn: Any, kname: str, grid: tuple, values: Mapping[str, Any]) -> None:
    """Raises BoundsError where the kernel's blocked loads and stores certainly pass the end of an array."""
    parsed = _parsed(fn)
    if parsed is None or not grid or min(grid) <= 0:
        return
    node, glb, where, line0 = parsed
    r = _Reader(glb, values)
    for stmt in node.body:
        if not isinstance(stmt, (ast.Assign, ast.Expr)):
            return   # control flow, or what this does not read: what follows may not run
        for c in ast.walk(stmt.value):
            if isinstance(c, ast.Call) and (acc := _access(r, c)):
                _judge(kname, grid, values, acc, f"{where}:{line0 + c.lineno}")
        if isinstance(stmt, ast.Assign):
            simple = len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            value = r.value(stmt.value) if simple else None
            for t in stmt.targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        r.env[n.id] = value


def _judge(kname: str, grid: tuple, values: Mapping[str, Any], acc: tuple, line: str) -> None:
    param, block, n, what = acc
    found = _array_of(values.get(param))
    if found is None or block <= 0:
        return
    arr, role = found
    top = grid[0] * block if n is None else min(grid[0] * block, n)
    size = int(np.prod(arr.shape, dtype=np.int64))
    if top <= size:
        return
    bounds = f"BLOCK {block} x {grid[0]} programs" + ("" if n is None else f", masked below {n}")
    raise BoundsError(
        f"kernel '{kname}': {what} through '{param}' at {line} reaches element {top - 1} ({bounds}), but "
        f"'{param}' is {role}, {np.dtype(arr.dtype).name}{list(arr.shape)}: {size} elements. On JAX's CPU "
        f"platform the host twin would access memory past XLA's buffer; give '{param}' {top} elements or a "
        f"smaller grid")
