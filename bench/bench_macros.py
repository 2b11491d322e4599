#!/usr/bin/env python3
"""Benchmark HX110/HX111 (macro backslash alignment) against upstream's ggml-hexagon-align-macros.py, side by side.

Usage:
    PYTHONPATH=. python bench/bench_macros.py [--script PATH] [--tree DIR ...] [--repeat N]

--script defaults to $HEXLINT_UPSTREAM_ALIGN_SCRIPT (a local copy of llama.cpp's
scripts/snapdragon/ggml-hexagon-align-macros.py; it is not part of this repository); without it only hexlint is timed.
--tree defaults to $HEXLINT_UPSTREAM_TREE (an upstream ggml-hexagon directory) plus fixtures/htp-core.

Three measurements per tree, each the best of --repeat runs:
  check     in process: read every file and find misaligned macros (hexlint: both rules' check functions;
            script: its process_file without --fix)
  fix       in process, on a fresh copy of the tree each run: compute and write the fixes
  command   end to end, a new Python process each run, the two alternating, best of 3N+1, wall and CPU: the
            `hexlint` console script's code (`python -c "from hexlint.__main__ import run; ..."`) with
            `--select HX110,HX111 -q TREE`, and `python script -q TREE` (interpreter start and imports included)
It also reports whether both tools' fixed trees are byte-identical, and, once, where a command's fixed cost goes:
  start-up  the interpreter alone (`python -c pass`), `import hexlint.cli`, `hexlint --version` (imports and the
            argument parser), and the upstream script's own imports (its module loaded, main not run)
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hexlint import registry  # noqa: E402
from hexlint.checks import _macros, hx110_macro_backslash_misaligned, hx111_macro_backslash_whitespace  # noqa: E402
from hexlint.core import Source  # noqa: E402
from hexlint.fixer import apply_fixes, write_atomic  # noqa: E402

SOURCE_SUFFIXES = {".c", ".h", ".cpp", ".hpp", ".cc", ".cxx", ".inl"}
RULE_CHECKS = (hx110_macro_backslash_misaligned.check, hx111_macro_backslash_whitespace.check)


def source_files(tree: Path) -> list[Path]:
    return sorted(path for path in tree.rglob("*") if path.suffix in SOURCE_SUFFIXES and path.is_file())


def load_script(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("upstream_align_macros", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"bench_macros: {path}: not a Python script")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def script_arguments(fix: bool) -> argparse.Namespace:
    return argparse.Namespace(
        fix=fix, diff=False, check=False, mode="min", pad=2, target_col=None, all=False, quiet=True
    )


def options_of(code: str) -> dict:
    rule = registry.find_rule(code)
    return dict(rule.options) if rule else {}


def hexlint_findings(files: list[Path]) -> int:
    options = (options_of("HX110"), options_of("HX111"))
    count = 0
    for path in files:
        source = Source(str(path), path.read_bytes())
        for check, rule_options in zip(RULE_CHECKS, options, strict=True):
            count += sum(1 for _ in check(source, rule_options))
    return count


def hexlint_fix(files: list[Path]) -> None:
    options = (options_of("HX110"), options_of("HX111"))
    for path in files:
        data = path.read_bytes()
        source = Source(str(path), data)
        fixes = [
            diagnostic.fix
            for check, rule_options in zip(RULE_CHECKS, options, strict=True)
            for diagnostic in check(source, rule_options)
            if diagnostic.fix is not None and diagnostic.fix.safe
        ]
        if fixes:
            write_atomic(path, apply_fixes(data, fixes))


def script_run(module: ModuleType, files: list[Path], fix: bool) -> int:
    arguments = script_arguments(fix)
    misaligned = 0
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        for path in files:
            misaligned += module.process_file(str(path), arguments)[1]
    return misaligned


def best_of(repeat: int, action: Callable[[], object], prepare: Callable[[], object] | None = None) -> float:
    best = float("inf")
    for _ in range(repeat):
        if prepare:
            prepare()
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best


def copy_tree(tree: Path, destination: Path) -> list[Path]:
    if destination.exists():
        shutil.rmtree(destination)
    shutil.copytree(tree, destination)
    return source_files(destination)


# What the `hexlint` console script that pip installs runs (a pre-commit hook calls that, not `python -m hexlint`,
# whose runpy costs another ~2 ms).
ENTRY_POINT = "import sys; from hexlint.__main__ import run; sys.exit(run())"


def command_environment(bytecode_cache: Path) -> dict[str, str]:
    """Bytecode is cached (in `bytecode_cache`, not the checkout) as it is for an installed hexlint, even where
    PYTHONDONTWRITEBYTECODE is set: otherwise every run recompiles the package."""
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        "PYTHONPYCACHEPREFIX": str(bytecode_cache),
    }
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    return environment


def command_times(repeat: int, commands: list[list[str]], cwd: Path, bytecode_cache: Path) -> list[tuple[float, float]]:
    """Best (wall, CPU) of a fresh process per command, the commands alternating round by round so that a load spike
    on this shared machine hits each alike. CPU is the child's user + system time, what load disturbs least."""
    environment = command_environment(bytecode_cache)
    best = [(float("inf"), float("inf"))] * len(commands)
    for _ in range(repeat):
        for index, command in enumerate(commands):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(
                command, cwd=cwd, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
            )
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            best[index] = (min(best[index][0], wall), min(best[index][1], cpu))
    return best


def bench_startup(script: Path | None, repeat: int) -> None:
    """The fixed cost every command pays before it reads a file, each part in a fresh process."""
    python = sys.executable
    parts = [
        ("python", [python, "-c", "pass"]),
        ("import hexlint.cli", [python, "-c", "import hexlint.cli"]),
        ("hexlint --version", [python, "-c", ENTRY_POINT, "--version"]),
    ]
    if script is not None:
        loader = "import importlib.util as u, sys; s = u.spec_from_file_location('s', sys.argv[1]); "
        loader += "s.loader.exec_module(u.module_from_spec(s))"
        parts.append(("script imports", [python, "-c", loader, str(script)]))
    with tempfile.TemporaryDirectory() as bytecode_cache:
        times = command_times(repeat + 1, [command for _, command in parts], REPO, Path(bytecode_cache))
    print(
        "start-up (wall / CPU)  "
        + "   ".join(
            f"{name} {wall * 1000:.1f} / {cpu * 1000:.1f} ms"
            for (name, _), (wall, cpu) in zip(parts, times, strict=True)
        )
    )


def ratio(theirs: float | None, ours: float) -> str:
    return f"{theirs / ours:6.2f}x" if theirs else "    -  "


def report_line(what: str, ours: float, theirs: float | None) -> str:
    script_ms = f"{theirs * 1000:9.1f} ms" if theirs is not None else "        -   "
    return f"  {what:<8} hexlint {ours * 1000:9.1f} ms   script {script_ms}   script/hexlint {ratio(theirs, ours)}"


def bench_tree(tree: Path, script: Path | None, module: ModuleType | None, repeat: int) -> bool:
    files = source_files(tree)
    total_bytes = sum(path.stat().st_size for path in files)
    lines = sum(path.read_bytes().count(b"\n") for path in files)
    print(f"{tree}: {len(files)} files, {lines} lines, {total_bytes / 1024:.0f} KiB")
    findings = hexlint_findings(files)
    misaligned = script_run(module, files, fix=False) if module else None
    print(f"  findings: hexlint {findings} (HX110+HX111)" + (f", script {misaligned} misaligned" if module else ""))

    # Cold runs only: the per-file scan cache would otherwise answer every run after the first.
    ours = best_of(repeat, lambda: hexlint_findings(files), _macros.find_macros.cache_clear)
    theirs = best_of(repeat, lambda: script_run(module, files, fix=False)) if module else None
    print(report_line("check", ours, theirs))

    identical = True
    with tempfile.TemporaryDirectory() as scratch:
        ours_dir, theirs_dir = Path(scratch) / "hexlint", Path(scratch) / "script"
        state: dict[str, list[Path]] = {}
        ours = best_of(
            repeat,
            lambda: hexlint_fix(state["hexlint"]),
            lambda: (_macros.find_macros.cache_clear(), state.update(hexlint=copy_tree(tree, ours_dir))),
        )
        theirs = None
        if module:
            theirs = best_of(
                repeat,
                lambda: script_run(module, state["script"], fix=True),
                lambda: state.update(script=copy_tree(tree, theirs_dir)),
            )
            different = [
                str(path.relative_to(ours_dir))
                for path in state["hexlint"]
                if path.read_bytes() != (theirs_dir / path.relative_to(ours_dir)).read_bytes()
            ]
            identical = not different
            print(report_line("fix", ours, theirs))
            print(
                f"  fixed trees: {len(files) - len(different)} of {len(files)} files byte-identical"
                + (f"; different: {', '.join(different)}" if different else "")
            )
        else:
            print(report_line("fix", ours, theirs))

    with tempfile.TemporaryDirectory() as bytecode_cache:
        commands = [[sys.executable, "-c", ENTRY_POINT, "--select", "HX110,HX111", "-q", str(tree)]]
        if script:
            commands.append([sys.executable, str(script), "-q", str(tree)])
        times = command_times(3 * repeat + 1, commands, REPO, Path(bytecode_cache))
    (ours_wall, ours_cpu), (theirs_wall, theirs_cpu) = times[0], times[1] if script else (None, None)
    print(report_line("command", ours_wall, theirs_wall) + "  (wall)")
    print(report_line("command", ours_cpu, theirs_cpu) + "  (CPU)")
    return identical


def generated_tree(directory: Path, count: int) -> Path:
    """A header of `count` three-line macros, all misaligned, after one leading comment (a worst case for scans)."""
    macros = b"".join(b"#define M%d(x) \\\n    (x) + %d    \\\n    1\n" % (index, index) for index in range(count))
    tree = directory / "generated"
    tree.mkdir()
    (tree / "many-macros.h").write_bytes(b"/* generated */\n" + macros)
    return tree


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--script", default=os.environ.get("HEXLINT_UPSTREAM_ALIGN_SCRIPT"), help="upstream script")
    parser.add_argument("--tree", action="append", default=[], help="directory to check (repeatable)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement; the best counts")
    parser.add_argument(
        "--generated", type=int, default=0, metavar="N", help="also time a generated header with N misaligned macros"
    )
    arguments = parser.parse_args()

    trees = [Path(tree) for tree in arguments.tree]
    if not trees:
        if os.environ.get("HEXLINT_UPSTREAM_TREE"):
            trees.append(Path(os.environ["HEXLINT_UPSTREAM_TREE"]))
        trees.append(REPO / "fixtures" / "htp-core")
    scratch = tempfile.TemporaryDirectory()
    if arguments.generated:
        trees.append(generated_tree(Path(scratch.name), arguments.generated))
    script = Path(arguments.script) if arguments.script else None
    if script and not script.is_file():
        print(f"bench_macros: {script}: no such file", file=sys.stderr)
        return 2
    module = load_script(script) if script else None
    if not script:
        print("No upstream script (set HEXLINT_UPSTREAM_ALIGN_SCRIPT or pass --script): timing hexlint alone.")
    print(f"Python {sys.version.split()[0]}, best of {arguments.repeat} runs\n")
    bench_startup(script, arguments.repeat)
    print()
    all_identical = True
    for tree in trees:
        if not tree.is_dir():
            print(f"bench_macros: {tree}: not a directory", file=sys.stderr)
            return 2
        all_identical &= bench_tree(tree, script, module, arguments.repeat)
        print()
    return 0 if all_identical else 1


if __name__ == "__main__":
    sys.exit(main())
