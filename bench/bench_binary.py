#!/usr/bin/env python3
"""Benchmark the whole binary audit against `llvm-objdump-22 -d` alone on the same library, side by side.

Usage:
    PYTHONPATH=. python bench/bench_binary.py [--objdump PATH] [--repeat N] [--no-big] [LIB.so ...]

Libraries: the given ones, else the largest C core build (fixtures/htp-core/lib) plus a larger library built here
from our own code (the core's kernels compiled four times with growing unroll thresholds, symbols prefixed per copy
with llvm-objcopy, linked into one .so; needs clang-22, ld.lld-22 and llvm-objcopy-22, skipped otherwise).

For each library, the best of --repeat runs of:
  decode     in process: decode_packets on every code section (part of the audit, shown to locate the cost)
  audit      in process: read the ELF, decode every packet, build every CFG and its loops, follow SP/FP-derived
             registers, count spills/promotions/divisions/HVX, run the five HX2xx checks
  command    end to end, a new process: `python -m hexlint --spills --promotions --division --strict LIB`
  objdump    `llvm-objdump-22 -d --mcpu=hexagonvNN LIB` with its output discarded (what the upstream script starts from)
and the ratios objdump/audit and objdump/command (> 1: hexlint is faster), then the same audit/objdump ratio in CPU
time (process + children), which a busy machine disturbs less than wall time.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hexlint.binary.audit import audit_image  # noqa: E402
from hexlint.binary.run import binary_checks, rule_options  # noqa: E402
from hexlint.elf import load_elf  # noqa: E402
from hexlint.hexagon.decode import decode_packets  # noqa: E402

CORE = REPO / "fixtures" / "htp-core"
FLAGS = ["--target=hexagon-unknown-none-elf", "-mcpu=hexagonv73", "-mhvx", "-mhvx-length=128b", "-O3", "-fPIC"]
FLAGS += ["-ffreestanding", f"-I{CORE / 'htp'}"]


def best_of(repeat: int, action: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def cpu_best_of(repeat: int, action: Callable[[], object]) -> float:
    """Best CPU time (this process plus finished children): steadier than wall time on a shared machine."""
    times = []
    for _ in range(repeat):
        before = _cpu_seconds()
        action()
        times.append(_cpu_seconds() - before)
    return min(times)


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def whole_audit(path: Path) -> int:
    image = load_elf(path)
    audit = audit_image(image)
    options = rule_options({}, _namespace())
    found = 0
    for code, check in binary_checks().items():
        found += sum(1 for _ in check(audit, options[code]))
    return found


def _namespace():
    import argparse as _argparse

    from hexlint.binary.options import add_binary_arguments

    parser = _argparse.ArgumentParser()
    add_binary_arguments(parser)
    return parser.parse_args([])


def decode_only(path: Path) -> None:
    image = load_elf(path)
    for section in image.code_sections:
        decode_packets(section.data, section.address, image.cpu or 0x73)


def run_objdump(objdump: str, path: Path, cpu: str) -> None:
    subprocess.run([objdump, "-d", f"--mcpu={cpu}", str(path)], stdout=subprocess.DEVNULL, check=True)


def run_command(path: Path) -> None:
    command = [sys.executable, "-m", "hexlint", "--spills", "--promotions", "--division", "--strict", str(path)]
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO, check=False)


def build_big_library(directory: Path) -> Path | None:
    """The core's kernels four times over (unroll thresholds 150..1200), one prefixed copy each, in one .so."""
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("libraries", nargs="*", type=Path)
    parser.add_argument("--objdump", default=shutil.which("llvm-objdump-22"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-big", action="store_true", help="do not build the larger library")
    arguments = parser.parse_args()
    if not arguments.objdump:
        print("llvm-objdump-22 not found: nothing to compare with", file=sys.stderr)
        return 2
    libraries = list(arguments.libraries)
    with tempfile.TemporaryDirectory() as scratch:
        if not libraries:
            core = [p for p in (CORE / "lib").glob("libhtp-core-v*.so") if not p.name.endswith("-g.so")]
            libraries.append(max(core, key=lambda path: path.stat().st_size))
            if not arguments.no_big:
                big = build_big_library(Path(scratch))
                if big is not None:
                    libraries.append(big)
        print(
            f"{'library':<28} {'.text KB':>8} {'packets':>8} {'decode s':>8} {'audit s':>8} {'command s':>9}"
            f" {'objdump s':>9}"
            f" {'objdump/audit':>13} {'objdump/command':>15}"
        )
        for library in libraries:
            image = load_elf(library)
            text_kb = sum(len(section.data) for section in image.code_sections) / 1024
            packets = sum(len(f.cfg.packets) for f in audit_image(image).functions)
            decode_time = best_of(arguments.repeat, lambda library=library: decode_only(library))
            audit_time = best_of(arguments.repeat, lambda library=library: whole_audit(library))
            command_time = best_of(max(1, arguments.repeat // 2), lambda library=library: run_command(library))
            objdump_time = best_of(
                arguments.repeat,
                lambda library=library, cpu=image.cpu_name: run_objdump(arguments.objdump, library, cpu),
            )
            audit_cpu = cpu_best_of(arguments.repeat, lambda library=library: whole_audit(library))
            objdump_cpu = cpu_best_of(
                arguments.repeat,
                lambda library=library, cpu=image.cpu_name: run_objdump(arguments.objdump, library, cpu),
            )
            print(
                f"{library.name:<28} {text_kb:>8.1f} {packets:>8} {decode_time:>8.3f} {audit_time:>8.3f}"
                f" {command_time:>9.3f}"
                f" {objdump_time:>9.3f} {objdump_time / audit_time:>13.2f} {objdump_time / command_time:>15.2f}"
            )
            print(
                f"{'':<28} cpu time: audit {audit_cpu:.3f} s, objdump {objdump_cpu:.3f} s,"
                f" objdump/audit {objdump_cpu / audit_cpu:.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
