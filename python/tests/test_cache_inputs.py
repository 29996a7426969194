# SPDX-License-Identifier: Apache-2.0
"""The compiled-kernel and autotune caches against what a shared or damaged cache directory can hold: entries
edited anywhere (not only in the images), FIFOs and links to /dev/zero where an entry should be, directories of
another user or open to others, a failed final rename. And a bad TRIDENT_LOG in a fresh process."""
import os
import subprocess
import sys

import jax
import pytest
import triton

import trident.jax as jt
from trident.jax import cache as jt_cache
from trident.jax import compile as jt_compile

from test_jax_compile import SM90, X, call_add


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
    assert jt_cache.load_kernel(entry.stem) is None
    assert compiles_again(monkeypatch)


@pytest.mark.parametrize("kind", ["fifo", "devzero"])
def test_special_files_as_autotune_choices(fresh_cache, kind):
    p = jt_cache.choice_path("k" * 16, "sm90")
    p.parent.mkdir(parents=True)
    os.mkfifo(p) if kind == "fifo" else p.symlink_to("/dev/zero")
    assert jt_cache.load_choice("k" * 16, "sm90") is None


def test_read_regular_refuses_before_reading(tmp_path):
    os.mkfifo(tmp_path / "f")
    with pytest.raises(OSError, match="not a regular file"):
        jt_cache.read_regular(tmp_path / "f", 100)
    (tmp_path / "big").write_bytes(b"x" * 101)
    with pytest.raises(OSError, match="101 bytes, more than the 100 accepted"):
        jt_cache.read_regular(tmp_path / "big", 100)
    assert jt_cache.read_regular(tmp_path / "big", 101) == b"x" * 101


def test_cache_directories_are_private(record, fresh_cache, monkeypatch):
    fresh_cache.mkdir(mode=0o755)
    (fresh_cache / "triton").mkdir(mode=0o777)
    os.chmod(fresh_cache / "triton", 0o777)
    compile_once(fresh_cache, monkeypatch)
    assert (fresh_cache / "triton").stat().st_mode & 0o777 == 0o700


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


@pytest.mark.parametrize("value", ["garbage", "", "%s%n"])
def test_a_bad_log_level_does_not_hang_python(value):
    env = dict(os.environ, TRIDENT_LOG=value)
    r = subprocess.run([sys.executable, "-c", "import trident; print(len(trident.devices()))"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout.strip()) >= 1
    assert r.stderr.count("TRIDENT_LOG") == 1, r.stderr
