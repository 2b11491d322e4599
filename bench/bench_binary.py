#!/usr/bin/env python3
"""Benchmark the whole binary audit against `llvm-objdump-22 -d` alone on the same library, side by side.

Usage:
    PYTHONPATH=. python bench/bench_binary.py [--objdump PATH] [--rounds N] [--no-big] [--command] [LIB.so ...]
    PYTHONPATH=. python bench/bench_binary.py --cache [--rounds N] [LIB.so ...]

Libraries: the given ones, else the largest C core build (fixtures/htp-core/lib) plus a larger library built here
from our own code (the core's kernels compiled four times with growing unroll thresholds, symbols prefixed per copy
with llvm-objcopy, linked into one .so; needs clang-22, ld.lld-22 and llvm-objcopy-22, skipped otherwise).

Cold, as a CLI run of one library: the decoder's cross-call cache (hexlint.hexagon.decode.DecodeCache) starts empty
for every audit and every scan timed here, so a round never profits from the one before.

What is timed, in N alternating rounds (one of each per round, so a load spike hits every contender alike; the best
round of each is kept):
  audit        in process, from the file: read the ELF, scan every code section, decode the instructions that can
               matter, build every CFG and its loops, follow SP/FP-derived registers, count spills/promotions/
               divisions/HVX, run the five HX2xx checks (what `hexlint --spills --promotions --division --strict LIB`
               does after Python has started), warm: the process has audited the library once before
  audit, 1st   the same audit, the first one of a new Python process, timed by that process: one-time work
               included (rule modules imported, their regexes and records compiled, the heap grown)
  scan         in process: read the ELF and scan_code every code section (split into packets, flag every distinct
               word, mostly from its bit fields), the part of the audit that reads every byte
  objdump>null `llvm-objdump-22 -d --mcpu=hexagonvNN LIB` writing to /dev/null (its cheapest output)
  objdump|pipe the same writing to a pipe this script reads to the end (what a user or a script that scans the
               listing sees); its time is the objdump process's, the reader's own CPU is not counted
  command      (--command only) end to end, a new process: `python -m hexlint --spills --promotions --division
               --strict LIB`, interpreter start-up and imports included
With --cache, only end-to-end commands instead, side by side on each library (default: every
fixtures/htp-core/lib/*.so): `llvm-objdump-22 -d LIB > /dev/null` (no --mcpu, as a user types it) against
`hexlint --spills LIB` with no cache (--no-cache; `no cache -j1` in one process), the default audit with no cache
(`default`: `hexlint --no-cache LIB`, findings without the table), cold (an empty --cache-dir: the audit plus writing
its entry, one worker per core, so a large library is audited in parts side by side on the cores no other runnable
task wants at that moment), cold with --jobs 1 (one process), and warm (the entry there: nothing decoded), each a new
process, interpreter start-up and imports included. On a busy machine `cold` is `cold -j1` (no idle core: no parts),
and so are `no cache` and `default`: compare their cpu column there.
With --command and several libraries, the CI gate's own shape is timed as well: one command on all of them, with
--jobs 1 (one library after another) and --jobs 0 (one worker per core), against objdump>null on each in turn.
Both wall time and CPU time are shown: CPU time (user + system of this process for the audit, of the child for
objdump) is what a busy shared machine disturbs least. Ratios objdump/audit > 1 mean the audit is faster.
"""

from __future__ import annotations

import argparse
import os
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

from hexlint.binary.audit import audit_image  # noqa: E402
from hexlint.binary.run import binary_checks, rule_options  # noqa: E402
from hexlint.elf import load_elf  # noqa: E402
from hexlint.engine import usable_cores  # noqa: E402
from hexlint.hexagon.decode import DecodeCache, scan_code  # noqa: E402

CORE = REPO / "fixtures" / "htp-core"
PIPE_CHUNK = 1 << 16


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(action: Callable[[], object], cpu_clock: Callable[[], float]) -> Timing:
    wall, cpu = time.perf_counter(), cpu_clock()
    action()
    return Timing(time.perf_counter() - wall, cpu_clock() - cpu)


def best(timings: list[Timing]) -> Timing:
    return Timing(min(t.wall for t in timings), min(t.cpu for t in timings))


def whole_audit(path: Path) -> int:
    image = load_elf(path)
    audit = audit_image(image, cache=DecodeCache())
    options = rule_options({}, _namespace())
    found = 0
    for code, check in binary_checks().items():
        found += sum(1 for _ in check(audit, options[code]))
    return found


def _namespace() -> argparse.Namespace:
    from hexlint.binary.options import add_binary_arguments

    parser = argparse.ArgumentParser()
    add_binary_arguments(parser)
    return parser.parse_args([])


def scan_only(path: Path) -> None:
    image = load_elf(path)
    cache = DecodeCache()
    for section in image.code_sections:
        scan_code(section.data, section.address, image.cpu or 0x73, cache=cache)


def objdump_to_null(objdump: str, path: Path, cpu: str) -> None:
    subprocess.run([objdump, "-d", f"--mcpu={cpu}", str(path)], stdout=subprocess.DEVNULL, check=True)


def objdump_to_pipe(objdump: str, path: Path, cpu: str) -> int:
    """objdump writing into a pipe that is read to the end, as a user's terminal or a scanning script reads it."""
    read = 0
    with subprocess.Popen([objdump, "-d", f"--mcpu={cpu}", str(path)], stdout=subprocess.PIPE) as process:
        assert process.stdout is not None
        while chunk := process.stdout.read(PIPE_CHUNK):
            read += len(chunk)
    if process.returncode:
        raise subprocess.CalledProcessError(process.returncode, objdump)
    return read


def run_command(*paths: Path, jobs: int = 1) -> None:
    command = [sys.executable, "-m", "hexlint", "--spills", "--promotions", "--division", "--strict"]
    command += ["--jobs", str(jobs), *map(str, paths)]
    # as an installed hexlint runs: from cached bytecode (PYTHONDONTWRITEBYTECODE would compile every module each run)
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    run = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO, env=environment)
    if run.returncode not in (0, 1):  # 1: findings; anything else would time a failure
        raise RuntimeError(f"{' '.join(command)}: exit {run.returncode}: {run.stderr.decode(errors='replace')}")


# The first audit of a new process, timed by that process: what a CLI run pays after start-up, one-time work included
# (rule modules imported, their regexes compiled, records compiled, the heap grown), which the warm rounds leave out.
FIRST_AUDIT = """
import resource, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from bench_binary import whole_audit
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
wall, before = time.perf_counter(), cpu()
whole_audit(Path(sys.argv[2]))
print(time.perf_counter() - wall, cpu() - before)
"""


def first_audit_in_new_process(path: Path) -> Timing:
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-c", FIRST_AUDIT, str(REPO / "bench"), str(path)]
    result = subprocess.run(command, capture_output=True, text=True, check=True, env=environment)
    wall, cpu = (float(value) for value in result.stdout.split()[-2:])
    return Timing(wall, cpu)


def measure(library: Path, objdump: str, rounds: int, command: bool) -> dict[str, Timing]:
    cpu_name = load_elf(library).cpu_name
    contenders: dict[str, tuple[Callable[[], object], Callable[[], float]]] = {
        "audit": (lambda: whole_audit(library), _own_cpu),
        "scan": (lambda: scan_only(library), _own_cpu),
        "objdump>null": (lambda: objdump_to_null(objdump, library, cpu_name), _children_cpu),
        "objdump|pipe": (lambda: objdump_to_pipe(objdump, library, cpu_name), _children_cpu),
    }
    if command:
        contenders["command"] = (lambda: run_command(library), _children_cpu)
    whole_audit(library)  # imports and first-use caches, as in a CLI run that audits several libraries
    timings: dict[str, list[Timing]] = {name: [] for name in (*contenders, "audit, 1st")}
    for _ in range(rounds):
        for name, (action, clock) in contenders.items():
            timings[name].append(timed(action, clock))
        timings["audit, 1st"].append(first_audit_in_new_process(library))
    return {name: best(values) for name, values in timings.items()}


def measure_together(libraries: list[Path], objdump: str, rounds: int) -> dict[str, Timing]:
    cpu_names = [load_elf(library).cpu_name for library in libraries]
    contenders: dict[str, Callable[[], object]] = {
        "command -j1": lambda: run_command(*libraries, jobs=1),
        f"command -j{usable_cores()}": lambda: run_command(*libraries, jobs=0),
        "objdump>null": lambda: [objdump_to_null(objdump, *pair) for pair in zip(libraries, cpu_names, strict=True)],
    }
    timings: dict[str, list[Timing]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, action in contenders.items():
            timings[name].append(timed(action, _children_cpu))
    return {name: best(values) for name, values in timings.items()}


def hexlint_command(library: Path, *options: str, table: bool = True) -> None:
    command = [sys.executable, "-m", "hexlint", *(["--spills"] if table else []), *options, str(library)]
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    environment.pop("HEXLINT_NO_CACHE", None)
    run = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO, env=environment)
    if run.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(command)}: exit {run.returncode}: {run.stderr.decode(errors='replace')}")


def measure_cache(library: Path, objdump: str, rounds: int, scratch: Path) -> dict[str, Timing]:
    """objdump -d against hexlint without a cache, cold and warm, each a new process; best of `rounds`."""
    warm_cache = scratch / f"warm-{library.name}"
    hexlint_command(library, "--cache-dir", str(warm_cache))  # the warm contender's entry

    def cold(*options: str) -> None:
        cache = Path(tempfile.mkdtemp(dir=scratch))  # empty: the run audits and writes its entry
        hexlint_command(library, "--cache-dir", str(cache), *options)
        shutil.rmtree(cache)

    contenders: dict[str, Callable[[], object]] = {
        "objdump -d": lambda: subprocess.run([objdump, "-d", str(library)], stdout=subprocess.DEVNULL, check=True),
        "no cache": lambda: hexlint_command(library, "--no-cache"),
        "no cache -j1": lambda: hexlint_command(library, "--no-cache", "--jobs", "1"),
        "default": lambda: hexlint_command(library, "--no-cache", table=False),
        "cold": cold,
        "cold -j1": lambda: cold("--jobs", "1"),
        "warm": lambda: hexlint_command(library, "--cache-dir", str(warm_cache)),
    }
    timings: dict[str, list[Timing]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, action in contenders.items():
            timings[name].append(timed(action, _children_cpu))
    return {name: best(values) for name, values in timings.items()}


def cache_main(libraries: list[Path], objdump: str, rounds: int) -> int:
    if not libraries:
        libraries = sorted((CORE / "lib").glob("*.so"))
    print(f"end to end, new processes; best of {rounds} alternating rounds, in seconds")
    print("ratio: the contender's time / objdump's (<= 1: no slower than objdump)")
    with tempfile.TemporaryDirectory() as scratch:
        for library in libraries:
            times = measure_cache(library, objdump, rounds, Path(scratch))
            print(f"{library} ({library.stat().st_size / 1024:.0f} KB)")
            print(f"  {'':<12} {'wall s':>8} {'cpu s':>8} {'wall ratio':>11} {'cpu ratio':>10}")
            base = times["objdump -d"]
            for name, timing in times.items():
                ratios = f"{timing.wall / base.wall:>11.2f} {timing.cpu / base.cpu:>10.2f}"
                print(f"  {name:<12} {timing.wall:>8.3f} {timing.cpu:>8.3f} {ratios}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("libraries", nargs="*", type=Path)
    parser.add_argument("--objdump", default=shutil.which("llvm-objdump-22"))
    parser.add_argument("--rounds", "--repeat", type=int, default=7, help="alternating rounds (best one kept)")
    parser.add_argument("--no-big", action="store_true", help="do not build the larger library")
    parser.add_argument("--command", action="store_true", help="also time the command end to end (new process)")
    parser.add_argument("--cache", action="store_true", help="objdump -d vs hexlint uncached, cold, warm (commands)")
    arguments = parser.parse_args()
    if not arguments.objdump:
        print("llvm-objdump-22 not found: nothing to compare with", file=sys.stderr)
        return 2
    if arguments.cache:
        return cache_main(list(arguments.libraries), arguments.objdump, arguments.rounds)
    libraries = list(arguments.libraries)
    with tempfile.TemporaryDirectory() as scratch:
        if not libraries:
            core = [p for p in (CORE / "lib").glob("libhtp-core-v*.so") if not p.name.endswith("-g.so")]
            libraries.append(max(core, key=lambda path: path.stat().st_size))
            if not arguments.no_big:
                big = build_big_library(Path(scratch))
                if big is not None:
                    libraries.append(big)
        print(f"best of {arguments.rounds} alternating rounds, in ms; objdump/audit > 1: the audit is faster")
        for library in libraries:
            image = load_elf(library)
            text_kb = sum(len(section.data) for section in image.code_sections) / 1024
            packets = sum(len(f.cfg.packets) for f in audit_image(image).functions)
            best_times = measure(library, arguments.objdump, arguments.rounds, arguments.command)
            print(f"{library.name}: .text {text_kb:.1f} KB, {packets} packets")
            print(f"  {'':<14} {'wall':>8} {'cpu':>8}")
            for name, timing in best_times.items():
                print(f"  {name:<14} {timing.wall * 1000:>8.1f} {timing.cpu * 1000:>8.1f}")
            for audit_name in ("audit", "audit, 1st"):
                audit = best_times[audit_name]
                for name in ("objdump>null", "objdump|pipe"):
                    other = best_times[name]
                    ratios = f"wall {other.wall / audit.wall:.2f}, cpu {other.cpu / audit.cpu:.2f}"
                    print(f"  {name}/{audit_name}: {ratios}")
            print(f"  reading and scanning alone is {best_times['scan'].cpu / audit.cpu:.0%} of the audit's cpu")
        if arguments.command and len(libraries) > 1:
            together = measure_together(libraries, arguments.objdump, arguments.rounds)
            print(f"all {len(libraries)} libraries in one command, end to end (objdump: each in turn)")
            for name, timing in together.items():
                print(f"  {name:<14} {timing.wall * 1000:>8.1f} {timing.cpu * 1000:>8.1f}")
            objdump_time = together["objdump>null"]
            for name in list(together)[:2]:
                timing = together[name]
                ratios = f"wall {objdump_time.wall / timing.wall:.2f}, cpu {objdump_time.cpu / timing.cpu:.2f}"
                print(f"  objdump>null/{name}: {ratios}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
