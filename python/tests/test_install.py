# SPDX-License-Identifier: Apache-2.0
"""The package and what it loads are one installation: trident's version is the package's, the jax module's and
libtrident's; where the suite runs over an installed wheel (TRD_INSTALLED_IN, scripts/test-wheel.sh), the
package, libtrident, libtrident_xla, the driver modules and the `trident` command all come from inside it."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import trident
import trident.jax
from trident import _lib

INSTALLED_IN = os.environ.get("TRD_INSTALLED_IN")


def test_versions_are_trident_s():
    assert trident.__version__ == trident.version()
    assert trident.jax.__version__ == trident.__version__
    assert trident.jax.JAX_TRITON_API_VERSION == ".".join(map(str, trident.jax.JAX_TRITON_API_VERSION_INFO))


def _inside(path: str, root: str) -> bool:
    return Path(path).resolve().is_relative_to(Path(root).resolve())


@pytest.mark.skipif(not INSTALLED_IN, reason="the suite runs over the checkout (TRD_INSTALLED_IN is unset)")
def test_everything_comes_from_the_installation():
    assert not any(k.startswith("TRIDENT_") and k not in ("TRIDENT_CACHE_DIR",) for k in os.environ), os.environ
    assert "LD_LIBRARY_PATH" not in os.environ
    assert _inside(trident.__file__, INSTALLED_IN), trident.__file__
    assert _inside(trident.library_path(), INSTALLED_IN), trident.library_path()
    assert _inside(_lib.xla_lib().path, INSTALLED_IN), _lib.xla_lib().path
    mods = [d for d in trident.drivers() if d["path"] != "(built-in)"]
    assert mods and all(_inside(d["path"], INSTALLED_IN) for d in mods), mods
    assert {"cuda", "hip", "levelzero", "host"} <= {d["name"] for d in trident.drivers()}


@pytest.mark.skipif(not INSTALLED_IN, reason="the suite runs over the checkout (TRD_INSTALLED_IN is unset)")
def test_the_installed_command_runs_alone():
    """The console script (the venv's bin/trident) runs the bundled CLI with nothing else set, and that CLI finds
    the drivers beside its libtrident."""
    exe = shutil.which("trident", path=str(Path(INSTALLED_IN) / "bin")) or shutil.which("trident")
    assert exe and _inside(exe, INSTALLED_IN), exe
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/")}
    if "PYTHONPATH" in os.environ:   # pip install --target: the package is found only there
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    r = subprocess.run([exe, "--version"], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith(f"trident {trident.__version__} "), (r.stdout, r.stderr)
    r = subprocess.run([exe, "drivers"], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    drivers_dir = _lib.NATIVE / "trident" / "drivers"
    n = len(list(drivers_dir.glob("*.so")))
    assert n >= 3 and f"  {drivers_dir} " in r.stdout and f": {n} modules" in r.stdout, r.stdout


def test_readme_quickstart_runs_as_written(tmp_path):
    """The README's first Python block (the JAX user's path) runs as written, over this package: a triton_call
    on JAX's default platform (the CPU here, through Triton's interpreter; the GPU on the GPU machine)."""
    import sys

    from conftest import PACKAGE_ROOT, SRC
    text = (SRC / "README.md").read_text()
    start = text.index("```python\n") + len("```python\n")
    code = text[start:text.index("```", start)]
    script = tmp_path / "quickstart.py"      # Triton reads a kernel's source from its file
    script.write_text(code)
    env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT)
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "matches x + y" in r.stdout, (r.stdout, r.stderr)
