#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check-wheel.py WHEEL: the wheel scripts/build-wheel.sh made is what issue 19 asks for. Its tag is
py3-none-manylinux_*; auditwheel's policy for that tag lists every library an ELF file in it NEEDs that the
wheel does not hold itself; every such file's RUNPATH lies inside the wheel; it holds libtrident, libtrident_xla,
the driver modules beside libtrident and an executable CLI; its metadata names trident-runtime, Apache-2.0 and
the LICENSE, and the `trident` console script. Run with the tools' venv (auditwheel's policies, pyelftools)."""
from __future__ import annotations

import json
import sys
import tempfile
import zipfile
from pathlib import Path

import auditwheel
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile


def dynamic(path: Path):
    with open(path, "rb") as f:
        elf = ELFFile(f)
        needed, runpath = [], []
        for sec in elf.iter_sections():
            if isinstance(sec, DynamicSection):
                for tag in sec.iter_tags():
                    if tag.entry.d_tag == "DT_NEEDED":
                        needed.append(tag.needed)
                    elif tag.entry.d_tag in ("DT_RUNPATH", "DT_RPATH"):
                        runpath += (tag.runpath if tag.entry.d_tag == "DT_RUNPATH" else tag.rpath).split(":")
        return needed, runpath


def main(wheel: Path) -> int:
    errors = []
    parts = wheel.name[:-4].split("-")
    python, abi, plats = parts[-3], parts[-2], parts[-1].split(".")
    manylinux = [p for p in plats if p.startswith("manylinux_")]
    if (python, abi) != ("py3", "none") or not manylinux:
        errors.append(f"tag {python}-{abi}-{parts[-1]}: want py3-none-manylinux_*")
    policies = json.loads((Path(auditwheel.__file__).parent / "policy" / "manylinux-policy.json").read_text())
    arch = "_" + "_".join(parts[-1].split(".")[0].split("_")[3:])     # manylinux_2_34_x86_64: _x86_64
    names = {p[: -len(arch)] for p in manylinux if p.endswith(arch)}
    # glibc's dynamic loader, which auditwheel counts as glibc's own (its lists name the libraries beside it)
    allowed = {"ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}
    for pol in policies:
        if pol["name"] in names:
            allowed |= set(pol["lib_whitelist"])
    if manylinux and len(allowed) == 2:
        errors.append(f"auditwheel has no policy for {manylinux}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with zipfile.ZipFile(wheel) as z:
            z.extractall(root)
            modes = {i.filename: i.external_attr >> 16 for i in z.infolist()}
        elves = [p for p in root.rglob("*") if p.is_file() and p.read_bytes()[:4] == b"\x7fELF"]
        inside = {p.name for p in elves}
        for p in elves:
            rel = p.relative_to(root)
            needed, runpath = dynamic(p)
            for lib in needed:
                if lib not in inside and lib not in allowed:
                    errors.append(f"{rel} NEEDs {lib}: neither in the wheel nor on the {manylinux} list")
            for rp in runpath:
                where = (p.parent / rp.replace("$ORIGIN", ".")).resolve()
                if not where.is_relative_to(root.resolve()):
                    errors.append(f"{rel}: RUNPATH {rp} leaves the wheel")
        native = root / "trident" / "_native"
        for want in ("libtrident.so.1", "libtrident_xla.so.1", "bin/trident"):
            if not (native / want).is_file():
                errors.append(f"trident/_native/{want} is missing")
        if not modes.get("trident/_native/bin/trident", 0) & 0o111:
            errors.append("trident/_native/bin/trident is not executable")
        drivers = sorted(p.name for p in (native / "trident" / "drivers").glob("*.so"))
        for want in ("trident_cuda.so", "trident_hip.so", "trident_levelzero.so"):
            if want not in drivers:
                errors.append(f"driver module {want} is missing (have {drivers})")
        info = next(root.glob("*.dist-info"))
        meta = (info / "METADATA").read_text()
        for want in ("Name: trident-runtime", "License-Expression: Apache-2.0", "License-File: LICENSE"):
            if want not in meta.splitlines():
                errors.append(f"METADATA lacks '{want}'")
        if not list(info.rglob("LICENSE")):
            errors.append("the dist-info holds no LICENSE")
        if "trident = trident._cli:main" not in (info / "entry_points.txt").read_text():
            errors.append("no `trident` console script")
    for e in errors:
        print(f"check-wheel: {e}")
    if not errors:
        print(f"check-wheel: {wheel.name}: {len(elves)} ELF files, each NEEDED library in the wheel or on the "
              f"{manylinux[0]} list; libtrident, libtrident_xla, {len(drivers)} drivers and the CLI; metadata")
    return 1 if errors else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: check-wheel.py WHEEL")
    sys.exit(main(Path(sys.argv[1])))
