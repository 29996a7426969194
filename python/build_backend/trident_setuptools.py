# SPDX-License-Identifier: Apache-2.0
"""setuptools' commands for trident's wheel (pyproject.toml's [tool.setuptools] cmdclass): build works in
build-wheel/setuptools (build/ is scripts/setup.sh's autotools tree); build_py adds the native part
(trident_backend.build_native) beside the package; bdist_wheel tags the wheel py3-none-<platform>: it holds
native code but no extension module (the package is ctypes), so any CPython 3 on the platform runs it."""
from __future__ import annotations

import shutil
from pathlib import Path

from setuptools.command.bdist_wheel import bdist_wheel as _bdist_wheel, get_platform
from setuptools.command.build import build as _build
from setuptools.command.build_py import build_py as _build_py

import trident_backend


class Build(_build):
    def initialize_options(self):
        super().initialize_options()
        self.build_base = str(trident_backend.WORK / "setuptools")


class BuildPy(_build_py):
    def run(self):
        shutil.rmtree(Path(self.build_lib, "trident"), ignore_errors=True)   # nothing left from an earlier build
        super().run()
        if not self.editable_mode:
            trident_backend.build_native(Path(self.build_lib, "trident", "_native"))


class BdistWheel(_bdist_wheel):
    def get_tag(self):
        return "py3", "none", get_platform(self.bdist_dir).replace("-", "_").replace(".", "_")
