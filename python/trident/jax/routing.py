# SPDX-License-Identifier: Apache-2.0
"""One keyword namespace, as in Triton: a keyword of triton_call that names a
kernel parameter goes to the kernel, one that names a field of the target
backend's options class goes to the compiler, one that names both goes to
both (a kernel may read its own num_warps); anything else is an error that
names the kernel and lists what it could have been.

What counts as a backend option is trident's option tables (options/*.c, one
row per field of CUDAOptions, HIPOptions, XPUOptions, with the Triton
releases that have it), asked for the installed release through
trident.is_option; values are checked by the same tables (trd_options_set
with the target's arch set, so checks that depend on it, such as num_ctas > 1
needing sm90, apply). A field of the installed options class that the tables
do not know for its release (a Triton newer than them) is passed to Triton
unchecked, with one warning that names such fields.
"""
from __future__ import annotations

import ctypes
import dataclasses
import functools
import importlib
import operator
import warnings
from typing import Any, Iterable, Mapping, Optional, Sequence

from .. import _option_text, is_option, option_names, option_releases, options as option_table
from .._lib import Status, TridentError, check, lib
from .compile import TRITON_VERSION, Target
from .errors import OptionError

# the Triton backend of a target -> trident's option table
_TABLE = {"cuda": "cuda", "hip": "hip", "xpu": "xpu"}


def backends_of(targets: Iterable[Target]) -> list[str]:
    out = []
    for t in targets:
        b = _TABLE.get(t.backend)
        if b and b not in out:
            out.append(b)
    return out


# each table's options class in the installed Triton (the Intel fork's where it is installed)
_CLASSES = {"cuda": ("triton.backends.nvidia.compiler", "CUDAOptions"),
            "hip": ("triton.backends.amd.compiler", "HIPOptions"),
            "xpu": ("triton.backends.intel.compiler", "XPUOptions")}


@functools.lru_cache(maxsize=16)
def installed_fields(table: str) -> Optional[tuple[str, ...]]:
    """The fields of the installed Triton's options class for a table, in order (None: not installed)."""
    module, cls = _CLASSES.get(table, (None, None))
    try:
        return tuple(f.name for f in dataclasses.fields(getattr(importlib.import_module(module), cls)))
    except Exception:  # no such backend in this Triton
        return None


@functools.lru_cache(maxsize=16)
def untabled(table: str) -> tuple[str, ...]:
    """Fields of the installed options class that trident's table lacks for the installed release."""
    return tuple(f for f in installed_fields(table) or () if not is_option(table, f, TRITON_VERSION))


_warned: set[str] = set()


def _warn_untabled(table: str) -> None:
    if table in _warned:
        return
    _warned.add(table)
    r = option_releases(table)
    warnings.warn(f"trident.jax: {r['product']} {TRITON_VERSION} has {table} options that trident's tables "
                  f"({r['oldest']} .. {r['newest']}) do not know: {', '.join(untabled(table))}; they are passed to "
                  f"Triton unchecked (trident options --triton says which releases the tables know)",
                  UserWarning, stacklevel=4)


@functools.lru_cache(maxsize=4096)
def _tabled(table: str, name: str) -> bool:
    return is_option(table, name, TRITON_VERSION)


def _is_option(table: str, name: str) -> bool:
    if _tabled(table, name):
        return True
    if name in untabled(table):
        _warn_untabled(table)
        return True
    return False


@functools.lru_cache(maxsize=16)
def _fields(table: str) -> dict[str, dict]:
    """The installed release's fields of a table, by name."""
    return {o["name"]: o for o in option_table(table, TRITON_VERSION)}


def _kind_error(type_name: str, value: Any) -> Optional[str]:
    """Why value cannot be an option of the type: a string or a float where Triton's field is an int or a bool
    (whose text the table would accept, and which Triton would then take as something else: "false" is true)."""
    if type_name in ("int", "Optional[int]") and not (value is None and type_name != "int"):
        try:
            operator.index(value)
        except TypeError:
            return f"{value!r} is a {type(value).__name__}; expected an int"
    if type_name == "bool" and isinstance(value, (str, bytes, float)):
        return f"{value!r} is a {type(value).__name__}; expected True or False"
    return None


@functools.lru_cache(maxsize=None)
def _stages(table: str) -> dict[str, str]:
    return {n: o["stage"] for n, o in _fields(table).items()}


def is_backend_option(name: str, backends: Sequence[str]) -> bool:
    return any(_is_option(b, name) for b in backends)


def check_names(kernel: str, params: Sequence[str], kwargs: Mapping[str, Any], backends: Sequence[str]) -> None:
    """Every keyword must be a kernel parameter or an option of one of the backends."""
    tables = backends or ["cuda", "hip"]
    for name in kwargs:
        if name in params or is_backend_option(name, tables):
            continue
        known = {b: option_names(b, TRITON_VERSION) + list(untabled(b)) for b in tables}
        listed = "; ".join(f"{b}: {', '.join(n)}" for b, n in known.items())
        raise OptionError(f"kernel '{kernel}': unknown keyword argument '{name}': it is neither a parameter of the "
                          f"kernel ({', '.join(params)}) nor a backend option of Triton {TRITON_VERSION} ({listed})")


def for_backend(backend: str, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The keywords that are options of this backend, None values dropped (Triton's parse_options does)."""
    table = _TABLE.get(backend)
    if table is None:
        return {}
    return {k: v for k, v in kwargs.items() if v is not None and _is_option(table, k)}


# the options triton_call gives a value where the caller gives none (jax-triton's num_warps, num_stages, num_ctas)
DEFAULTED = ("num_warps", "num_stages", "num_ctas")


def defaults(backend: str, given: Iterable[str] = ()) -> dict[str, Any]:
    """The backend's defaults of DEFAULTED but the given names, from trident's table for the installed release
    (CUDAOptions' num_stages is 3, HIPOptions' and XPUOptions' 2)."""
    table = _TABLE.get(backend)
    if table is None:
        return {}
    skip = set(given)
    return {k: int(_fields(table)[k]["default"]) for k in DEFAULTED if k not in skip and k in _fields(table)}


def validate(kernel: str, t: Target, options: Mapping[str, Any]) -> None:
    """Checks each option value with trident's table for t's backend, the target's arch set."""
    table = _TABLE.get(t.backend)
    if table is None or not options:
        return
    L = lib()
    o = ctypes.c_void_p()
    check(L.trd_options_create(table.encode(), ctypes.byref(o)))
    try:
        if t.name and _tabled(table, "arch"):
            L.trd_options_set(o, b"arch", t.name.encode())
        for name, value in options.items():
            if name == "arch" or not _tabled(table, name):
                continue   # a field the tables do not know for this release: Triton checks it
            why = _kind_error(_fields(table)[name]["type"], value)
            if why:
                raise OptionError(f"kernel '{kernel}': option {name}={value!r} for {t} (Triton {TRITON_VERSION}): "
                                  f"{why}")
            st = L.trd_options_set(o, name.encode(), _option_text(value).encode())
            if st != Status.OK:
                try:
                    check(st)
                except TridentError as e:
                    raise OptionError(f"kernel '{kernel}': option {name}={value!r} for {t} (Triton {TRITON_VERSION}): "
                                      f"{e.message}") from None
    finally:
        L.trd_options_destroy(o)


def load_stage(backend: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The options a loader applies (trident's 'load' stage: maxnreg, ptx_options, debug, ...),
    as the text the XLA handler's options attribute takes."""
    table = _TABLE.get(backend)
    if table is None:
        return {}
    stages = _stages(table)
    return {k: _option_text(v) for k, v in options.items() if stages.get(k) == "load" and k != "extern_libs"}
