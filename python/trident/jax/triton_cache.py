# SPDX-License-Identifier: Apache-2.0
"""What trident takes from Triton's own cache: a compilation's metadata and
images, checked before trident keeps them.

triton.compile serves a compilation it finds in its cache ($TRITON_CACHE_DIR,
~/.triton/cache) without looking inside: a truncated cubin, a garbage PTX or
an empty metadata file comes back as if compiled (or as a bare
JSONDecodeError), and a FIFO there blocks Triton's read forever. So before
trident asks Triton, it looks up the entry Triton would use (with Triton's
own key functions) and checks every file in it; after, it checks the
metadata and images it takes. A damaged entry is forgotten (its index file
removed, a warning naming the damaged file) and Triton compiles it again; a
freshly compiled image that is still damaged is a CompileError naming it.

An image is checked for what its format implies (the rules of libtrident's
trd_image_check, core/image.c, which reads Triton cache entries in C;
test_triton_cache holds the two together): an ELF of the backend's
machine (cubin: EM_CUDA, HSACO: EM_AMDGPU, zebin: EM_INTELGT) whose program
and section tables and every section lie inside the file and whose string
tables name the kernel; PTX text with .version, .target and the kernel's
.entry; SPIR-V words with its magic. Metadata is a JSON object naming this
kernel, with its target.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import struct
import warnings
from typing import Any, Callable, Optional, Sequence

from . import cache as _cache
from .platforms import CompileError

_META_MAX = 16 << 20
_FILE_MAX = 1 << 30
_GROUP_MAX = 1 << 20
_ELF_MACHINE = {"cubin": (190, "EM_CUDA"), "hsaco": (224, "EM_AMDGPU"), "zebin": (205, "EM_INTELGT")}
_SHT_NOBITS = 8


class Damaged(Exception):
    """A file of Triton's cache that trident cannot take: path and why."""

    def __init__(self, path: str, why: str):
        super().__init__(f"{path}: {why}")
        self.path, self.why = path, why


def _elf_problem(data: bytes, ext: str, name: str) -> Optional[str]:
    machine, mname = _ELF_MACHINE[ext]
    if len(data) < 64 or data[:4] != b"\x7fELF":
        return f"not an ELF file ({len(data)} bytes{', no ELF magic' if len(data) >= 4 else ''})"
    if data[4] != 2 or data[5] != 1:
        return "not a 64-bit little-endian ELF"
    (e_machine,) = struct.unpack_from("<H", data, 18)
    if e_machine != machine:
        return f"an ELF for machine {e_machine}, not {mname} ({machine})"
    phoff, shoff = struct.unpack_from("<QQ", data, 32)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", data, 54)
    for what, off, size, n in (("program", phoff, phentsize, phnum), ("section", shoff, shentsize, shnum)):
        if n and (size < (56 if what == "program" else 64) or off + size * n > len(data)):
            return f"truncated: its {what} header table ends at byte {off + size * n}, the file has {len(data)}"
    for i in range(shnum):
        sh_type, = struct.unpack_from("<I", data, shoff + i * shentsize + 4)
        sh_offset, sh_size = struct.unpack_from("<QQ", data, shoff + i * shentsize + 24)
        if sh_type != _SHT_NOBITS and sh_offset + sh_size > len(data):
            return f"truncated: section {i} ends at byte {sh_offset + sh_size}, the file has {len(data)}"
    if not shnum:
        return "an ELF without sections"
    if name.encode() + b"\0" not in data:
        return f"its symbols do not name the kernel '{name}'"
    return None


def image_problem(data: bytes, ext: str, name: str) -> Optional[str]:
    """Why data is not a whole image of kernel `name` in the format of a file of Triton's ending in .ext; None if
    it is one."""
    if not data:
        return "empty"
    if ext in _ELF_MACHINE:
        return _elf_problem(data, ext, name)
    if ext == "ptx":
        try:
            text = data.rstrip(b"\0").decode("ascii")
        except UnicodeDecodeError:
            return "not PTX: it is not text"
        if "\0" in text:
            return "not PTX: it holds NUL bytes"
        for directive in (".version", ".target"):
            if not re.search(rf"^\s*{re.escape(directive)}\s", text, re.M):
                return f"not PTX: no {directive} directive"
        if not re.search(rf"\.entry\s+{re.escape(name)}\s*\(", text):
            return f"no .entry of the kernel '{name}' (truncated, or another kernel's)"
        if text.count("{") != text.count("}"):
            return "truncated: its braces do not balance"
        return None
    if ext == "spv":
        if len(data) < 20 or len(data) % 4 or struct.unpack_from("<I", data)[0] != 0x07230203:
            return "not SPIR-V (no magic, or not whole 32-bit words)"
        return None
    return None


def metadata(path: str, name: str) -> tuple[str, dict[str, Any]]:
    """The text and object of Triton's metadata file for kernel `name`; Damaged naming path when it is not one."""
    try:
        data = _cache.read_regular(path, _META_MAX)
    except OSError as e:
        raise Damaged(path, f"cannot be read: {e.strerror or e}") from None
    if not data.strip():
        raise Damaged(path, "is empty")
    try:
        text = data.decode("utf-8")
        meta = json.loads(text)
    except ValueError as e:   # UnicodeDecodeError, JSONDecodeError
        raise Damaged(path, f"is not JSON ({e})") from None
    if not isinstance(meta, dict):
        raise Damaged(path, f"is not a JSON object (a {type(meta).__name__})")
    target = meta.get("target")
    missing = [k for k in ("name", "target") if k not in meta]
    if missing:
        raise Damaged(path, f"lacks {' and '.join(repr(k) for k in missing)}")
    if not isinstance(target, dict) or not {"backend", "arch", "warp_size"} <= set(target):
        raise Damaged(path, "its 'target' is not {backend, arch, warp_size}")
    if meta["name"] != name:
        raise Damaged(path, f"names the kernel {meta['name']!r}, not {name!r}")
    return text, meta


def take(group: dict[str, str], name: str, exts: Sequence[str]) -> tuple[str, dict[str, Any], list[tuple[str, bytes]]]:
    """From a compilation's files (Triton's metadata_group): its metadata text and object, and its images as
    (ext, bytes) in the order of exts; Damaged naming the first file that is not what it should be."""
    json_path = next((p for n, p in group.items() if n.endswith(".json") and not n.startswith("__grp")), None)
    if json_path is None:
        raise Damaged(str(sorted(group)), "no metadata file (<name>.json) among the compilation's files")
    text, meta = metadata(json_path, name)
    images = []
    for ext in exts:
        path = group.get(f"{name}.{ext}")
        if path is None:
            continue
        try:
            data = _cache.read_regular(path, _FILE_MAX)
        except OSError as e:
            raise Damaged(path, f"cannot be read: {e.strerror or e}") from None
        why = image_problem(data, ext, name)
        if why:
            raise Damaged(path, why)
        images.append((ext, data))
    return text, meta, images


# ------------------------------------------------------------- before Triton

def _entry_dir(src: Any, target: Any, options: dict[str, Any]) -> Optional[str]:
    """The directory of Triton's cache entry that triton.compile(src, target, options) would read, found with
    Triton's own key functions; None when Triton would not read one or its functions are not as expected."""
    try:
        from triton import knobs
        from triton._C.libtriton import get_cache_invalidating_env_vars
        from triton.compiler.compiler import make_backend
        from triton.runtime.cache import get_cache_key, get_cache_manager
        if knobs.compilation.always_compile:
            return None
        backend = make_backend(target)
        opts = backend.parse_options(dict(options or {}, **src.parse_options()))
        key = get_cache_key(src, backend, opts, env_vars=get_cache_invalidating_env_vars())
        hook = knobs.runtime.add_stages_inspection_hook
        if hook is not None:
            key += hook()[0]
        d = getattr(get_cache_manager(hashlib.sha256(key.encode("utf-8")).hexdigest()), "cache_dir", None)
    except (ImportError, AttributeError, TypeError, KeyError):   # a release or cache manager unlike 3.6-3.9's
        return None
    return d if isinstance(d, str) and d else None


def _check_group(d: str, name: str, exts: Sequence[str]) -> Optional[Damaged]:
    """The first damage in the entry of d that triton.compile would serve for kernel `name`, or None."""
    grp = os.path.join(d, f"__grp__{name[:150]}.json")
    try:
        st = os.stat(grp)
    except OSError:
        return None                                         # no entry: Triton compiles
    if not stat.S_ISREG(st.st_mode):
        return Damaged(grp, "is not a regular file")
    try:
        children = json.loads(_cache.read_regular(grp, _GROUP_MAX)).get("child_paths")
    except (OSError, ValueError, AttributeError):
        return None                                         # Triton ignores an index it cannot read
    if not isinstance(children, dict) or not all(isinstance(p, str) for p in children.values()):
        return None
    if not all(os.path.exists(p) for p in children.values()):
        return None                                         # Triton's lookup misses: it compiles
    binary = {"cubin", "hsaco", "zebin", "spv"}
    for child, path in children.items():
        try:
            data = _cache.read_regular(path, _FILE_MAX)
        except OSError as e:
            return Damaged(path, f"cannot be read: {e.strerror or e}")
        ext = child.rpartition(".")[2]
        if ext not in binary:
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                return Damaged(path, "is not text")
    try:
        take(children, name, exts)
    except Damaged as e:
        return e
    return None


def _forget(d: Damaged, group_dir: str, name: str) -> None:
    """Removes the index of the entry holding d (so that Triton compiles it again and rewrites its files) and d itself
    where it is not a file Triton's rename can replace; CompileError naming what cannot be removed."""
    grp = os.path.join(group_dir, f"__grp__{name[:150]}.json")
    for path in (grp, d.path):
        if os.path.dirname(os.path.abspath(path)) != os.path.abspath(group_dir):
            continue                                        # only ever inside this entry's directory
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                os.rmdir(path)
            elif os.path.lexists(path) and (path == grp or not os.path.isfile(path) or os.path.islink(path)):
                os.unlink(path)
        except OSError as e:
            raise CompileError(f"Triton's cache file {d.path} is damaged ({d.why}) and {path} cannot be removed "
                               f"({e.strerror}): remove it, or clear Triton's cache ({group_dir})") from None


def forget_entry(path: str, name: str, why: str) -> bool:
    """Forgets the entry of Triton's cache holding path, a file of a compilation of kernel `name` that trident
    refuses for why (so that Triton compiles it again, instead of serving it again); whether it could."""
    if not os.path.isabs(path):
        return False
    try:
        _forget(Damaged(path, why), os.path.dirname(path), name)
    except CompileError:
        return False
    return True


def _warn(d: Damaged) -> None:
    warnings.warn(f"trident.jax: Triton's cache file {d.path} is damaged ({d.why}): compiling the kernel again",
                  RuntimeWarning, stacklevel=4)


def compile_checked(run: Callable[[], Any], src: Any, target: Any, options: dict[str, Any], name: str,
            exts: Sequence[str]) -> tuple[Any, str, dict[str, Any], list[tuple[str, bytes]]]:
    """run() (which calls triton.compile(src, target, options)), its metadata text and object, and its images, each
    checked: a damaged entry of Triton's cache is compiled again (a warning names the file); damage that a new
    compilation does not mend is a CompileError naming the file."""
    for attempt in range(2):
        d = _entry_dir(src, target, options)
        bad = _check_group(d, name, exts) if d else None
        if bad is not None:
            _warn(bad)
            _forget(bad, d, name)
        ck = run()
        group = {n: p for n, p in ck.metadata_group.items() if not n.startswith("__grp")}
        try:
            return (ck, *take(group, name, exts))
        except Damaged as e:
            bad = e
        entry = os.path.dirname(bad.path) if os.path.isabs(bad.path) else None
        if attempt or entry is None:
            break
        _warn(bad)
        _forget(bad, entry, name)
    raise CompileError(f"kernel '{name}': Triton's compiled file {bad.path} is damaged ({bad.why}), also after "
                       f"compiling it again")
