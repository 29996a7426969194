# SPDX-License-Identifier: Apache-2.0
"""The on-disk caches of trident.jax: compiled kernels (one trident bundle per
kernel and target, named by the sha256 of its source, specialization,
options, target and the Triton and trident versions) and autotuning choices.

    libtrident's cache directory ([runtime] cache_dir, TRIDENT_CACHE_DIR: read
    when the process's runtime is made; else $XDG_CACHE_HOME/trident, else
    ~/.cache/trident: trident.cache_dir())
        triton/<key>.trdb
        tune/<kernel>-<sha256 of the autotune key>-<arch>.json

A cache never trusts a file's name alone: it checks what the file holds.
A kernel entry holds its key and its kernel's identity (name, source key,
options, target, Triton's hash of the compilation) beside the bundle, under a
sha256 of both; a read that finds another kernel, another key, or damage
anywhere is a miss (compiled again; a warning, once, for a wrong identity).
A choice file names its key (by its sha256) and arch, and the tuner checks them too.
Only what this user owns and nobody else may write is read: a directory of
another user or open to group/others, an entry of another user, writable by
group/others, or a symbolic link is ignored with a warning, once. Entries are
written to a temporary file then renamed (mode 0600), in directories made
0700, so that concurrent processes never read a partial entry. Autotuning
choices belong to libtrident's tuner (trd_tuner_*), through which the XLA
handler benchmarks at the first execution and which writes them the same way
(the files of every tuner's choices); an autotuned call passes it this
directory (cache_dir). TRIDENT_JAX_CACHE=0 turns both off (the tuner then
keeps choices in the process's memory). Choice files of trident's earlier
format (autotune/<key>-<arch>.json) are no longer read.
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

from .errors import UntrustedError

# An entry: a header line naming the sha256 of everything after it, the entry's identity (one line of JSON: its key
# and its kernel's), then a trident bundle. An entry edited or damaged anywhere (the manifest included, not only the
# images the bundle's own digests cover) is compiled again; one holding another kernel too.
_MAGIC = b"trident-jax-cache 2 "
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


def warn_once(msg: str) -> None:
    if msg not in _warned:
        _warned.add(msg)
        warnings.warn(f"trident.jax: {msg}", RuntimeWarning, stacklevel=3)


def _untrusted(st: os.stat_result) -> Optional[str]:
    """Why a file or directory with this status is not this user's alone, or None."""
    if st.st_uid != os.geteuid():
        return f"belongs to another user (uid {st.st_uid})"
    if st.st_mode & 0o022:
        return f"is writable by group or others (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def _private_dir(d: Path, create: bool) -> bool:
    """d is a directory of this user's that nobody else may write (made 0700 when create; one readable by others is
    made private). False, with a warning naming d and why, for any other; False quietly when d is absent."""
    try:
        if create:
            missing = [p for p in (d, *d.parents) if not p.exists()]
            for p in reversed(missing):        # each one 0700 (mkdir's parents=True makes parents 0777 - umask)
                p.mkdir(mode=0o700, exist_ok=True)
        st = os.stat(d)
    except FileNotFoundError:
        return False
    except OSError as e:
        warn_once(f"cache disabled: cannot create {d}: {e.strerror}")
        return False
    if not stat.S_ISDIR(st.st_mode):
        warn_once(f"cache disabled: {d} is not a directory")
        return False
    why = _untrusted(st)
    if why:
        warn_once(f"cache disabled: {d} {why}; its entries are ignored (chmod 700 a directory of yours to use it)")
        return False
    if st.st_mode & 0o077:
        try:
            os.chmod(d, 0o700)
        except OSError as e:
            warn_once(f"cache disabled: cannot make {d} private: {e.strerror}")
            return False
    return True


def read_regular(path: Any, limit: int, private: bool = False) -> bytes:
    """The bytes of a regular file of at most limit bytes. A FIFO, a device (a link to /dev/zero), a directory or a
    larger file raises OSError before anything is read, so no reader blocks or exhausts memory. private (a cache
    entry): a symbolic link, or a file of another user or writable by group/others, raises UntrustedError."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
    try:
        fd = os.open(path, flags | (os.O_NOFOLLOW if private else 0))
    except OSError as e:
        if private and os.path.islink(path):
            raise UntrustedError(f"'{path}' is a symbolic link") from None
        raise e
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"'{path}' is not a regular file")
        why = _untrusted(st) if private else None
        if why:
            raise UntrustedError(f"'{path}' {why}")
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


def _read_entry(p: Optional[Path], limit: int) -> Optional[bytes]:
    """p's bytes when p is a trusted entry in a trusted directory; None (warned once when untrusted) otherwise."""
    if p is None or not _private_dir(p.parent, create=False):
        return None
    try:
        return read_regular(p, limit, private=True)
    except UntrustedError as e:
        warn_once(f"ignoring cache entry {e}")
    except OSError:
        pass   # absent, unreadable, a FIFO or a device: a miss
    return None


def _write(path: Path, data: bytes) -> None:
    if not _private_dir(path.parent, create=True):
        return
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")   # mode 0600
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


def load_kernel(key: str, identity: dict[str, str]) -> Optional[tuple[bytes, dict[str, Any]]]:
    """The bundle kept under key and the identity stored with it, or None when absent, untrusted, not exactly what
    store_kernel wrote, or made for another kernel: the stored identity must hold key and every item of identity."""
    p = _path("triton", key, ".trdb")
    data = _read_entry(p, _KERNEL_MAX)
    if data is None:
        return None
    head, sep, rest = data.partition(b"\n")
    if not sep or not head.startswith(_MAGIC) or head[len(_MAGIC):] != hashlib.sha256(rest).hexdigest().encode():
        return None   # damaged, or written by another version: compiled again and replaced
    line, _, body = rest.partition(b"\n")
    try:
        held = json.loads(line)
    except ValueError:
        return None
    want = dict(identity, key=key)
    wrong = sorted(k for k, v in want.items() if not isinstance(held, dict) or held.get(k) != v)
    if wrong:
        warn_once(f"ignoring cache entry {p}: it holds another kernel than its name says ({', '.join(wrong)} "
                   f"differ{'s' if len(wrong) == 1 else ''}); compiling again")
        return None
    return body, held


def store_kernel(key: str, identity: dict[str, Any], bundle: bytes) -> None:
    """Keeps bundle under key with its identity (load_kernel checks both)."""
    p = _path("triton", key, ".trdb")
    if p is not None:
        rest = json.dumps(dict(identity, key=key), sort_keys=True).encode() + b"\n" + bundle
        _write(p, _MAGIC + hashlib.sha256(rest).hexdigest().encode() + b"\n" + rest)


def _name_safe(text: str, limit: int) -> str:
    """The first `limit` bytes of text's UTF-8 as libtrident's tuner puts them in a file name (core/tune.c's
    name_char): byte by byte, each byte a name may not hold (any of a non-ASCII character's) made '_'."""
    ok = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.+"
    return "".join(chr(b) if b in ok else "_" for b in text.encode()[:limit])


def choice_path(kernel: str, key: str, arch: str) -> Optional[Path]:
    """Where libtrident's tuner keeps the choice of an autotuned call of `kernel` (autotune_key `key`) for a device
    arch: tune/<kernel>-<sha256(key)>-<arch>.json (an empty arch is 'unknown')."""
    stem = _name_safe(kernel, 64)
    if stem.startswith("."):
        stem = "_" + stem[1:]
    digest = hashlib.sha256(key.encode()).hexdigest()
    return _path("tune", f"{stem}-{digest}-{_name_safe(arch or 'unknown', 100)}", ".json")


def load_choice(kernel: str, key: str, arch: str) -> Optional[dict[str, Any]]:
    """The tuner's record of a choice (variants, choice, times_ms, device, configs, ...), or None: also when the file
    is untrusted or names another key or arch than its name says."""
    p = choice_path(kernel, key, arch)
    data = _read_entry(p, _CHOICE_MAX)
    try:
        rec = json.loads(data) if data is not None else None
    except ValueError:
        return None
    if not isinstance(rec, dict):
        return None
    if rec.get("key_sha256") != hashlib.sha256(key.encode()).hexdigest() or rec.get("arch") != arch:
        warn_once(f"ignoring autotune choice {p}: it was made for key sha256 {rec.get('key_sha256')!r}, arch "
                  f"{rec.get('arch')!r}")
        return None
    return rec
