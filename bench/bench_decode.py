#!/usr/bin/env python3
"""Benchmark hexlint's in-process Hexagon decoder against `llvm-objdump-22 -d`, side by side, ratios in one run.

Usage:
    PYTHONPATH=. python bench/bench_decode.py [LIB.so ...] [--repeat N] [--objdump PATH]

Without arguments it times the largest library among fixtures/htp-core/lib, fixtures/binary and tests/data/decoder.
Per library, each the best of --repeat interleaved runs, in wall-clock and in CPU time (CPU time is what to trust on a
loaded machine: the process's own for hexlint, the child's user+system time for llvm-objdump):
  decode     decode_packets() over the whole .text (bytes already in memory)
  read+dec   reading the ELF with hexlint.elf plus decode_packets(), what the audit pays before its own analysis
  objdump    `llvm-objdump -d --mcpu=hexagonvNN LIB` writing its listing to /dev/null (a new process each run)
The ratio is objdump / read+decode: above 1 means hexlint decodes faster than llvm-objdump prints; us/word is the
decoder's CPU time per 32-bit word.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hexlint.elf.reader import load_elf  # noqa: E402
from hexlint.hexagon.decode import decode_packets  # noqa: E402

SEARCH_DIRS = ("fixtures/htp-core/lib", "fixtures/binary", "tests/data/decoder")


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float


def timed_in_process(action: Callable[[], object]) -> Timing:
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return Timing(time.perf_counter() - wall, time.process_time() - cpu)


def timed_child(command: list[str]) -> Timing:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, check=True)
    elapsed = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return Timing(elapsed, cpu)


def best(timings: list[Timing]) -> Timing:
    return Timing(min(t.wall for t in timings), min(t.cpu for t in timings))


def read_text(path: Path) -> tuple[bytes, int, int]:
    """(.text bytes, address, cpu) through hexlint.elf, as the audit reads it."""
    image = load_elf(path)
    for section in image.code_sections:
        if section.name == ".text":
            return section.data, section.address, image.cpu
    raise SystemExit(f"{path}: no .text section")


def largest_library() -> list[Path]:
    candidates = [path for folder in SEARCH_DIRS for path in (REPO / folder).glob("**/*.so")]
    if not candidates:
        raise SystemExit("no .so found; pass libraries on the command line")
    return [max(candidates, key=lambda path: len(read_text(path)[0]))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("libraries", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--objdump", default=shutil.which("llvm-objdump-22") or shutil.which("llvm-objdump"))
    args = parser.parse_args(argv)
    libraries = args.libraries or largest_library()
    header = ("library", ".text KB", "packets", "decode ms", "read+dec ms", "objdump ms", "ratio", "us/word")
    print(f"{header[0]:<28} {header[1]:>8} {header[2]:>8}   {'wall / cpu':>34}")
    print(f"{'':<28} {'':>8} {'':>8} {header[3]:>13} {header[4]:>13} {header[5]:>13} {header[6]:>11} {header[7]:>8}")
    for library in libraries:
        code, address, cpu = read_text(library)
        packets = len(decode_packets(code, address, cpu))
        decode: list[Timing] = []
        read_decode: list[Timing] = []
        objdump: list[Timing] = []
        command = [args.objdump, "-d", f"--mcpu=hexagonv{cpu:x}", str(library)] if args.objdump else []
        for _ in range(args.repeat):  # interleaved, so a burst of load elsewhere hits all three alike
            decode.append(timed_in_process(lambda c=code, a=address, v=cpu: decode_packets(c, a, v)))
            read_decode.append(timed_in_process(lambda path=library: decode_packets(*read_text(path))))
            if command:
                objdump.append(timed_child(command))
        ours, both = best(decode), best(read_decode)
        cells = [f"{ours.wall * 1e3:6.1f}/{ours.cpu * 1e3:<6.1f}", f"{both.wall * 1e3:6.1f}/{both.cpu * 1e3:<6.1f}"]
        if objdump:
            theirs = best(objdump)
            cells.append(f"{theirs.wall * 1e3:6.1f}/{theirs.cpu * 1e3:<6.1f}")
            cells.append(f"{theirs.wall / both.wall:5.2f}/{theirs.cpu / both.cpu:<5.2f}")
        else:
            cells += ["n/a", "n/a"]
        cells.append(f"{ours.cpu * 1e6 / max(1, len(code) // 4):.2f}")  # decode CPU time per 32-bit word
        print(f"{library.name:<28} {len(code) / 1024:8.1f} {packets:8d} " + " ".join(f"{c:>13}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
