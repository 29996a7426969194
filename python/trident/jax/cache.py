# SPDX-License-Identifier: Apache-2.0
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

import hashlib
import json
import os
import stat
import tempfile
import warnings
from pathlib import Path
from typing import Any, Optional

# An entry is a header line naming the sha256 of everything after it, then a trident bundle: an entry edited or
# damaged anywhere (the manifest included, not only the images the bundle's own digests cover) is compiled again.
_MAGIC = b"trident-jax-cache 1 "
_KERNEL_MAX = 1 << 30     # a bundle of a few images; far below this
_CHOICE_MAX = 1 << 20     # an autotune record is a few hundred bytes


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


_warned: set[str] = set()


def _warn_once(msg: str) -> None:
    if msg not in _warned:
        _warned.add(msg)
        warnings.warn(f"trident.jax: {msg}", RuntimeWarning, stacklevel=3)


def _private_dir(d: Path) -> bool:
    """d exists, is a directory of this user's and is private (0700), as the C caches require; created so."""
    try:
        d.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.stat(d)
    except OSError as e:
        _warn_once(f"cache disabled: cannot create {d}: {e.strerror}")
        return False
    if not stat.S_ISDIR(st.st_mode):
        _warn_once(f"cache disabled: {d} is not a directory")
        return False
    if st.st_uid != os.geteuid():
        _warn_once(f"cache disabled: {d} belongs to another user (uid {st.st_uid})")
        return False
    if st.st_mode & 0o077:
        try:
            os.chmod(d, 0o700)
        except OSError as e:
            _warn_once(f"cache disabled: cannot make {d} private: {e.strerror}")
            return False
    return True


def read_regular(path: Any, limit: int) -> bytes:
    """The bytes of a regular file of at most limit bytes. A FIFO, a device (a link to /dev/zero), a directory or a
    larger file raises OSError before anything is read, so no reader blocks or exhausts memory."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"'{path}' is not a regular file")
        if st.st_size > limit:
            raise OSError(f"'{path}' is {st.st_size} bytes, more than the {limit} accepted")
        os.set_blocking(fd, True)
        chunks, left = [], st.st_size + 1     # one byte more: a file that grew is refused, not cut
        while left > 0:
            b = os.read(fd, left)
            if not b:
                break
            chunks.append(b)
            left -= len(b)
        data = b"".join(chunks)
        if len(data) != st.st_size:
            raise OSError(f"'{path}' changed size while being read")
        return data
    finally:
        os.close(fd)


def _write(path: Path, data: bytes) -> None:
    if not _private_dir(path.parent):
        return
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        tmp = None
    except OSError:
        pass  # a read-only or full cache only costs a recompilation
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def load_kernel(key: str) -> Optional[bytes]:
    """The bundle kept under key, or None when absent, unreadable, or not exactly what store_kernel wrote."""
    p = _path("triton", key, ".trdb")
    if p is None:
        return None
    try:
        data = read_regular(p, _KERNEL_MAX)
    except OSError:
        return None
    head, sep, body = data.partition(b"\n")
    if not sep or not head.startswith(_MAGIC) or head[len(_MAGIC):] != hashlib.sha256(body).hexdigest().encode():
        return None
    return body


def store_kernel(key: str, bundle: bytes) -> None:
    p = _path("triton", key, ".trdb")
    if p is not None:
        _write(p, _MAGIC + hashlib.sha256(bundle).hexdigest().encode() + b"\n" + bundle)


def choice_path(key: str, arch: str) -> Optional[Path]:
    """Where the XLA handler keeps the choice of an autotuned call (autotune_key `key`) for a device arch."""
    safe = "".join(ch if ch.isalnum() or ch in "._-+" else "_" for ch in arch)
    return _path("autotune", f"{key}-{safe}", ".json")


def load_choice(key: str, arch: str) -> Optional[dict[str, Any]]:
    """The handler's record of a choice (candidates, choice, times_ms, device, ...), or None."""
    p = choice_path(key, arch)
    try:
        return json.loads(read_regular(p, _CHOICE_MAX)) if p is not None else None
    except (OSError, ValueError):
        return None
