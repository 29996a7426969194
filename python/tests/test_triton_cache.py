# SPDX-License-Identifier: Apache-2.0
"""What trident takes from Triton's own cache: a damaged entry there (a truncated or garbage cubin or PTX, an empty,
garbage or another kernel's metadata file, a FIFO, a link to /dev/zero or a directory where a file should be) is
compiled again with a warning naming the file, never kept in trident's cache, never a hang or a bare
JSONDecodeError; damage a new compilation does not mend is a CompileError naming the file."""
import os
import signal
from pathlib import Path

import jax
import pytest

import trident
import trident.jax as jt
from trident.jax import compile as jt_compile
from trident.jax import triton_cache

from test_jax_compile import SM90, X, call_add


@pytest.fixture
def triton_dir(tmp_path, monkeypatch, fresh_cache):
    """Triton's cache, empty for the test, after one compilation of add_kernel for sm90 through trident."""
    d = tmp_path / "triton-cache"
    monkeypatch.setenv("TRITON_CACHE_DIR", str(d))
    return d


def first_compile(record, triton_dir):
    with jt.targets(SM90):
        call_add(X, X)
    (meta,) = triton_dir.glob("*/add_kernel.json")
    return record[-1].kernel, meta.parent


def again(record, fresh_cache, monkeypatch):
    """add_kernel lowered again with trident's caches (memory and disk) empty: it comes from Triton's cache."""
    for e in (fresh_cache / "triton").iterdir():
        e.unlink()
    monkeypatch.setattr(jt_compile, "_compiled", jt_compile.LRU(8))
    jax.clear_caches()
    with jt.targets(SM90):
        call_add(X, X)
    return record[-1].kernel


def images(kernel):
    return {t.format: t.image for t in kernel.targets}


def kept_images(fresh_cache):
    """The images of the kernel in trident's disk cache."""
    (entry,) = (fresh_cache / "triton").iterdir()
    kept = jt_compile._cache.load_kernel(entry.stem, {})
    return images(trident.Kernel(kept[0]))


def damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    path.unlink()
    if how == "truncated":
        path.write_bytes(data[:len(data) // 2])
    elif how == "garbage":
        path.write_bytes(bytes((i * 151 + 7) % 256 for i in range(len(data))))
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "fifo":
        os.mkfifo(path)
    elif how == "devzero":
        path.symlink_to("/dev/zero")
    elif how == "directory":
        path.mkdir()
    elif how == "other":
        path.write_bytes(data.replace(b'"name": "add_kernel"', b'"name": "mul_kernel"'))
    else:
        raise AssertionError(how)


def within(seconds, fn):
    """fn(), which must end within seconds (a FIFO would block it forever): an alarm interrupts it (on this thread:
    Triton parses sources, which CPython 3.11 cannot do on two threads)."""
    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s (blocked on a special file?)")
    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        return fn()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


CASES = [("cubin", "truncated"), ("cubin", "garbage"), ("cubin", "empty"), ("cubin", "fifo"), ("cubin", "devzero"),
         ("cubin", "directory"), ("ptx", "truncated"), ("ptx", "garbage"), ("ptx", "fifo"), ("json", "empty"),
         ("json", "garbage"), ("json", "truncated"), ("json", "other"), ("json", "fifo"), ("ttir", "devzero")]


@pytest.mark.parametrize("ext,how", CASES, ids=[f"{e}-{h}" for e, h in CASES])
def test_a_damaged_file_in_tritons_cache_is_compiled_again(record, fresh_cache, triton_dir, monkeypatch, ext, how):
    good, entry = first_compile(record, triton_dir)
    bad = entry / f"add_kernel.{ext}"
    damage(bad, how)
    with pytest.warns(RuntimeWarning, match=f"Triton's cache file {bad} is damaged"):
        k = within(120, lambda: again(record, fresh_cache, monkeypatch))
    assert images(k) == images(good)
    assert kept_images(fresh_cache) == images(good)
    assert bad.is_file() and not bad.is_symlink()   # Triton wrote it again


@pytest.mark.parametrize("how", ["truncated", "garbage"])
def test_damage_found_after_triton_compiled_again(record, fresh_cache, triton_dir, monkeypatch, how):
    """Where trident cannot find Triton's entry before asking (another release's key functions), the images
    Triton returns are checked all the same: the entry is forgotten and compiled again."""
    good, entry = first_compile(record, triton_dir)
    damage(entry / "add_kernel.cubin", how)
    monkeypatch.setattr(triton_cache, "_entry_dir", lambda *a: None)
    with pytest.warns(RuntimeWarning, match=f"Triton's cache file {entry / 'add_kernel.cubin'} is damaged"):
        k = again(record, fresh_cache, monkeypatch)
    assert images(k) == images(good) and kept_images(fresh_cache) == images(good)


def test_damage_a_compilation_does_not_mend_is_an_error_naming_the_file(record, fresh_cache, triton_dir,
                                                                       monkeypatch):
    first_compile(record, triton_dir)
    real = triton_cache.image_problem
    monkeypatch.setattr(triton_cache, "image_problem",
                        lambda data, ext, name: "planted by the test" if ext == "ptx" else real(data, ext, name))
    with pytest.raises(jt_compile.CompileError, match=r"Triton's compiled file \S+/add_kernel.ptx is damaged \(planted by "
                                              r"the test\), also after compiling it again"):
        with pytest.warns(RuntimeWarning, match="add_kernel.ptx is damaged"):
            again(record, fresh_cache, monkeypatch)
    assert list((fresh_cache / "triton").iterdir()) == []


def test_metadata_errors_name_the_file(tmp_path):
    p = tmp_path / "k.json"
    for text, why in [("", "is empty"), ("{", "is not JSON"), ("[1]", "is not a JSON object"),
                      ('{"name": "k"}', "lacks 'target'"), ('{"name": "j", "target": {"backend": "cuda", "arch": 90, '
                                                            '"warp_size": 32}}', "names the kernel 'j', not 'k'")]:
        p.write_text(text)
        with pytest.raises(triton_cache.Damaged, match=why) as e:
            triton_cache.metadata(str(p), "k")
        assert e.value.path == str(p) and str(p) in str(e.value)


def test_image_checks():
    ptx = b".version 8.4\n.target sm_90a\n.visible .entry k(\n.param .u64 p\n)\n{\nret;\n}\n"
    assert triton_cache.image_problem(ptx, "ptx", "k") is None
    assert "braces" in triton_cache.image_problem(ptx[:-3], "ptx", "k")
    assert "no .entry of the kernel 'j'" in triton_cache.image_problem(ptx, "ptx", "j")
    assert "no .target" in triton_cache.image_problem(ptx.replace(b".target", b".tarjet"), "ptx", "k")
    assert triton_cache.image_problem(b"\x03\x02\x23\x07" + bytes(16), "spv", "k") is None
    assert "not SPIR-V" in triton_cache.image_problem(b"\x03\x02\x23\x07" + bytes(17), "spv", "k")
    assert "not an ELF" in triton_cache.image_problem(b"\x7fELF", "hsaco", "k")
    assert triton_cache.image_problem(b"", "cubin", "k") == "empty"


@pytest.mark.parametrize("backend,variant,ext", [("cuda", "add_fp32", "cubin"), ("cuda", "add_fp32", "ptx"),
                                                 ("hip", "add_fp16", "hsaco")])
def test_image_checks_agree_with_libtrident(tmp_path, backend, variant, ext):
    """image_problem and libtrident's reader of Triton cache entries (core/image.c: trd_image_check) apply one rule:
    each damaged copy of a fixture's image is refused by both, naming the file, and the intact one by neither."""
    from conftest import SRC
    src = SRC / "tests" / "fixtures" / "triton" / backend / variant
    data = (src / f"add_kernel.{ext}").read_bytes()
    variants = {"intact": data, "truncated": data[:len(data) // 2], "three quarters": data[:len(data) * 3 // 4],
                "another kernel's": data.replace(b"add_kernel", b"bdd_kernel"), "empty": b"",
                "garbage": bytes((i * 151 + 7) % 256 for i in range(len(data)))}
    for how, image in variants.items():
        d = tmp_path / how.replace(" ", "_").replace("'", "")
        d.mkdir()
        (d / "add_kernel.json").write_bytes((src / "add_kernel.json").read_bytes())
        (d / f"add_kernel.{ext}").write_bytes(image)
        py = triton_cache.image_problem(image, ext, "add_kernel")
        try:
            trident.Kernel(str(d), signature="x_ptr:*fp32,y_ptr:*fp32,out_ptr:*fp32,n_elements:i32")
            c = None
        except trident.TridentError as e:
            c = str(e)
        assert (py is None) == (c is None), f"{how} {ext}: Python says {py!r}, libtrident {c!r}"
        assert (how == "intact") == (py is None), f"{how} {ext}: {py!r}"
        assert c is None or f"add_kernel.{ext}" in c, c
