# SPDX-License-Identifier: Apache-2.0
"""The compiled-kernel and autotune caches against what a shared or damaged cache directory can hold: entries
edited anywhere (not only in the images), entries swapped or planted (another kernel's under a name, another
user's, open to others, links), FIFOs and links to /dev/zero where an entry should be, directories of another user
or open to others, a failed final rename. And a bad TRIDENT_LOG in a fresh process."""
import hashlib
import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import triton
import triton.language as tl

import trident.jax as jt
from trident.jax import cache as jt_cache
from trident.jax import compile as jt_compile

from test_jax_compile import SM90, X, add_kernel, call_add

OTHER_UID = 4242   # a user that is not this process's (the suite may run as root)


@triton.jit
def sub_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    """add_kernel's signature, another result."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) - tl.load(y_ptr + offs, mask=mask), mask=mask)


def call(kernel, x, y):
    return jt.triton_call(x, y, kernel=kernel, out_shape=x, grid=(4,), n_elements=x.size, BLOCK=256)


def swap_add_and_sub(cache, monkeypatch):
    """Swaps the entries of add_kernel and sub_kernel (told apart by what they hold) and forgets the kernels in
    memory; their paths and bytes as written."""
    by_name = {("sub_kernel" if b"sub_kernel" in e.read_bytes() else "add_kernel"): e for e in entries(cache)}
    a, b = by_name["add_kernel"], by_name["sub_kernel"]
    da, db = a.read_bytes(), b.read_bytes()
    a.write_bytes(db)
    b.write_bytes(da)
    monkeypatch.setattr(jt_compile, "_compiled", jt_compile.LRU(8))
    jax.clear_caches()
    return a, b, da, db


def entries(cache):
    return sorted((cache / "triton").iterdir())


def compile_once(cache, monkeypatch):
    with jt.targets(SM90):
        call_add(X, X)
    (entry,) = entries(cache)
    monkeypatch.setattr(jt_compile, "_compiled", jt_compile.LRU(8))
    jax.clear_caches()   # the next eager call is lowered (and so compiled) again
    return entry


def compiles_again(monkeypatch):
    calls = []
    real = triton.compile
    monkeypatch.setattr(triton, "compile", lambda *a, **k: calls.append(1) or real(*a, **k))
    with jt.targets(SM90):
        call_add(X, X)
    return bool(calls)


def test_an_edited_manifest_is_compiled_again(record, fresh_cache, monkeypatch):
    entry = compile_once(fresh_cache, monkeypatch)
    data = entry.read_bytes()
    assert b'"num_warps": 4' in data or b'"num_warps":4' in data
    # the bundle's own digests cover its images only: change the manifest, keep the images
    edited = data.replace(b'"num_warps": 4', b'"num_warps": 8', 1).replace(b'"num_warps":4', b'"num_warps":8', 1)
    assert edited != data
    entry.write_bytes(edited)
    assert compiles_again(monkeypatch)
    assert record[-1].kernel.targets[0].metadata["num_warps"] == 4
    assert entry.read_bytes() == data     # the entry was written again, whole


def test_an_intact_entry_is_reused(record, fresh_cache, monkeypatch):
    compile_once(fresh_cache, monkeypatch)
    assert not compiles_again(monkeypatch)


@pytest.mark.parametrize("kind", ["fifo", "devzero", "directory"])
def test_special_files_as_entries_never_block(record, fresh_cache, monkeypatch, kind):
    entry = compile_once(fresh_cache, monkeypatch)
    entry.unlink()
    if kind == "fifo":
        os.mkfifo(entry)
    elif kind == "devzero":
        entry.symlink_to("/dev/zero")
    else:
        entry.mkdir()
    assert jt_cache.load_kernel(entry.stem, {}) is None
    assert compiles_again(monkeypatch)


@pytest.mark.parametrize("kind", ["fifo", "devzero"])
def test_special_files_as_autotune_choices(fresh_cache, kind):
    p = jt_cache.choice_path("kern", "k" * 16, "sm90")
    p.parent.mkdir(parents=True)
    os.mkfifo(p) if kind == "fifo" else p.symlink_to("/dev/zero")
    assert jt_cache.load_choice("kern", "k" * 16, "sm90") is None


def test_read_regular_refuses_before_reading(tmp_path):
    os.mkfifo(tmp_path / "f")
    with pytest.raises(OSError, match="not a regular file"):
        jt_cache.read_regular(tmp_path / "f", 100)
    (tmp_path / "big").write_bytes(b"x" * 101)
    with pytest.raises(OSError, match="101 bytes, more than the 100 accepted"):
        jt_cache.read_regular(tmp_path / "big", 100)
    assert jt_cache.read_regular(tmp_path / "big", 101) == b"x" * 101


def test_new_cache_directories_are_private(record, fresh_cache, monkeypatch):
    old = os.umask(0o022)     # what mkdir(parents=True) would have made 0755
    try:
        compile_once(fresh_cache, monkeypatch)
    finally:
        os.umask(old)
    for d in (fresh_cache, fresh_cache / "triton"):
        assert d.stat().st_mode & 0o777 == 0o700, d
    (entry,) = entries(fresh_cache)
    assert entry.stat().st_mode & 0o777 == 0o600


def test_cache_directories_are_made_private(record, fresh_cache, monkeypatch):
    fresh_cache.mkdir(mode=0o755)
    (fresh_cache / "triton").mkdir(mode=0o755)
    os.chmod(fresh_cache / "triton", 0o755)      # readable by others: this user's, so made private and used
    compile_once(fresh_cache, monkeypatch)
    assert (fresh_cache / "triton").stat().st_mode & 0o777 == 0o700
    assert not compiles_again(monkeypatch)


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o702])
def test_a_directory_others_may_write_is_not_used(record, fresh_cache, monkeypatch, mode):
    """Anyone who may write the directory may have planted its entries: neither read nor written."""
    compile_once(fresh_cache, monkeypatch)
    os.chmod(fresh_cache / "triton", mode)
    with pytest.warns(RuntimeWarning, match=f"triton is writable by group or others \\(mode 0{mode:o}\\)"):
        assert compiles_again(monkeypatch)
    assert (fresh_cache / "triton").stat().st_mode & 0o777 == mode


def test_a_directory_of_another_user_is_not_used(record, fresh_cache, monkeypatch):
    real_stat = os.stat
    target = str(fresh_cache / "triton")

    class Foreign:
        def __init__(self, st):
            self._st = st

        def __getattr__(self, name):
            return os.getuid() + 1 if name == "st_uid" else getattr(self._st, name)

    monkeypatch.setattr(jt_cache.os, "stat",
                        lambda p, *a, **k: Foreign(real_stat(p, *a, **k)) if str(p) == target else real_stat(p, *a, **k))
    with pytest.warns(RuntimeWarning, match="belongs to another user"):
        with jt.targets(SM90):
            call_add(X, X)
    assert entries(fresh_cache) == []


def test_a_failed_rename_leaves_no_temporary(record, fresh_cache, monkeypatch):
    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(jt_cache.os, "replace", fail)
    with jt.targets(SM90):
        call_add(X, X)
    assert entries(fresh_cache) == []


def test_swapped_entries_are_compiled_again(record, fresh_cache, monkeypatch):
    """Two kernels of one signature, their entries swapped on disk: each call gets its own kernel again (a warning
    names the entry), never the other's; and the entries are written back right."""
    with jt.targets(SM90):
        call(add_kernel, X, X)
        call(sub_kernel, X, X)
    add_k, sub_k = record[0].kernel, record[1].kernel
    a, b, da, db = swap_add_and_sub(fresh_cache, monkeypatch)
    with pytest.warns(RuntimeWarning, match=r"ignoring cache entry .*: it holds another kernel than its name says"):
        with jt.targets(SM90):
            call(add_kernel, X, X)
            call(sub_kernel, X, X)
    assert [c.kernel.name for c in record[2:]] == ["add_kernel", "sub_kernel"]
    assert record[2].kernel.bundle() == add_k.bundle() and record[3].kernel.bundle() == sub_k.bundle()
    assert a.read_bytes() == da and b.read_bytes() == db


def test_swapped_entries_on_the_gpu_compute_their_own_results(fresh_cache, gpu, monkeypatch):
    """The same on a GPU, every element checked: the add's entry holding the sub's kernel must not subtract."""
    rng = np.random.default_rng(7)
    x, y = (jnp.asarray(rng.standard_normal(1024, dtype=np.float32)) for _ in range(2))
    want = {add_kernel: np.asarray(x) + np.asarray(y), sub_kernel: np.asarray(x) - np.asarray(y)}
    for k in want:
        np.testing.assert_array_equal(np.asarray(call(k, x, y)), want[k])
    swap_add_and_sub(fresh_cache, monkeypatch)
    for k in want:
        np.testing.assert_array_equal(np.asarray(call(k, x, y)), want[k])


def test_an_entry_under_another_key_is_not_used(record, fresh_cache, monkeypatch):
    """An entry copied to the name of another specialization of the same kernel (BLOCK 256's under BLOCK 128's
    key): the key it holds differs, so it is compiled again."""
    with jt.targets(SM90):
        call_add(X, X, BLOCK=128)
        (small,) = entries(fresh_cache)
        call_add(X, X, BLOCK=256)
    (entry,) = [e for e in entries(fresh_cache) if e != small]
    small.write_bytes(entry.read_bytes())
    monkeypatch.setattr(jt_compile, "_compiled", jt_compile.LRU(8))
    jax.clear_caches()
    with pytest.warns(RuntimeWarning, match="key differs"):
        with jt.targets(SM90):
            call_add(X, X, BLOCK=128)
    assert record[-1].kernel.bundle() == record[0].kernel.bundle()


@pytest.mark.parametrize("plant", ["owner", "group-writable", "world-writable", "symlink"])
def test_a_planted_entry_is_ignored(record, fresh_cache, monkeypatch, plant):
    """An entry another user could have written (theirs, writable by group or others, or a link to a file of
    this user's) is not read: a warning names it, the kernel is compiled again and its entry written anew."""
    entry = compile_once(fresh_cache, monkeypatch)
    if plant == "owner":
        os.chown(entry, OTHER_UID, -1)
        why = f"belongs to another user \\(uid {OTHER_UID}\\)"
    elif plant == "symlink":
        kept = fresh_cache / "kept.trdb"
        entry.rename(kept)
        entry.symlink_to(kept)
        why = "is a symbolic link"
    else:
        mode = 0o664 if plant == "group-writable" else 0o646
        os.chmod(entry, mode)
        why = f"is writable by group or others \\(mode 0{mode:o}\\)"
    with pytest.warns(RuntimeWarning, match=f"ignoring cache entry '{entry}' {why}"):
        assert compiles_again(monkeypatch)
    st = os.lstat(entry)
    assert st.st_uid == os.geteuid() and st.st_mode & 0o777 == 0o600   # written again, whole and private


def test_an_autotune_choice_names_its_key_and_arch(fresh_cache):
    p = jt_cache.choice_path("kern", "k" * 16, "sm90")
    assert p.parent.name == "tune" and p.name.startswith("kern-") and p.name.endswith("-sm90.json")
    p.parent.mkdir(parents=True, mode=0o700)
    rec = {"format": "trident-tune", "key_sha256": hashlib.sha256(b"k" * 16).hexdigest(), "arch": "sm90",
           "variants": 2, "choice": 1}
    p.write_text(json.dumps(rec))
    os.chmod(p, 0o600)
    assert jt_cache.load_choice("kern", "k" * 16, "sm90") == rec
    p.write_text(json.dumps(dict(rec, arch="sm80")))       # another arch's file under this name
    with pytest.warns(RuntimeWarning, match=f"made for key sha256 '{rec['key_sha256']}', arch 'sm80'"):
        assert jt_cache.load_choice("kern", "k" * 16, "sm90") is None
    p.write_text(json.dumps(rec))
    os.chown(p, OTHER_UID, -1)
    with pytest.warns(RuntimeWarning, match="belongs to another user"):
        assert jt_cache.load_choice("kern", "k" * 16, "sm90") is None


def test_a_choice_file_is_named_as_libtrident_names_it(fresh_cache):
    """core/tune.c names the file byte by byte: each byte of a non-ASCII character (a Python identifier may hold
    one) is '_', the kernel's name is cut at 64 bytes and the arch at 100, a leading '.' is '_', an empty arch is
    'unknown'."""
    digest = hashlib.sha256(b"k").hexdigest()
    assert jt_cache.choice_path("n\u00facleo", "k", "").name == f"n__cleo-{digest}-unknown.json"
    assert jt_cache.choice_path(".k" + "\u00e9" * 40, "k", "gfx942:sramecc+").name == \
        f"_k{'_' * 62}-{digest}-gfx942_sramecc+.json"


@pytest.mark.parametrize("value", ["garbage", "", "%s%n"])
def test_a_bad_log_level_does_not_hang_python(value):
    env = dict(os.environ, TRIDENT_LOG=value)
    r = subprocess.run([sys.executable, "-c", "import trident; print(len(trident.devices()))"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout.strip()) >= 1
    assert r.stderr.count("TRIDENT_LOG") == 1, r.stderr
