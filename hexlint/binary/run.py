"""The binary audit's entry points for hexlint.cli / hexlint.engine.

- `audit_paths(paths, args, options_by_code, tables=None, jobs=1) -> (diagnostics, report_text)`; when the table is
  asked for, a `tables` list receives each library's per-function table as data (`table.table_records`), for
  --format json; `jobs`: libraries audited at once in worker processes (1: none; Linux, and enough bytes to pay).
  `paths`: the .so/.o files to audit; `args`: the parsed CLI namespace (see options.py for its attributes; a namespace
  from `add_binary_arguments` alone works); `options_by_code`: rule code -> options (the rules' TOML [options] with the
  config's overrides, then the CLI's thresholds). One model in every mode (docs/usage.md, "Binary audit"):
  * the rules run are those of the audits asked for (--spills: HX201 HX202, --promotions: HX203, --division: HX204,
    plus HX205 with any of them), or all five when none is asked for; with the same options whatever is shown, so a
    function is a finding in one mode exactly when it is in another; --strict changes nothing (kept for old scripts);
  * --spills/--promotions/--division add the per-function table (worst first, --top/--all) to the report;
  * without them the report holds only the libraries' notes (no DWARF, a -g build beside, a prefix map to pass);
  * gate mode (--baseline-lib OLD): only what grew since OLD (gate.py), for the same rules, as diagnostics, plus a
    regression report.
  Raises `BinaryInputError` (a ValueError; str() is the one-line `path: reason`) for unreadable/non-Hexagon input, a
  bad regex, or a --func that matches no function.
- `run_disasm(args) -> int` prints the annotated listing of functions matching `args.disasm` in `args.paths`.
- `run_addr2line(args, stdin) -> int` resolves `args.addr2line` addresses ('-' reads every address in `stdin`).
  Both print one line `hexlint: path: reason` on stderr and return 2 on bad input, 0 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from hexlint.binary.options import DEFAULT_TOP
from hexlint.core import Diagnostic

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:  # imported where used: a run the cache answers reads no ELF and decodes nothing
    from typing import Any, TextIO

    from hexlint.binary.audit import AuditSettings, LibraryAudit

BINARY_CODES = ("HX201", "HX202", "HX203", "HX204", "HX205")
FAMILY_CODES = {"spills": ("HX201", "HX202"), "promotions": ("HX203",), "division": ("HX204",), "dma": ("HX205",)}
# CLI option attribute -> (rule code, option name) it overrides.
THRESHOLD_OPTIONS = {
    "max_inloop_vspills": ("HX201", "max_inloop_vector_spills"),
    "max_inloop_sspills": ("HX202", "max_inloop_scalar_spills"),
    "max_promotions": ("HX203", "max_promotions"),
    "max_inloop_divisions": ("HX204", "max_inloop_divisions"),
    "max_dma_vec_ops": ("HX205", "max_dma_vec_ops"),
    "dma_pattern": ("HX205", "dma_pattern"),
}


class BinaryInputError(ValueError):
    """One line, `path: reason` or `--option: reason`; the CLI prints it and exits 2."""


def binary_checks() -> dict[str, Callable[..., Any]]:
    from hexlint.checks import (
        hx201_vector_spill_in_loop,
        hx202_scalar_spill_in_loop,
        hx203_float_promotion,
        hx204_division_in_loop,
        hx205_hvx_in_dma_worker,
    )

    return {
        "HX201": hx201_vector_spill_in_loop.check,
        "HX202": hx202_scalar_spill_in_loop.check,
        "HX203": hx203_float_promotion.check,
        "HX204": hx204_division_in_loop.check,
        "HX205": hx205_hvx_in_dma_worker.check,
    }


AUDIT_FLAGS = ("spills", "promotions", "division")


def selected_families(args: argparse.Namespace) -> list[str]:
    """The audits asked for (--spills, --promotions, --division); all of them when none is."""
    families = [name for name in AUDIT_FLAGS if getattr(args, name, False)]
    return families or list(AUDIT_FLAGS)


def shows_table(args: argparse.Namespace) -> bool:
    return any(getattr(args, name, False) for name in AUDIT_FLAGS)


def audited_codes(args: argparse.Namespace) -> tuple[str, ...]:
    """The binary rules a run audits, in every mode: those of the audits asked for plus HX205 (the `hvx` column of
    every table), or all of them. --select/--ignore narrow them further (the engine drops what is not selected)."""
    if not shows_table(args):
        return BINARY_CODES
    return (*(code for family in selected_families(args) for code in FAMILY_CODES[family]), "HX205")


def rule_options(options_by_code: Mapping[str, Mapping[str, Any]], args: argparse.Namespace) -> dict[str, dict]:
    """Each binary rule's options: TOML defaults, then the config's overrides, then the CLI's thresholds."""
    from hexlint.registry import find_rule

    merged: dict[str, dict] = {}
    for code in BINARY_CODES:
        rule = find_rule(code)
        merged[code] = {**(dict(rule.options) if rule else {}), **dict(options_by_code.get(code, {}))}
    for attribute, (code, option) in THRESHOLD_OPTIONS.items():
        value = getattr(args, attribute, None)
        if value is not None:
            merged[code][option] = value
    return merged


def function_filter(args: argparse.Namespace) -> Callable[[str], bool] | None:
    pattern = getattr(args, "func", None)
    if not pattern:
        return None
    try:
        compiled = re.compile(pattern)
    except re.error as error:
        raise BinaryInputError(f"--func: invalid regular expression {pattern!r} ({error})") from None
    return lambda name: compiled.search(name) is not None


def audit_library(
    path: str,
    settings: AuditSettings,
    accept: Callable[[str], bool] | None = None,
    debug_files: Sequence[str] = (),
    prefix_map: Sequence[tuple[str, str]] = (),
    part: tuple[int, int] = (0, 1),
) -> LibraryAudit:
    """Audit one library: DWARF from the --debug-file build of the same code when it has none, source paths through
    the prefix map; the missing-DWARF note says which file to pass when one is at hand."""
    from hexlint.binary.audit import NO_DWARF_NOTE, audit_image
    from hexlint.binary.sources import debug_image_for, load_debug_files, mapped_locate, missing_dwarf_note
    from hexlint.elf import ElfError, load_elf

    try:
        image = load_elf(path)
        given = load_debug_files(debug_files) if debug_files and not image.has_debug_info else []
    except ElfError as error:
        raise BinaryInputError(str(error)) from None
    audit = audit_image(image, settings, accept, debug_image=debug_image_for(image, given), part=part)
    notes = audit.notes
    if NO_DWARF_NOTE in notes:
        note = missing_dwarf_note(image, given)
        notes = tuple(note if item == NO_DWARF_NOTE else item for item in notes)
    return replace(audit, notes=notes, locate=mapped_locate(audit.locate, prefix_map))


def _library_options(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "debug_files": tuple(getattr(args, "debug_file", None) or ()),
        "prefix_map": tuple(getattr(args, "source_prefix_map", None) or ()),
    }


def audit_paths(
    paths: Sequence[str],
    args: argparse.Namespace,
    options_by_code: Mapping[str, Mapping[str, Any]],
    tables: list[dict[str, object]] | None = None,
    jobs: int = 1,
    enabled: Iterable[str] | None = None,
    facts: list[LibraryFacts] | None = None,
    cache_dir: str | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> tuple[list[Diagnostic], str]:
    """See the module's docstring. `jobs`: libraries audited at once, in worker processes (1: one after another in
    this process); the results are the same in any case. `enabled`: the codes the run selected (None: all). A `facts`
    list receives each library's LibraryFacts (not in gate mode), for the source rules of the same run. `cache_dir`:
    the persistent cache (binary/cached.py; None: none), an unchanged library's result is read from it, not audited
    again (not in gate mode). `progress("audited", done, total)` is told as each library is done."""
    options = rule_options(options_by_code, args)
    selected = None if enabled is None else set(enabled)
    codes = tuple(code for code in audited_codes(args) if selected is None or code in selected)
    _validate_pattern(options["HX205"].get("dma_pattern", ""))
    accept = function_filter(args)  # a bad --func is a usage error before any library is read
    baseline = getattr(args, "baseline_lib", None)
    if baseline:
        from hexlint.binary.audit import settings_from_options

        settings = settings_from_options(options)
        audits = [audit_library(str(path), settings, accept, **_library_options(args)) for path in paths]
        _require_a_function(args, paths, sum(len(audit.functions) for audit in audits))
        return _gate(baseline, audits, settings, accept, options, codes)
    results = _library_results([str(path) for path in paths], args, options, codes, jobs, cache_dir, progress)
    _require_a_function(args, paths, sum(result.functions for result in results))
    diagnostics = [diagnostic for result in results for diagnostic in result.diagnostics]
    if facts is not None:
        facts.extend(result.facts for result in results if result.facts is not None)
    report = _hints(diagnostics)
    if shows_table(args):
        from hexlint.binary.table import render_tables

        library_tables = [result.table for result in results if result.table is not None]
        if tables is not None:
            tables.extend(library_tables)
        top = None if getattr(args, "all_rows", False) else getattr(args, "top", DEFAULT_TOP)
        verbose = bool(getattr(args, "verbose", False))
        report = render_tables(library_tables, selected_families(args), top, verbose) + report
    else:
        # Without the table, a library's notes (no DWARF: which file to pass) matter only next to its findings.
        noted = [result for result in results if result.diagnostics]
        report = "".join(f"{result.path}: note: {note}\n" for result in noted for note in result.notes) + report
    return diagnostics, report


def _hints(diagnostics: Sequence[Diagnostic]) -> str:
    """A note when the findings' DWARF paths are another machine's whose files this tree holds."""
    from hexlint.binary.sources import prefix_map_hint

    paths = dict.fromkeys(d.source_span.path for d in diagnostics if d.source_span is not None)
    hint = prefix_map_hint(paths, os.getcwd()) if paths else None
    if hint is None:
        return ""
    return (
        f"note: the DWARF source paths are the build machine's; --source-prefix-map {hint} maps them onto this tree\n"
    )


@dataclass(frozen=True)
class LibraryFacts:
    """What the source rules of the same run may learn of a library: the functions that spill HVX registers inside
    a loop (HX201's fact at its threshold), by their stable names."""

    path: str
    functions_spilling_vectors_in_loops: frozenset[str]


def library_facts(audit: LibraryAudit, options: Mapping[str, Mapping[str, Any]]) -> LibraryFacts:
    from hexlint.binary.findings import option_int, stable_function_name

    threshold = option_int(options.get("HX201", {}), "max_inloop_vector_spills", 0)
    spilling = frozenset(
        stable_function_name(function.name)
        for function in audit.functions
        if threshold >= 0 and function.inloop_vector_spills > threshold
    )
    return LibraryFacts(audit.path, spilling)


@dataclass(frozen=True)
class LibraryResult:
    """What a run reports of one library, without the audit itself (small enough to come back from a process)."""

    path: str
    functions: int  # audited (those --func accepts)
    diagnostics: tuple[Diagnostic, ...]
    notes: tuple[str, ...]
    table: dict[str, object] | None  # the per-function table as data, when the table is asked for
    facts: LibraryFacts | None = None


def library_result(
    path: str,
    args: argparse.Namespace,
    options: dict[str, dict],
    codes: Sequence[str] | None = None,
    part: tuple[int, int] = (0, 1),
) -> LibraryResult:
    """Audit one library and run the rules `codes` (default: those of the audits asked for, see the module's
    docstring) on it, with the table as data when the run shows it. `part`: (number, parts), the result of that
    part of its functions alone (audit.function_part; merged_result joins the parts)."""
    from hexlint.binary.audit import settings_from_options
    from hexlint.binary.table import table_records

    settings = settings_from_options(options)
    audit = audit_library(path, settings, function_filter(args), **_library_options(args), part=part)
    diagnostics = tuple(_run_checks([audit], options, audited_codes(args) if codes is None else codes))
    facts = library_facts(audit, options)
    table = None
    if shows_table(args):
        table = table_records(audit, selected_families(args), bool(getattr(args, "verbose", False)))
    return LibraryResult(path, len(audit.functions), diagnostics, audit.notes, table, facts)


def merged_result(parts: Sequence[LibraryResult], codes: Sequence[str]) -> LibraryResult:
    """The LibraryResult of a whole library from those of its parts, in order: as one audit of it reports (each
    rule's findings in function order, rule after rule; the table's rows ranked as one table's)."""
    from hexlint.binary.table import merged_tables

    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    order = {code: number for number, code in enumerate(codes)}
    diagnostics = sorted((d for part in parts for d in part.diagnostics), key=lambda d: order.get(d.code, len(order)))
    tables = [part.table for part in parts if part.table is not None]
    facts = [part.facts for part in parts if part.facts is not None]
    return LibraryResult(
        first.path,
        sum(part.functions for part in parts),
        tuple(diagnostics),
        first.notes,
        merged_tables(tables) if tables else None,
        LibraryFacts(facts[0].path, frozenset().union(*(f.functions_spilling_vectors_in_loops for f in facts)))
        if facts
        else None,
    )


def _library_results(
    paths: list[str],
    args: argparse.Namespace,
    options: dict[str, dict],
    codes: Sequence[str],
    jobs: int,
    cache_dir: str | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[LibraryResult]:
    """_audited_results of the libraries the cache in `cache_dir` does not hold (all of them without one), the
    others from it; in order."""
    store = None
    if cache_dir is not None:
        from hexlint.cache import open_store

        store = open_store(cache_dir)
    if store is None:
        return _audited_results(paths, args, options, codes, jobs, _counter(progress, len(paths)))
    from hexlint.binary.cached import cached_result, library_key, store_result

    keys = [library_key(path, args, options, codes) for path in paths]
    found = [None if key is None else cached_result(store, key) for key in keys]
    report = _counter(progress, len(paths))
    for result in found:
        if result is not None:
            report()
    missing = [index for index, result in enumerate(found) if result is None]
    audited = _audited_results([paths[index] for index in missing], args, options, codes, jobs, report)
    for index, result in zip(missing, audited, strict=True):
        found[index] = result
        if keys[index] is not None:
            store_result(store, keys[index], result)
    return found  # type: ignore[return-value]  # every None was replaced


def _counter(progress: Callable[[str, int, int], None] | None, total: int) -> Callable[[], None]:
    """A callable telling `progress` of one more library done."""
    done = [0]

    def report() -> None:
        done[0] += 1
        if progress is not None:
            progress("audited", done[0], total)

    return report


def _audited_results(
    paths: list[str],
    args: argparse.Namespace,
    options: dict[str, dict],
    codes: Sequence[str],
    jobs: int,
    report: Callable[[], None],
) -> list[LibraryResult]:
    """library_result of each path, in order: in forked worker processes when several cores are there and the
    libraries are large enough to pay for them (an audit is pure Python: threads would take turns), a large library
    in parts side by side when there are fewer libraries than workers (`_parts_of`); where fork is not the safe
    default (macOS, Windows) or cannot be had, one after another. A process running other threads (a host calling
    hexlint.engine.lint) is never forked: a lock one of them held would stay locked in the worker. A worker's error
    is raised here, the first library's first, as one after another would. `jobs`: workers at most (1: none)."""

    def one_after_another() -> list[LibraryResult]:
        results = []
        for path in paths:
            results.append(library_result(path, args, options, codes))
            report()
        return results

    if (
        jobs <= 1
        or not sys.platform.startswith("linux")
        or not _single_threaded()
        or _total_size(paths) < PARALLEL_MIN_BYTES
    ):
        return one_after_another()
    _import_audit_modules()
    parts = _parts_of(paths, jobs, args)
    if len(paths) == 1 and parts[0] > 1:
        whole = _audit_in_parts(paths[0], args, options, codes, parts[0])
        if whole is not None:
            report()
            return [whole]
    tasks = [(path, (number, count)) for path, count in zip(paths, parts, strict=True) for number in range(count)]
    workers = min(jobs, len(tasks))
    if workers <= 1:
        return one_after_another()
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    context = multiprocessing.get_context("fork")
    try:
        pool = ProcessPoolExecutor(workers, context, initializer=_worker_setup, initargs=(os.getpid(),))
    except (OSError, NotImplementedError, ImportError):  # no POSIX semaphores here (no /dev/shm): no workers
        return one_after_another()
    with _DeferredInterrupt() as interrupt:
        try:
            # The workers are forked as the tasks are handed out: with Ctrl-C held back until each has set it aside
            # (_worker_setup), so that one pressed then interrupts this process alone, once they are all there. A
            # mask the caller had stays as it was.
            already_blocked = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, ())
            try:
                signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
                futures = [pool.submit(library_result, path, args, options, codes, part) for path, part in tasks]
            except OSError:  # no process to be had (fork: too many processes, no memory)
                futures = None
            finally:
                if not already_blocked:
                    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
            if futures is None:
                _kill_workers(pool)
                return one_after_another()  # this process does it all
            from concurrent.futures import FIRST_COMPLETED, wait

            by_path: dict[str, list[Any]] = {}
            for (path, _), future in zip(tasks, futures, strict=True):
                by_path.setdefault(path, []).append(future)
            left = {path: len(futures) for path, futures in by_path.items()}
            owner = {future: path for path, futures in by_path.items() for future in futures}
            pending = set(futures)
            while pending:
                finished, pending = wait(pending, timeout=_INTERRUPT_POLL_SECONDS, return_when=FIRST_COMPLETED)
                interrupt.check()
                for future in finished:
                    left[owner[future]] -= 1
                    if not left[owner[future]]:
                        report()
            # an error is raised here, the first library's first
            return [merged_result([future.result() for future in by_path[path]], codes) for path in paths]
        except BrokenProcessPool:
            _kill_workers(pool)
            raise ChildProcessError(
                "a worker process auditing the libraries died (killed, or out of memory?); "
                "--jobs 1 audits them one after another in this process"
            ) from None
        except BaseException:
            _kill_workers(pool)  # the run ends here: a second Ctrl-C must find no worker left to wait for
            raise
        finally:
            # Never a cancelled future (Executor.map cancels its own on an error): the pool's thread, finding the
            # workers killed, would set an exception on it and print the InvalidStateError it gets (Python 3.11).
            pool.shutdown()


_INTERRUPT_POLL_SECONDS = 0.05


class _DeferredInterrupt:
    """Ctrl-C noted, not raised, while this process waits on its pool: a KeyboardInterrupt raised at any bytecode
    may land inside concurrent.futures' own locking (between a `with` taking a waiter's lock and the block that
    releases it), and the pool's thread then waits forever for that lock, and the run for the pool (the likely
    cause of a rare hang under load). `check()` raises it where no lock is held; on the way out, the handler the
    process had is back and hears of the press (the CLI's then ignores the later ones)."""

    def __init__(self) -> None:
        self.pressed = False
        self.previous: Any = None

    def __enter__(self) -> _DeferredInterrupt:
        import threading

        if threading.current_thread() is threading.main_thread():
            previous = signal.getsignal(signal.SIGINT)
            if callable(previous):  # ignored (SIG_IGN) or fatal (SIG_DFL): left as it is
                self.previous = previous
                signal.signal(signal.SIGINT, self._note)
        return self

    def _note(self, _number: int, _frame: object) -> None:
        self.pressed = True

    def check(self) -> None:
        if self.pressed:
            raise KeyboardInterrupt

    def __exit__(self, *_exception: object) -> None:
        if self.previous is None:
            return
        signal.signal(signal.SIGINT, self.previous)
        if self.pressed:
            self.previous(signal.SIGINT, None)


def _import_audit_modules() -> None:
    """The modules library_result runs, imported before the workers are forked: they inherit them instead of each
    importing them again (most of a worker's start-up)."""
    import hexlint.binary.audit
    import hexlint.binary.sources
    import hexlint.binary.table
    import hexlint.elf  # noqa: F401

    binary_checks()  # imports the rule modules


def _parts_of(paths: list[str], jobs: int, args: argparse.Namespace) -> list[int]:
    """In how many parts each library is audited: one, unless there are fewer libraries than workers, when a library
    of PART_MIN_BYTES or more gets a share of the idle ones (a part pays a process, its own ELF read and rules; it
    scans only its own functions' packets). --func audits a few functions: one part."""
    if getattr(args, "func", None) or len(paths) >= jobs:
        return [1] * len(paths)
    # a part runs on a core no other process wants: on a machine already busy it only adds its own overhead
    share = min(jobs, _idle_cores()) // len(paths)
    parts = []
    for path in paths:
        size = 0
        with contextlib.suppress(OSError):
            size = os.path.getsize(path)
        parts.append(max(1, min(share, size // PART_MIN_BYTES)))
    return parts


def _audit_in_parts(
    path: str, args: argparse.Namespace, options: dict[str, dict], codes: Sequence[str], parts: int
) -> LibraryResult | None:
    """One library in `parts` parts side by side: this process audits the first, a forked child each other one and
    sends back its LibraryResult through a pipe; merged_result joins them. A bare fork, not a process pool: the pool's
    modules and start-up (~50 ms) would eat much of what a part saves on one library. None when no child could be
    forked (the caller audits the library whole). A child's error is raised here, after this process's own part's;
    a child that died without a result is a ChildProcessError; on any error every child left is killed."""
    import pickle

    children: list[tuple[int, int]] = []  # (pid, read end of its pipe), not yet reaped
    parent = os.getpid()
    try:
        forked = True
        already_blocked = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, ())
        try:
            # Ctrl-C held back until each child has set it aside (_worker_setup), as for the pool's workers
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            for number in range(1, parts):
                read_end, write_end = os.pipe()
                try:
                    pid = os.fork()
                except OSError:
                    os.close(read_end)
                    os.close(write_end)
                    raise
                if pid == 0:
                    _part_child(write_end, parent, path, args, options, codes, (number, parts))
                os.close(write_end)
                children.append((pid, read_end))
        except OSError:  # no process to be had (too many processes, no memory)
            forked = False
        finally:
            if not already_blocked:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        if not forked:
            return None
        results = [library_result(path, args, options, codes, (0, parts))]
        while children:
            pid, read_end = children[0]
            with os.fdopen(read_end, "rb") as stream:
                children[0] = (pid, -1)
                data = stream.read()
            os.waitpid(pid, 0)
            children.pop(0)
            if not data:
                raise ChildProcessError(
                    "a worker process auditing the library died (killed, or out of memory?); "
                    "--jobs 1 audits it in this process alone"
                )
            kind, value = pickle.loads(data)
            if kind == "error":
                raise value
            results.append(value)
        return merged_result(results, codes)
    finally:
        for pid, read_end in children:  # an error or Ctrl-C cut the run short: no child is left running
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                if read_end >= 0:
                    os.close(read_end)
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)


def _part_child(
    write_end: int,
    parent: int,
    path: str,
    args: argparse.Namespace,
    options: dict[str, dict],
    codes: Sequence[str],
    part: tuple[int, int],
) -> None:
    """A forked child's life: its part's LibraryResult (or the error it raised), pickled into the pipe; it never
    returns, nor runs the parent's exit handlers or flushes its buffers."""
    import pickle

    status = 1
    try:
        _worker_setup(parent)
        try:
            outcome: tuple[str, object] = ("result", library_result(path, args, options, codes, part))
        except Exception as error:  # raised in the parent, as one process would
            outcome = ("error", error)
        try:
            data = pickle.dumps(outcome)
        except Exception as error:  # an error that does not pickle: its message then
            data = pickle.dumps(("error", ChildProcessError(f"a worker process auditing the library failed: {error}")))
        with os.fdopen(write_end, "wb") as stream:
            stream.write(data)
        status = 0
    finally:
        os._exit(status)


def _idle_cores() -> int:
    """Cores of this process that no other runnable task wants right now (all of them where that is unknown).

    The kernel's count of runnable tasks (/proc/loadavg's fourth field), less this process, at its lowest of a few
    looks 1 ms apart: a task that just started or is about to sleep (the shell that ran hexlint) is not a load. The
    one-minute load average is the fallback: it still counts a benchmark's previous runs a minute later."""
    from hexlint.engine import usable_cores

    cores = usable_cores()
    runnable = _runnable_tasks()
    if runnable is not None:
        return max(0, cores - max(0, runnable - 1))
    try:
        load = os.getloadavg()[0]
    except (OSError, AttributeError):
        return cores
    return max(0, int(cores - load + 0.5))


def _runnable_tasks(looks: int = 3) -> int | None:
    """The fewest runnable tasks (this one included) seen in `looks` reads of /proc/loadavg; None without it."""
    import time

    counts = []
    for look in range(looks):
        if look:
            time.sleep(0.001)
        try:
            with open("/proc/loadavg", encoding="ascii") as stream:
                fields = stream.read().split()
            counts.append(int(fields[3].split("/")[0]))
        except (OSError, IndexError, ValueError):
            return None
    return min(counts)


# A part of a library's functions (its own process, ELF read, scan) pays from about this many bytes of library.
PART_MIN_BYTES = 128 * 1024


# Starting the worker processes costs ~25 ms: below this many bytes of libraries (~100 ms of audit) it does not pay.
PARALLEL_MIN_BYTES = 256 * 1024


def _total_size(paths: list[str]) -> int:
    total = 0
    for path in paths:
        with contextlib.suppress(OSError):  # audit_library says what is wrong with it
            total += os.path.getsize(path)
    return total


def _single_threaded() -> bool:
    """No other Python thread runs in this process. Threads a native library started unseen are not counted: the
    kernel's count (/proc/self/task) still lists a thread Python has just joined (the parse pool of this very run),
    which would turn the workers off at random."""
    import threading

    return threading.active_count() == 1


def _worker_setup(parent: int) -> None:
    """Ctrl-C reaches the whole process group: the parent alone says `hexlint: interrupted`, not every worker. A
    worker dies with its parent (killed, out of memory, a caller's timeout) instead of holding the caller's pipes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C held back since the fork is dropped here
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    with contextlib.suppress(ImportError, OSError, AttributeError):  # a Python without ctypes, a libc without prctl
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the request took hold
        os._exit(1)


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _kill_workers(pool: Any) -> None:
    kill_workers = getattr(pool, "kill_workers", None)  # Python 3.14+
    if kill_workers is not None:
        kill_workers()
        return
    processes = list((pool._processes or {}).values())  # earlier: the pool's own table of its processes
    for process in processes:
        with contextlib.suppress(OSError):
            process.kill()
    for process in processes:
        process.join(1)  # reaped now, not left a zombie until this process exits


def _require_a_function(args: argparse.Namespace, paths: Sequence[str], functions: int) -> None:
    if getattr(args, "func", None) and paths and not functions:
        raise BinaryInputError(f"--func: {args.func!r} matches no function in {', '.join(map(str, paths))}")


def _validate_pattern(pattern: str) -> None:
    try:
        re.compile(pattern)
    except re.error as error:
        raise BinaryInputError(f"--dma-pattern: invalid regular expression {pattern!r} ({error})") from None


def _run_checks(audits: list[LibraryAudit], options: dict[str, dict], codes: Sequence[str]) -> list[Diagnostic]:
    checks = binary_checks()
    return [diagnostic for audit in audits for code in codes for diagnostic in checks[code](audit, options[code])]


def _gate(
    baseline: str,
    audits: list[LibraryAudit],
    settings: AuditSettings,
    accept: Callable[[str], bool] | None,
    options: Mapping[str, Mapping[str, Any]],
    codes: Sequence[str],
) -> tuple[list[Diagnostic], str]:
    """The rules the run audits, as growth since OLD; a rule its threshold turns off (-1) is not gated either."""
    from hexlint.binary.findings import option_int
    from hexlint.binary.gate import THRESHOLD_OPTION, compare, regression_diagnostics, render_regressions

    old = audit_library(baseline, settings, accept)
    skip = [code for code in BINARY_CODES if code not in codes]
    skip += [code for code, option in THRESHOLD_OPTION.items() if option_int(options.get(code, {}), option, 0) < 0]
    diagnostics: list[Diagnostic] = []
    report = []
    for audit in audits:
        regressions = compare(old, audit, [*AUDIT_FLAGS, "dma"], skip, options)
        diagnostics += regression_diagnostics(old, audit, regressions)
        report.append(render_regressions(old, audit, regressions))
    return diagnostics, "".join(report)


def _error(message: str, stderr: TextIO | None = None) -> int:
    (stderr or sys.stderr).write(f"hexlint: error: {message}\n")
    return 2


def run_disasm(args: argparse.Namespace, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    from hexlint.binary.audit import audit_image, settings_from_options
    from hexlint.binary.disasm import render_disassembly
    from hexlint.elf import ElfError, load_elf

    stdout = stdout or sys.stdout
    paths = [str(path) for path in getattr(args, "paths", None) or []]
    if not paths:
        return _error("--disasm: give the library to disassemble (hexlint --disasm FUNC LIB.so)", stderr)
    try:
        pattern = re.compile(args.disasm)
    except re.error as error:
        return _error(f"--disasm: invalid regular expression {args.disasm!r} ({error})", stderr)
    exact = args.disasm
    found = False
    for path in paths:
        try:
            image = load_elf(path)
        except ElfError as error:
            return _error(str(error), stderr)
        names = {function.name for function in image.functions}

        def accept(name: str, names: set[str] = names) -> bool:
            return name == exact if exact in names else pattern.search(name) is not None

        audit = audit_image(image, settings_from_options(rule_options({}, args)), accept)
        if not audit.functions:
            continue
        found = True
        stdout.write(render_disassembly(audit, getattr(args, "objdump", None)))
    if not found:
        return _error(f"--disasm: {args.disasm!r} matches no function in {', '.join(paths)}", stderr)
    return 0


def run_addr2line(
    args: argparse.Namespace, stdin: TextIO | None, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    from hexlint.binary.addr2line import AddressError, resolve_lines
    from hexlint.elf import ElfError, load_elf

    stdout = stdout or sys.stdout
    items = list(args.addr2line or [])
    libraries = [str(path) for path in getattr(args, "paths", None) or []]
    libraries += [item for item in items if item != "-" and os.path.isfile(item)]
    addresses = [item for item in items if item not in libraries]
    if not libraries:
        return _error("--addr2line: give the library to resolve against (hexlint --addr2line ADDR... LIB.so)", stderr)
    if len(libraries) > 1:
        return _error(f"--addr2line: one library at a time, got {', '.join(libraries)}", stderr)
    text = None
    if "-" in addresses:
        if stdin is None:
            return _error("--addr2line -: no standard input", stderr)
        text = stdin.read()
        addresses = [address for address in addresses if address != "-"]
    try:
        image = load_elf(libraries[0])
        stdout.write(resolve_lines(image, addresses, text))
    except ElfError as error:
        return _error(str(error), stderr)
    except AddressError as error:
        return _error(f"--addr2line: {error}", stderr)
    return 0
