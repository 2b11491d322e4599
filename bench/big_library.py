"""A Hexagon library larger than the C core, built from our own code, for the binary benchmarks."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "fixtures" / "htp-core"
FLAGS = ["--target=hexagon-unknown-none-elf", "-mcpu=hexagonv73", "-mhvx", "-mhvx-length=128b", "-O3", "-fPIC"]
FLAGS += ["-ffreestanding", f"-I{CORE / 'htp'}"]


def build_big_library(directory: Path) -> Path | None:
    """The core's kernels four times over (unroll thresholds 150..1200), one prefixed copy each, in one .so;
    None when clang-22, ld.lld-22 or llvm-objcopy-22 is missing."""
    clang, lld, objcopy = (shutil.which(tool) for tool in ("clang-22", "ld.lld-22", "llvm-objcopy-22"))
    if not (clang and lld and objcopy):
        return None
    objects = []
    for copy, threshold in enumerate((150, 300, 600, 1200)):
        for source in sorted((CORE / "htp").glob("*.c")):
            target = directory / f"c{copy}-{source.stem}.o"
            unroll = ["-mllvm", f"-unroll-threshold={threshold}"]
            subprocess.run([clang, *FLAGS, *unroll, "-c", str(source), "-o", str(target)], check=True)
            subprocess.run([objcopy, f"--prefix-symbols=c{copy}_", str(target)], check=True)
            objects.append(str(target))
    library = directory / "libbig-v73.so"
    subprocess.run([lld, "-shared", "--build-id=none", "-o", str(library), *objects], check=True)
    return library
