"""`hexlint --watch PATHS`: lint, then lint again on every change to what the run read, reporting what changed.

What is watched: the PATHS (directories with their subdirectories), the tree the cross-file rules parse as context,
the configuration file and the directories where one could appear, the baseline and compile_commands.json, and the
headers the units include from elsewhere (found in `LintResult.dependencies`). Headers of the system, of libclang
and hexlint's own stand-ins are not: they do not change while one edits a tree.

The first run prints the report a normal run prints. After each change: a header (time, files changed) on stderr,
the findings that appeared (`+ `) and went away (`- `) on stdout, and a summary line on stderr, as a normal run puts
its findings on stdout and its summary on stderr. A finding is known by its baseline fingerprint (hexlint/baseline.py),
so a finding that only moved (lines added above it) is not shown again. Each run is a whole run of the engine: what it
does not re-parse is what the persistent cache (RunSettings.cache_dir) answers.

File events come from watchfiles (the optional `watch` extra), in background threads that hand batches of changed
paths to the main thread; a burst of writes (an editor's save) is one batch. Ctrl-C stops the threads and ends the
session with exit status 0.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from dataclasses import dataclass, field

from hexlint import cli
from hexlint.baseline import entries_for
from hexlint.config import load_config
from hexlint.core import Diagnostic
from hexlint.discover import find_repository_root, is_binary, is_source, self_and_parents
from hexlint.engine import (
    InputError,
    InternalError,
    LintResult,
    context_mode,
    display_path,
    enabled_rules,
    lint,
    release_run_memory,
    tree_root_for,
)
from hexlint.report import sort_key, summary_line
from hexlint.report.text import render_one

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterable, Sequence
    from typing import Any, TextIO

    from hexlint.config import Config
    from hexlint.engine import RunSettings

# A batch of events ends after QUIET_MS without a new one (an editor's save is several writes within a few ms), or
# after BATCH_MS at most (a checkout switching branches).
QUIET_MS = 100
BATCH_MS = 1600
READY_TIMEOUT = 10.0  # seconds to wait for a watcher thread to have its watches in place
STOP_TIMEOUT = 2.0  # seconds to wait for a watcher thread to end
SHOWN_PATHS = 3  # changed files named in a header; the rest are counted

# Options whose output is not a report of findings (or not text), or that write files: the watch prints text reports.
INCOMPATIBLE_OPTIONS = (
    ("fix", "--fix"),
    ("diff", "--diff"),
    ("write_baseline", "--write-baseline"),
    ("add_suppressions", "--add-suppressions"),
    ("stdin_filename", "--stdin-filename"),
    ("output", "--output"),
    ("statistics", "--statistics"),
    ("show_settings", "--show-settings"),
    ("show_files", "--show-files"),
)
# Names of files that change what a run does wherever they sit in a watched directory.
CONFIGURATION_NAMES = frozenset({"hexlint.toml", "pyproject.toml", ".gitignore"})
BUILD_NAMES = frozenset({"CMakeLists.txt", "compile_commands.json"})
BUILD_SUFFIXES = (".cmake", ".idl")


def check_arguments(arguments: argparse.Namespace) -> None:
    """Refuse what --watch cannot do, before anything is read (stdin for --stdin-filename) or linted."""
    if arguments.format != "text":
        raise cli.UsageError(f"--watch: prints text reports, not {arguments.format}")
    for option, flag in INCOMPATIBLE_OPTIONS:
        value = getattr(arguments, option, None)
        if value is not None and value is not False:
            raise cli.UsageError(f"--watch cannot be combined with {flag}")
    try:
        import watchfiles  # noqa: F401  (the one place that asks: a run without --watch never imports it)
    except ImportError:
        raise cli.UsageError(
            "--watch needs the watchfiles package: install hexlint[watch] (or `pip install watchfiles`)"
        ) from None


# ---------------------------------------------------------------- what changed


@dataclass(frozen=True)
class FindingChanges:
    """The findings of a run that the previous run did not have, and those it had that are gone; in report order."""

    new: tuple[Diagnostic, ...] = ()
    fixed: tuple[Diagnostic, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.new or self.fixed)


def _by_fingerprint(diagnostics: Iterable[Diagnostic], base_dir: str) -> dict[tuple[str, str, str], Diagnostic]:
    paired = entries_for(diagnostics, base_dir)
    return {(entry.code, entry.path, entry.fingerprint): diagnostic for diagnostic, entry in paired}


def finding_changes(
    previous: Sequence[Diagnostic], current: Sequence[Diagnostic], base_dir: str | None = None
) -> FindingChanges:
    """What appeared and what went away between two runs, findings matched by their baseline fingerprint (code,
    path, offending line's text, occurrence): a finding whose line only moved is the same finding."""
    base_dir = base_dir or os.getcwd()
    before = _by_fingerprint(previous, base_dir)
    after = _by_fingerprint(current, base_dir)
    new = sorted((after[key] for key in after.keys() - before.keys()), key=sort_key)
    fixed = sorted((before[key] for key in before.keys() - after.keys()), key=sort_key)
    return FindingChanges(tuple(new), tuple(fixed))


def change_lines(changes: FindingChanges, verbose: bool = False) -> list[str]:
    """`- ` lines for the findings gone and `+ ` lines for the new, in report order (at one place, `-` first)."""
    signed = [(sort_key(item), 0, "- " + render_one(item, verbose)) for item in changes.fixed]
    signed += [(sort_key(item), 1, "+ " + render_one(item, verbose)) for item in changes.new]
    return [line for _, _, line in sorted(signed)]


def changed_header(paths: Iterable[str], when: float | None = None) -> str:
    """`[14:03:07] htp/add-ops.c changed`, naming at most SHOWN_PATHS files."""
    stamp = time.strftime("%H:%M:%S", time.localtime(when))
    return f"[{stamp}] {_few(display_path(path) for path in paths)} changed"


def _few(names: Iterable[str]) -> str:
    """`a, b, c and 2 more`: the first SHOWN_PATHS names in order, the rest counted."""
    shown = sorted(set(names))
    named = ", ".join(shown[:SHOWN_PATHS])
    return named + (f" and {len(shown) - SHOWN_PATHS} more" if len(shown) > SHOWN_PATHS else "")


def change_summary(changes: FindingChanges, result: LintResult, seconds: float, unsafe_fixes: bool = False) -> str:
    """`1 new, 0 fixed. Found 2 findings ... (0.31 s, 1 of 4 units parsed)`."""
    what = f"{len(changes.new)} new, {len(changes.fixed)} fixed." if changes else "No change in findings."
    timing = f"{seconds:.2f} s"
    if result.units:
        timing += f", {result.parsed_units} of {result.units} units parsed"
    return f"{what} {summary_line(result.diagnostics, result.files_checked, 0, unsafe_fixes)} ({timing})"


# ---------------------------------------------------------------- what to watch


@dataclass(frozen=True)
class WatchPlan:
    """`trees`: directories watched with their subdirectories; `directories`: watched alone (where the configuration,
    a named file or an included header from elsewhere sits); `files`: the real paths that matter in `directories`."""

    trees: frozenset[str] = frozenset()
    directories: frozenset[str] = frozenset()
    files: frozenset[str] = frozenset()


def _within(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _outermost(directories: Iterable[str]) -> frozenset[str]:
    """The directories not below another one of them (a watch of a tree covers its subdirectories)."""
    ordered = sorted(set(directories), key=len)
    kept: list[str] = []
    for directory in ordered:
        if not any(_within(directory, outer) for outer in kept):
            kept.append(directory)
    return frozenset(kept)


def _unchanging_roots() -> list[str]:
    """Where headers do not change while one edits a tree: what the cache knows by size and mtime alone (the
    system's headers, libclang's, hexlint's own stand-ins)."""
    from hexlint.results_cache import stat_only_roots

    return [os.path.realpath(root) for root in stat_only_roots()]


def _configuration_directories(start: str, config: Config) -> list[str]:
    """The directories where a configuration or .gitignore file would change the run: from the PATH's directory up
    to the checkout's root or the configuration's directory, whichever is higher; outside a checkout, every parent
    (the configuration is looked for up to the file system's root). Each is watched alone: a few watches."""
    directory = start if os.path.isdir(start) else os.path.dirname(start) or "."
    chain = self_and_parents(os.path.realpath(directory))
    root = find_repository_root(chain[0])
    if root is None:
        return chain
    tops = [os.path.realpath(root)]
    if config.path:
        tops.append(os.path.dirname(os.path.realpath(config.path)))
    last = max((chain.index(top) for top in tops if top in chain), default=len(chain) - 1)
    return chain[: last + 1]


def watch_plan(
    paths: Sequence[str], config: Config, settings: RunSettings, result: LintResult | None = None
) -> WatchPlan:
    """What to watch for a run of PATHS (and, once it ran, the headers its units read)."""
    trees = [os.path.realpath(path) for path in paths if os.path.isdir(path)]
    named_files = [os.path.realpath(path) for path in paths if os.path.isfile(path)]
    rules = result.rules if result is not None else enabled_rules(config, settings)
    if context_mode(config, settings) == "tree" and any(rule.scope == "project" for rule in rules):
        explicit = settings.project_root or config.project_root
        if explicit:
            trees.append(os.path.realpath(explicit))
        else:
            # A directory's own tree is the one its files belong to: the probe names a file inside it.
            probes = [os.path.join(path, "-") if os.path.isdir(path) else path for path in paths]
            trees += [os.path.realpath(root) for root in map(tree_root_for, probes) if root is not None]
    trees_kept = _outermost(path for path in trees if os.path.isdir(path))
    single = [*named_files]
    for given in (config.path, settings.baseline, settings.compile_commands or config.compile_commands):
        if given and os.path.exists(given):
            single.append(os.path.realpath(given))
    unchanging = _unchanging_roots()
    for dependency in result.dependencies if result is not None else ():
        if dependency.startswith("dir:"):  # the cache's record of a directory listing, not a file
            continue
        real = os.path.realpath(dependency)
        if not any(_within(real, root) for root in unchanging):
            single.append(real)
    # Each file counts wherever it is (a baseline inside the tree is no source); those outside the trees need their
    # directory watched.
    files = frozenset(single)
    directories = {os.path.dirname(path) for path in files}
    for path in paths:
        directories.update(_configuration_directories(path, config))
    lone = {
        directory
        for directory in directories
        if os.path.isdir(directory) and not any(_within(directory, tree) for tree in trees_kept)
    }
    return WatchPlan(trees_kept, frozenset(lone), files)


@dataclass(frozen=True)
class Relevance:
    """Which file events can change a run: sources, binaries, configuration and build files in the trees (outside
    hidden directories and the cache), and in the lone directories the files that matter there."""

    plan: WatchPlan
    cache_dir: str | None = None

    def __call__(self, change: Any, path: str) -> bool:
        real = os.path.realpath(path)
        if real in self.plan.files:
            return True
        if self.cache_dir is not None and _within(real, self.cache_dir):
            return False
        name = os.path.basename(real)
        tree = next((tree for tree in self.plan.trees if _within(real, tree)), None)
        if tree is None:  # a lone directory: only a configuration appearing there matters besides its files
            return name in CONFIGURATION_NAMES
        relative = os.path.relpath(os.path.dirname(real), tree)
        if relative != "." and any(part.startswith(".") for part in relative.split(os.sep)):
            return False  # in a hidden directory (discovery skips them): a tool's own files, a virtualenv
        if name in CONFIGURATION_NAMES:
            return True
        if name.startswith("."):  # an editor's lock or swap file
            return False
        if is_source(real) or is_binary(real) or name in BUILD_NAMES or name.endswith(BUILD_SUFFIXES):
            return True
        # A directory moved in carries files that raise no events of their own.
        return os.path.isdir(real)


# ---------------------------------------------------------------- the watcher threads


class _StopFlag:
    """The stop event handed to watchfiles; its first question also says the watches are in place (watchfiles
    asks after it has set them up, at every step of its wait)."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.ready = threading.Event()
        self.failure: Exception | None = None  # why the watches could not be set up

    def is_set(self) -> bool:
        self.ready.set()
        return self.stop.is_set()


@dataclass
class Watcher:
    """Background threads watching a plan's directories; batches of changed paths (or an error) arrive on `batches`.
    A plan that grows starts threads for what is new; what is watched already stays watched. Every thread filters
    its events with the newest plan's Relevance (a header first included from a directory already watched counts)."""

    cache_dir: str | None = None
    batches: queue.Queue = field(default_factory=queue.Queue)
    _relevance: Relevance = field(default_factory=lambda: Relevance(WatchPlan()))
    _threads: list[tuple[threading.Thread, _StopFlag]] = field(default_factory=list)
    _trees: set[str] = field(default_factory=set)
    _directories: set[str] = field(default_factory=set)

    def watch(self, plan: WatchPlan) -> None:
        new_trees = sorted(tree for tree in plan.trees if not any(_within(tree, old) for old in self._trees))
        trees = self._trees | set(new_trees)
        new_directories = sorted(
            directory
            for directory in plan.directories
            if directory not in self._directories and not any(_within(directory, tree) for tree in trees)
        )
        cache_dir = os.path.realpath(self.cache_dir) if self.cache_dir else None
        self._relevance = Relevance(plan, cache_dir)  # one assignment: a thread sees the old plan or the new
        started = []
        for roots, recursive in ((new_trees, True), (new_directories, False)):
            if roots:
                started.append(self._start(roots, recursive))
        self._trees.update(new_trees)
        self._directories.update(new_directories)
        for flag in started:
            if not flag.ready.wait(READY_TIMEOUT):
                raise InputError("--watch: the file watcher did not start")
            if flag.failure is not None:
                raise flag.failure

    def _start(self, roots: list[str], recursive: bool) -> _StopFlag:
        flag = _StopFlag()
        thread = threading.Thread(target=self._run, args=(roots, recursive, flag), name="hexlint-watch", daemon=True)
        self._threads.append((thread, flag))
        thread.start()
        return flag

    def _relevant(self, change: Any, path: str) -> bool:
        return self._relevance(change, path)

    def _run(self, roots: list[str], recursive: bool, flag: _StopFlag) -> None:
        import watchfiles

        try:
            for changes in watchfiles.watch(
                *roots,
                watch_filter=self._relevant,
                debounce=BATCH_MS,
                step=QUIET_MS,
                stop_event=flag,
                recursive=recursive,
                raise_interrupt=False,
            ):
                self.batches.put({path for _, path in changes})
        except Exception as error:  # a directory that vanished, the system's limit of watches: the session says so
            failure = InputError(f"--watch: cannot watch {', '.join(map(display_path, roots))}: {error}")
            if flag.ready.is_set():
                self.batches.put(failure)
            else:
                flag.failure = failure
        finally:
            flag.ready.set()

    def next_changes(self) -> set[str]:
        """The paths changed since the last call, waiting for at least one; several batches waiting are one."""
        while True:
            try:
                item = self.batches.get(timeout=0.5)  # a timeout keeps Ctrl-C prompt on every platform
            except queue.Empty:
                continue
            changed: set[str] = set()
            while True:
                if isinstance(item, Exception):
                    raise item
                changed |= item
                try:
                    item = self.batches.get_nowait()
                except queue.Empty:
                    return changed

    def stop(self) -> None:
        for _, flag in self._threads:
            flag.stop.set()
        for thread, _ in self._threads:
            thread.join(STOP_TIMEOUT)
        self._threads.clear()


# ---------------------------------------------------------------- the session


class WatchSession:
    def __init__(
        self,
        arguments: argparse.Namespace,
        paths: Sequence[str],
        settings: RunSettings,
        stdout: TextIO,
        stderr: TextIO,
    ) -> None:
        self.arguments = arguments
        self.paths = list(paths)
        self.settings = settings
        self.stdout = stdout
        self.stderr = stderr
        self.watcher = Watcher(settings.cache_dir)
        self._config_notes: tuple[str, ...] = ()

    def _lint(self, config: Config) -> LintResult:
        """One run, as `hexlint PATHS` runs it (a fresh progress line, the configuration's cache directory)."""
        arguments = self.arguments
        settings = cli._with_configuration(self.settings, arguments, config, self.paths, self.stderr)
        self.watcher.cache_dir = settings.cache_dir  # the configuration may name another
        try:
            result = lint(self.paths, config, settings)
        finally:
            if settings.progress is not None:
                settings.progress.finish()
        if arguments.warnings_as_errors:
            result = cli._warnings_as_errors(result)
        if result.files_checked == 0:
            raise InputError(f"{', '.join(self.paths)}: no C/C++ sources or ELF files to lint")
        return result

    def _config(self) -> Config:
        config = load_config(self.arguments.config, self.paths[0])
        if config.notes != self._config_notes:
            for note in config.notes:
                self.stderr.write(f"hexlint: warning: {note}\n")
            self._config_notes = config.notes
        return config

    def _write_report(self, result: LintResult) -> None:
        """The first run's report, as a normal run prints it."""
        arguments = self.arguments
        self.stdout.write(cli.render_report(result, arguments))
        self.stdout.flush()
        if arguments.quiet:
            return
        for note in result.notes:
            self.stderr.write(f"hexlint: note: {note}\n")
        extra = f" ({len(result.baselined)} hidden by the baseline)" if result.baselined else ""
        summary = summary_line(result.diagnostics, result.files_checked, 0, self.settings.unsafe_fixes)
        self.stderr.write(summary + extra + "\n")

    def run(self, config: Config) -> int:
        self._config_notes = config.notes
        plan = watch_plan(self.paths, config, self.settings)
        self.watcher.watch(plan)  # before the first run: an edit made while it runs is seen after it
        result = self._lint(config)
        self._write_report(result)
        release_run_memory()  # while nothing changes: each run's trees would otherwise stay
        plan = watch_plan(self.paths, config, self.settings, result)
        self.watcher.watch(plan)
        if not self.arguments.quiet:
            self.stderr.write(watching_line(plan) + "\n")
            self.stderr.flush()
        while True:
            try:
                changed = self.watcher.next_changes()
            except InputError as error:  # a watcher thread ended: what the others watch is still linted
                self._error(error)
                continue
            self.stderr.write(changed_header(changed) + "\n")
            self.stderr.flush()
            started = time.monotonic()
            try:
                config = self._config()
                current = self._lint(config)
            except (*cli._input_errors(), InternalError) as error:
                self._error(error)
                continue
            changes = finding_changes(result.diagnostics, current.diagnostics)
            lines = change_lines(changes, self.arguments.verbose)
            if lines:
                self.stdout.write("\n".join(lines) + "\n")
                self.stdout.flush()
            if not self.arguments.quiet:
                seconds = time.monotonic() - started
                self.stderr.write(change_summary(changes, current, seconds, self.arguments.unsafe_fixes) + "\n")
                self.stderr.flush()
            result = current
            release_run_memory()
            try:
                self.watcher.watch(watch_plan(self.paths, config, self.settings, result))
            except InputError as error:  # a directory gone between the run and its watch: the rest is watched
                self._error(error)

    def _error(self, error: Exception) -> None:
        self.stderr.write(f"hexlint: error: {error}\n")
        self.stderr.flush()

    def close(self) -> None:
        self.watcher.stop()


def watching_line(plan: WatchPlan) -> str:
    """`hexlint: watching ggml-hexagon (and 4 directories of its configuration and headers); Ctrl-C stops`."""
    named = _few(display_path(tree) for tree in plan.trees)
    lone = len(plan.directories)
    if lone:
        where = f"{lone} {'directory' if lone == 1 else 'directories'} of the configuration and headers"
        named = f"{named} (and {where})" if named else where
    return f"hexlint: watching {named} for changes; Ctrl-C stops"


def run_watch(
    arguments: argparse.Namespace,
    paths: Sequence[str],
    config: Config,
    settings: RunSettings,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    """The --watch session; Ctrl-C ends it with exit status 0. An error of the first run ends it as it ends a normal
    run (exit 2); an error of a later run (a file half written, a configuration mistyped) is a line, and it waits on."""
    session = WatchSession(arguments, paths, settings, stdout, stderr)
    try:
        return session.run(config)
    except KeyboardInterrupt:
        session.close()
        # On a terminal the ^C that was echoed has no newline of its own.
        stderr.write(("\n" if _is_terminal(stderr) else "") + "hexlint: stopped watching\n")
        return cli.EXIT_CLEAN
    finally:
        session.close()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False
