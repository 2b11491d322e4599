#!/usr/bin/env python3
"""Benchmark hexlint's in-process Hexagon decoder against `llvm-objdump-22 -d`, side by side, ratios in one run.

Usage:
    PYTHONPATH=. python bench/bench_decode.py [LIB.so ...] [--repeat N] [--objdump PATH] [--big]

Without arguments it times the largest library among fixtures/htp-core/lib, fixtures/binary and tests/data/decoder;
--big adds a larger library built here from our own code (the C core's kernels compiled four times with growing unroll
thresholds, symbols prefixed per copy, linked into one .so in a temporary directory; needs clang-22, ld.lld-22 and
llvm-objcopy-22). Per library, each the best of --repeat interleaved runs, in wall-clock and in CPU time (CPU time is
what to trust on a loaded machine: the process's own for hexlint, the child's user+system time for llvm-objdump):
  decode     decode_packets() over the whole .text (bytes already in memory), cold: a fresh DecodeCache each run
  read+dec   reading the ELF with hexlint.elf plus a cold decode_packets(), what the audit pays before its analysis
  objdump    `llvm-objdump -d --mcpu=hexagonvNN LIB` writing its listing to /dev/null (a new process each run)
  warm       decode_packets() again through the cache the previous decode filled: what the second of several builds
             (or the new library of a baseline gate) pays when it shares most packets with the first
The ratio is objdump / read+decode: above 1 means hexlint decodes faster than llvm-objdump prints; us/word is the
cold decoder's CPU time per 32-bit word.
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
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from big_library import build_big_library  # noqa: E402

from hexlint.elf.reader import load_elf  # noqa: E402
from hexlint.hexagon.decode import DecodeCache, decode_packets  # noqa: E402

SEARCH_DIRS = ("fixtures/htp-core/lib", "fixtures/binary", "tests/data/decoder")
CORE = REPO / "fixtures" / "htp-core"


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


def cold_decode(code: bytes, address: int, cpu: int) -> object:
    return decode_packets(code, address, cpu, cache=DecodeCache())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("libraries", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--objdump", default=shutil.which("llvm-objdump-22") or shutil.which("llvm-objdump"))
    parser.add_argument("--big", action="store_true", help="also build and time a larger library from our own code")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        libraries = list(args.libraries) or largest_library()
        if args.big:
            big = build_big_library(Path(scratch))
            if big is None:
                print("--big: clang-22, ld.lld-22 or llvm-objcopy-22 missing, skipped", file=sys.stderr)
            else:
                libraries.append(big)
        report(libraries, args.repeat, args.objdump)
    return 0


def report(libraries: list[Path], repeat: int, objdump_path: str | None) -> None:
    header = ("library", ".text KB", "packets", "decode ms", "read+dec ms", "objdump ms", "ratio", "us/word", "warm ms")
    print(f"{header[0]:<28} {header[1]:>8} {header[2]:>8}   {'wall / cpu':>34}")
    print(
        f"{'':<28} {'':>8} {'':>8} {header[3]:>13} {header[4]:>13} {header[5]:>13} {header[6]:>11} {header[7]:>8}"
        f" {header[8]:>13}"
    )
    for library in libraries:
        code, address, cpu = read_text(library)
        packets = len(cold_decode(code, address, cpu))
        decode: list[Timing] = []
        read_decode: list[Timing] = []
        objdump: list[Timing] = []
        warm: list[Timing] = []
        command = [objdump_path, "-d", f"--mcpu=hexagonv{cpu:x}", str(library)] if objdump_path else []
        for _ in range(repeat):  # interleaved, so a burst of load elsewhere hits all four alike
            decode.append(timed_in_process(lambda c=code, a=address, v=cpu: cold_decode(c, a, v)))
            read_decode.append(timed_in_process(lambda path=library: cold_decode(*read_text(path))))
            if command:
                objdump.append(timed_child(command))
            cache = DecodeCache()
            decode_packets(code, address, cpu, cache=cache)
            warm.append(timed_in_process(lambda c=code, a=address, v=cpu, k=cache: decode_packets(c, a, v, cache=k)))
        ours, both = best(decode), best(read_decode)
        cells = [f"{ours.wall * 1e3:6.1f}/{ours.cpu * 1e3:<6.1f}", f"{both.wall * 1e3:6.1f}/{both.cpu * 1e3:<6.1f}"]
        if objdump:
            theirs = best(objdump)
            cells.append(f"{theirs.wall * 1e3:6.1f}/{theirs.cpu * 1e3:<6.1f}")
            cells.append(f"{theirs.wall / both.wall:5.2f}/{theirs.cpu / both.cpu:<5.2f}")
        else:
            cells += ["n/a", "n/a"]
        cells.append(f"{ours.cpu * 1e6 / max(1, len(code) // 4):.2f}")  # decode CPU time per 32-bit word
        again = best(warm)
        cells.append(f"{again.wall * 1e3:6.1f}/{again.cpu * 1e3:<6.1f}")
        print(f"{library.name:<28} {len(code) / 1024:8.1f} {packets:8d} " + " ".join(f"{c:>13}" for c in cells))


if __name__ == "__main__":
    sys.exit(main())
