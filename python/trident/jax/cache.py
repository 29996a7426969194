"""The on-disk caches of trident.jax: compiled kernels (one trident bundle per
kernel and target, named by the sha256 of its source, specialization,
options, target and the Triton and trident versions) and autotuning choices.

    libtrident's cache directory ([runtime] cache_dir, TRIDENT_CACHE_DIR: read
    when the process's runtime is made; else $XDG_CACHE_HOME/trident, else
    ~/.cache/trident: trident.cache_dir())
        triton/<key>.trdb
        autotune/<key>-<arch>.json

Kernel entries are written here, to a temporary file then renamed, so that
concurrent processes never read a partial entry; a damaged entry is compiled
again. Autotuning choices belong to libtrident's XLA handler, which benchmarks
at the first execution and writes them (the same way, in a 0700 directory);
an autotuned call passes it this directory (cache_dir). TRIDENT_JAX_CACHE=0
turns both off (the handler then keeps choices in the process's memory).
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Optional


def cache_dir() -> Optional[Path]:
    """Where trident.jax keeps its caches: libtrident's configured directory, or None (off)."""
    if os.environ.get("TRIDENT_JAX_CACHE", "1") in ("0", "false", "no", "off"):
        return None
    from .. import cache_dir as configured
    d = configured()
    return Path(d) if d else None


def _path(kind: str, key: str, ext: str) -> Optional[Path]:
    d = cache_dir()
    return None if d is None else d / kind / f"{key}{ext}"


def _write(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only or full cache only costs a recompilation


def load_kernel(key: str) -> Optional[bytes]:
    p = _path("triton", key, ".trdb")
    try:
        return p.read_bytes() if p is not None else None
    except OSError:
        return None


def store_kernel(key: str, bundle: bytes) -> None:
    p = _path("triton", key, ".trdb")
    if p is not None:
        _write(p, bundle)


def choice_path(key: str, arch: str) -> Optional[Path]:
    """Where the XLA handler keeps the choice of an autotuned call (autotune_key `key`) for a device arch."""
    safe = "".join(ch if ch.isalnum() or ch in "._-+" else "_" for ch in arch)
    return _path("autotune", f"{key}-{safe}", ".json")


def load_choice(key: str, arch: str) -> Optional[dict[str, Any]]:
    """The handler's record of a choice (candidates, choice, times_ms, device, ...), or None."""
    p = choice_path(key, arch)
    try:
        return json.loads(p.read_text()) if p is not None else None
    except (OSError, ValueError):
        return None
