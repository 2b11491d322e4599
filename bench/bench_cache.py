#!/usr/bin/env python3
"""Side by side, in one run: hexlint without its cache, cold with it, warm, and after an edit.

    PYTHONPATH=. python bench/bench_cache.py [TREE] [--file REL] [--header REL] [--rounds N]

TREE (default: the bundled core, fixtures/htp-core) is copied to a temporary directory first, so the edits never
touch it; headers outside the tree come from CPATH as usual (for ggml's tree:
`CPATH=ggml/include:ggml/src python bench/bench_cache.py ggml/src/ggml-hexagon`). Every measurement is a whole
command (`python -m hexlint`, imports included), timed by wall clock, the best of --rounds:

- today: a whole-tree run with --no-cache, and a one-file run with --no-cache (the tree parsed as context);
- cold: a whole-tree run with an empty cache;
- warm: the whole tree and one kernel file (--file) again, nothing changed;
- after an edit: one kernel file (--file), or one shared header (--header: by default the tree's header that the
  most files include), changed, then the whole tree; the line says how many units were parsed again.

A run with the cache saves its parsed units after its report, in a detached process; the bench waits for it between
measurements. Wall times on a shared machine vary by 10-15% from round to round: use --rounds 5 or more.

The targets of issue 16: warm one-file and warm whole-tree runs within 0.5 s, cold no slower than today.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hexlint.c.unit_cache import wait_for_saver  # noqa: E402

UNITS = re.compile(r"(\d+) of (\d+) units parsed")


def hexlint(*arguments: str, cwd: Path) -> tuple[float, str]:
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    environment.pop("HEXLINT_NO_CACHE", None)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "hexlint", "-v", "--exit-zero", *arguments],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"bench_cache: hexlint {' '.join(arguments)} failed: {done.stderr.strip()[-400:]}")
    return elapsed, done.stderr


def parsed_units(stderr: str) -> str:
    found = UNITS.search(stderr)
    return f"{found.group(1)} of {found.group(2)} units parsed" if found else ""


def most_included_header(tree: Path) -> str:
    counts: dict[str, int] = {}
    for source in tree.rglob("*"):
        if source.suffix in (".c", ".cpp", ".h") and source.is_file():
            for name in re.findall(r'#\s*include\s+"([^"]+)"', source.read_text(errors="replace")):
                counts[os.path.basename(name)] = counts.get(os.path.basename(name), 0) + 1
    headers = {path.name: path for path in tree.rglob("*.h")}
    ranked = sorted((count, name) for name, count in counts.items() if name in headers)
    if not ranked:
        raise SystemExit("bench_cache: no header of the tree is included by its files; give --header")
    return str(headers[ranked[-1][1]].relative_to(tree))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree", nargs="?", default=str(ROOT / "fixtures" / "htp-core"))
    parser.add_argument("--file", help="the kernel file of the one-file runs and of the edit (default: the first)")
    parser.add_argument("--header", help="the shared header of the header edit (default: the most included)")
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="hexlint-bench-cache-") as scratch:
        work = Path(scratch)
        tree = work / Path(arguments.tree).name
        shutil.copytree(arguments.tree, tree, ignore=shutil.ignore_patterns("*.so", "*.o", ".hexlint_cache"))
        kernel = arguments.file or str(sorted((tree / "htp").glob("*.c"))[0].relative_to(tree))
        header = arguments.header or most_included_header(tree)
        cache = work / "cache"
        rows: list[tuple[str, float, str]] = []

        def best(label: str, *command: str, fresh_cache: bool = False) -> float:
            times, note = [], ""
            for _ in range(arguments.rounds):
                if fresh_cache:
                    shutil.rmtree(cache, ignore_errors=True)
                elapsed, stderr = hexlint(*command, cwd=work)
                # A run's units are saved by a detached process after its report: let it finish before the next
                # measurement (a run that starts meanwhile waits for it, which is not what is measured here).
                wait_for_saver(str(cache))
                times.append(elapsed)
                note = parsed_units(stderr)
            rows.append((label, min(times), note))
            return min(times)

        def after_edit(label: str, relative: str) -> None:
            times, note = [], ""
            for round_number in range(arguments.rounds):
                with open(tree / relative, "a") as handle:
                    handle.write(f"\n// bench edit {round_number}\n")
                elapsed, stderr = hexlint("--cache-dir", str(cache), tree.name, cwd=work)
                wait_for_saver(str(cache))
                times.append(elapsed)
                note = parsed_units(stderr)
            rows.append((label, min(times), note))

        one_file = f"{tree.name}/{kernel}"
        today = best("today: whole tree, --no-cache", "--no-cache", tree.name)
        best("today: one file, --no-cache", "--no-cache", one_file)
        best("cold: whole tree, empty cache", "--cache-dir", str(cache), tree.name, fresh_cache=True)
        best("warm: whole tree", "--cache-dir", str(cache), tree.name)
        best("warm: one file", "--cache-dir", str(cache), one_file)
        after_edit(f"after editing {kernel}", kernel)
        after_edit(f"after editing {header}", header)

    width = max(len(label) for label, _, _ in rows)
    print(f"tree: {arguments.tree} (best of {arguments.rounds} rounds, wall seconds of whole commands)")
    for label, seconds, note in rows:
        print(f"  {label:<{width}}  {seconds:7.2f} s  {seconds / today:6.2f}x today  {note}")


if __name__ == "__main__":
    main()
