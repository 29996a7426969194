# SPDX-License-Identifier: Apache-2.0
"""The `trident` command of a wheel: its console script runs the CLI bundled in trident/_native/bin, which finds
libtrident beside it (its rpath) and the drivers beside libtrident."""
from __future__ import annotations

import os
import sys

from ._lib import NATIVE


def main() -> None:
    exe = NATIVE / "bin" / "trident"
    if not os.access(exe, os.X_OK):
        sys.stderr.write(f"trident: this installation has no bundled CLI ({exe} is missing): it comes with the "
                         "wheel (scripts/build-wheel.sh); a source build installs it with make install\n")
        sys.exit(1)
    os.execv(exe, ["trident", *sys.argv[1:]])
