"""Orchestration of one lint run: discover -> text rules -> parse C -> source rules -> binary rules
-> per-file-ignores and selection -> suppressions -> baseline; and --fix / --diff on top.

Headers: a header (.h/.hpp) is always linted by the text rules. For the source rules it is seen through the
translation units that include it (the C front end indexes a project header in the first TU including it, so
its facts are gathered once and in the context the build gives it). A header that no TU of the run includes is
parsed on its own, so a pre-commit run on a changed header alone still checks it.

No function here prints; the CLI decides what to show.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

from hexlint import registry
from hexlint.config import Config, ignored_codes_for, path_matches_glob, rule_options
from hexlint.core import Diagnostic, Fix, Related, Rule, Source, Span
from hexlint.discover import (
    DiscoveryError,
    discover,
    find_repository_root,
    is_translation_unit,
    read_bytes_or_none,
    self_and_parents,
    spelled,
)

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from hexlint.suppress import Suppression

PARSE_ERROR = "HX002"
UNUSED_SUPPRESSION = "HX001"  # hexlint.suppress.UNUSED_SUPPRESSION: that module loads only for files with directives
MAX_FIX_PASSES = 10
# Rules with `scope = "project"` in their document (facts spanning files: host writes vs kernel reads, dispatch tables,
# workers and trace helpers elsewhere) see the rest of the tree as context in a partial run.
DEFAULT_CONTEXT = "tree"


class InputError(Exception):
    """Bad input the user must fix (a path, a file, an option); the message names it. Exit status 2."""


class InternalError(Exception):
    """A bug in hexlint or a rule; the message names the rule and file. Exit status 2, traceback with -v."""


@dataclass(frozen=True)
class RunSettings:
    """What the command line adds to (or overrides in) the configuration."""

    select: tuple[str, ...] = ()  # replaces the config's select when given
    ignore: tuple[str, ...] = ()  # extends the config's ignore
    extend_select: tuple[str, ...] = ()  # added to the select in effect (--extend-select)
    stdin: bytes | None = None  # `--stdin-filename PATH -`: the text linted as PATH instead of the PATHS' files
    stdin_filename: str | None = None
    arch: str | None = None
    compile_commands: str | None = None
    include_dirs: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    kernel_globs: tuple[str, ...] = ()  # the fixture runner marks single-file kernel fixtures
    jobs: int = 0  # files parsed and libraries audited at once; 0: one per core this process may use
    fix: bool = False
    unsafe_fixes: bool = False  # --unsafe-fixes: --fix and --diff also take the fixes marked unsafe
    fix_read_only: bool = False  # --fix rewrites read-only files too (they stay read-only)
    diff: bool = False
    baseline: str | None = None
    context: str | None = None  # tree | files; replaces the config's `context`
    no_cmake_defines: bool = False  # --no-cmake-defines: take no define from the tree's CMakeLists.txt files
    project_root: str | None = None  # replaces the config's `project-root`
    # The persistent cache's directory (hexlint/cache.py); None: no cache. The CLI resolves --cache-dir, --no-cache,
    # HEXLINT_CACHE_DIR and the config's `cache-dir` into it.
    cache_dir: str | None = None
    # Told of units parsed and libraries audited as they finish (the CLI's progress line on a terminal).
    progress: Callable[[str, int, int], None] | None = None
    binary_arguments: argparse.Namespace | None = None  # the parsed CLI, for the binary audit's own options


@dataclass(frozen=True)
class LintResult:
    diagnostics: tuple[Diagnostic, ...]  # what to report, sorted
    rules: tuple[Rule, ...]  # the rules that were enabled
    files_checked: int
    suppressed: tuple[Diagnostic, ...] = ()
    baselined: tuple[Diagnostic, ...] = ()
    fixed: int = 0  # fixes applied (--fix) or that the diff would apply (--diff)
    diff: str = ""
    binary_report: str = ""
    binary_tables: tuple[dict[str, object], ...] = ()  # the audit table as data, one per library (--format json)
    changed_files: tuple[str, ...] = ()
    context_files: int = 0  # files outside the run parsed so the cross-file rules see the whole tree
    notes: tuple[str, ...] = ()  # what the backend model says about the tree (e.g. a rule holding back, and why)
    # The defines the tree's build files gave (`-v` shows them), then what their reader left out and why.
    build_defines: tuple[str, ...] = ()
    # Units libclang parsed in this run, of all the run's units (the rest came from the cache), and what the cache
    # did for the source files ("hit", "hit from the whole tree's run", "miss", "" when there is none).
    parsed_units: int = 0
    units: int = 0
    cache_outcome: str = ""
    # The files the source run's units read: their own and every header they include (what --watch watches).
    dependencies: tuple[str, ...] = ()


# ---------------------------------------------------------------- selection


def _specificity(rule: Rule | registry.RuleKey, selectors: Iterable[str]) -> int:
    """How precisely the best selector names this rule: a name or full code beats a longer prefix beats ALL."""
    best = -1
    for selector in selectors:
        if not registry.matches_selector(rule, selector):
            continue
        text = selector.strip()
        if text.lower() == rule.name or text.upper() == rule.code.upper():
            best = max(best, 100)
        elif text.upper() == "ALL":
            best = max(best, 0)
        else:
            best = max(best, len(text))
    return best


def is_enabled(rule: Rule | registry.RuleKey, select: Sequence[str], ignore: Sequence[str]) -> bool:
    """Like ruff: the more specific of the best select and best ignore selector decides; a tie means ignored."""
    return _specificity(rule, select) > _specificity(rule, ignore)


def selectors_in_effect(config: Config, settings: RunSettings) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(select, ignore) as ruff layers them: --select replaces the configuration's select and its extend-select,
    --extend-select adds to whichever select is in effect; every ignore and extend-ignore adds up."""
    base = settings.select or (*(config.select or ("ALL",)), *config.extend_select)
    return (*base, *settings.extend_select), (*config.ignore, *settings.ignore)


def enabled_rules(config: Config, settings: RunSettings) -> tuple[Rule, ...]:
    select, ignore = selectors_in_effect(config, settings)
    enabled = [registry.rule_at(key.path) for key in registry.rule_keys() if is_enabled(key, select, ignore)]
    # Parse errors are shown whenever C is parsed, unless the user ignores HX002 explicitly (ruff shows syntax errors).
    parse_error = registry.find_rule(PARSE_ERROR) if any(rule.kind == "source" for rule in enabled) else None
    if parse_error is not None and parse_error not in enabled and _specificity(parse_error, ignore) <= 0:
        enabled.append(parse_error)
    return tuple(sorted(enabled, key=lambda rule: rule.code))


def unknown_selectors(selectors: Iterable[str]) -> list[str]:
    return [selector for selector in selectors if not registry.is_known_selector(selector)]


# ---------------------------------------------------------------- paths


def display_path(path: str | os.PathLike[str]) -> str:
    """Paths below the working directory are shown relative to it, others absolute."""
    absolute = os.path.abspath(path)
    cwd = os.getcwd()
    below = cwd if cwd.endswith(os.sep) else cwd + os.sep
    if absolute.startswith(below):  # the common case, without relpath's normalizing of both sides
        return absolute[len(below) :]
    relative = os.path.relpath(absolute, cwd)
    return absolute if relative.startswith("..") else relative


# realpath() lstat()s every component of a path. Within a run the tree's links do not change: each directory is
# resolved once, and a file costs one lstat (is it a link itself?). `lint` starts and ends every run with empty memos.
_real_directories: dict[str, str] = {}
_real_paths: dict[str, str] = {}


def path_key(path: str) -> str:
    """The real path of a file: the one spelling a run compares files by (memoized for the run)."""
    absolute = os.path.abspath(path)
    key = _real_paths.get(absolute)
    if key is None:
        key = _real_paths[absolute] = _resolve(absolute)
    return key


def _resolve(absolute: str) -> str:
    directory, name = os.path.split(absolute)
    if not name or os.path.islink(absolute):
        return os.path.realpath(absolute)
    real_directory = _real_directories.get(directory)
    if real_directory is None:
        real_directory = _real_directories[directory] = os.path.realpath(directory)
    return os.path.join(real_directory, name)


def forget_real_paths() -> None:
    """Empty the run's real-path memos (links may change between runs of one process)."""
    _real_paths.clear()
    _real_directories.clear()


def with_paths(diagnostic: Diagnostic, spell: Callable[[str], str]) -> Diagnostic:
    """The finding with every path it holds (its span, source span, related places, fix edits) spelled by `spell`;
    the finding itself when that changes nothing."""

    def respelled(span: Span) -> Span:
        shown = spell(span.path) if span.path else span.path
        return span if shown == span.path else replace(span, path=shown)

    span = respelled(diagnostic.span)
    fix = diagnostic.fix
    if span is diagnostic.span and diagnostic.source_span is None and not diagnostic.related and fix is None:
        return diagnostic  # already spelled so (text rules see display paths): no copy
    if fix is not None:
        fix = replace(fix, edits=tuple(replace(edit, path=spell(edit.path)) for edit in fix.edits))
    return replace(
        diagnostic,
        span=span,
        source_span=respelled(diagnostic.source_span) if diagnostic.source_span else None,
        related=tuple(Related(respelled(item.span), item.message) for item in diagnostic.related),
        fix=fix,
    )


def normalize_paths(diagnostic: Diagnostic) -> Diagnostic:
    """One spelling per file in every report, however libclang or a rule spelled the path."""
    return with_paths(diagnostic, display_path)


def role_for(path: str, config: Config, settings: RunSettings) -> str:
    """kernel | host: kernel-globs first, then host-globs (gitignore-style, relative to the config's directory),
    then the front end's default (a path below an `htp` directory is kernel code)."""
    from hexlint.c.settings import HOST, KERNEL, classify

    if any(path_matches_glob(path, glob, config.root) for glob in (*settings.kernel_globs, *config.kernel_globs)):
        return KERNEL
    if any(path_matches_glob(path, glob, config.root) for glob in config.host_globs):
        return HOST
    return classify(_placement(path))


def _placement(path: str) -> str:
    """Where a file sits, independent of the working directory: its real path, relative to its repository when it
    has one (so `cd htp && hexlint .` still sees kernel code, and an `htp` directory above the checkout does not)."""
    real = path_key(path)
    root = find_repository_root(os.path.dirname(real))
    return os.path.relpath(real, root) if root is not None else real


# ---------------------------------------------------------------- reading


def read_source(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as error:
        raise InputError(f"{path}: cannot read: {error.strerror or error}") from None


def _call_check(rule: Rule, subject: Any, options: Mapping[str, Any], where: str) -> list[Diagnostic]:
    if rule.check is None:
        return []
    try:
        return list(rule.check(subject, options))
    except Exception as error:
        raise InternalError(
            f"{where}: internal error in {rule.code} {rule.name}: {type(error).__name__}: {error}"
        ) from error


def run_text_rules(
    sources: Mapping[str, bytes], rules: Sequence[Rule], options: Mapping[str, Mapping[str, Any]]
) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for rule in rules:
        if rule.kind != "text":
            continue
        for path, data in sources.items():
            found.extend(_call_check(rule, Source(path, data), options[rule.code], path))
    return found


# ---------------------------------------------------------------- C front end


def check_compile_commands(path: str) -> None:
    """A compile_commands.json the front end can use: a JSON list of objects with string `file`, `directory`,
    `command` (shell words) or `arguments` (a list of strings). Checked once, so a bad one is one error naming it."""
    import json
    import shlex

    try:
        with open(path, encoding="utf-8") as handle:
            entries = json.load(handle)
    except OSError as error:
        raise InputError(f"{path}: cannot read compile commands: {error.strerror or error}") from None
    except ValueError as error:  # also UnicodeDecodeError
        raise InputError(f"{path}: compile commands are not valid JSON: {error}") from None
    if not isinstance(entries, list):
        raise InputError(f"{path}: compile commands must be a JSON list of entries")
    for number, entry in enumerate(entries, start=1):
        where = f"{path}: entry {number}"
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
            raise InputError(f"{where}: needs a `file` string")
        if not isinstance(entry.get("directory", ""), str) or not isinstance(entry.get("command", ""), str):
            raise InputError(f"{where}: `directory` and `command` must be strings")
        arguments = entry.get("arguments", [])
        if not isinstance(arguments, list) or not all(isinstance(word, str) for word in arguments):
            raise InputError(f"{where}: `arguments` must be a list of strings")
        try:
            shlex.split(entry.get("command", ""))
        except ValueError as error:
            raise InputError(f"{where}: `command` is not valid shell words: {error}") from None


def _parse_settings(config: Config, settings: RunSettings) -> Any:
    from hexlint.c.settings import ParseSettings

    compile_commands = settings.compile_commands or config.compile_commands
    if compile_commands is not None:
        check_compile_commands(compile_commands)
    sdk_root = os.environ.get("HEXAGON_SDK_ROOT") or None
    if sdk_root is not None and not os.path.isdir(sdk_root):
        # Silently falling back to the stand-ins would hide a broken CI set-up.
        raise InputError(f"HEXAGON_SDK_ROOT: {sdk_root}: not a directory")
    return ParseSettings(
        arch=settings.arch or config.arch or "v73",
        include_dirs=(*settings.include_dirs, *config.include_dirs),
        defines=(*settings.defines, *config.defines),
        compile_commands=compile_commands,
        sdk_root=sdk_root,
        unsaved=stdin_unsaved(settings),
    )


def on_file_of_run(diagnostic: Diagnostic, in_run: set[str], unit_path: str) -> Diagnostic:
    """A parse error in a header outside the run is reported where the unit's file includes it (the header's place
    goes to the related locations); a file outside the given paths never gets a finding of its own."""
    if path_key(diagnostic.span.path) in in_run:
        return diagnostic
    sites = [related.span for related in diagnostic.related if path_key(related.span.path) in in_run]
    header = diagnostic.span
    where = f"{display_path(header.path)}:{header.line}" if header.line else display_path(header.path)
    return replace(
        diagnostic,
        message=f"in {where} (included here): {diagnostic.message}",
        span=sites[0] if sites else Span(unit_path),
        related=(Related(header, "the error"),),
        fingerprint_text=f"{os.path.basename(header.path)}: {diagnostic.fingerprint_text}",
    )


def tree_builds(config: Config, settings: RunSettings) -> Any:
    """What reads the defines of the tree's own build files for this run (None when they are turned off)."""
    if not config.cmake_defines or settings.no_cmake_defines:
        return None
    from hexlint.cmake import TreeBuilds

    return TreeBuilds(settings.arch or config.arch or "v73", (*settings.defines, *config.defines))


def unit_parse_settings(path: str, parse_settings: Any, builds: Any) -> Any:
    """A file's parse settings: the run's, with the defines its tree's build files give it."""
    taken = builds.defines_for(path, tree_root_for(path)) if builds is not None else ()
    return replace(parse_settings, build_defines=tuple(define.flag for define in taken)) if taken else parse_settings


def taken_build_defines(builds: Any) -> Iterator[str]:
    """One line per define taken from a tree's build files, then one per thing their reader left out."""
    if builds is None:
        return
    for build in builds.builds.values():
        for directory, own, targets in build.directories:
            shown = display_path(directory)
            seen: dict[str, None] = {}
            for define in [*own, *(define for _, defines in targets for define in defines)]:
                if define.name in builds.overridden:
                    continue
                target = f", target {define.target}" if define.target else ""
                line = f"{shown}: {define.flag} (from {display_path(define.path)}:{define.line}{target})"
                seen.setdefault(line)
            yield from seen
        for note in build.notes:
            yield f"build files: {note}"


def stdin_unsaved(settings: RunSettings) -> tuple[tuple[str, bytes], ...]:
    """The stdin text under its file's absolute path, for libclang to read instead of the disk."""
    if settings.stdin is None or settings.stdin_filename is None:
        return ()
    return ((os.path.abspath(settings.stdin_filename), settings.stdin),)


def _parse_all(
    paths: Sequence[str],
    config: Config,
    settings: RunSettings,
    parse_settings: Any,
    optional: frozenset[str] = frozenset(),
    builds: Any = None,
    unit_cache: Any = None,
) -> list[Any]:
    """Every file of `_parse_stream`, parsed."""
    stream = _parse_stream(paths, config, settings, parse_settings, optional, builds, unit_cache)
    return [unit for unit in stream if unit is not None]


def _parse_stream(
    paths: Sequence[str],
    config: Config,
    settings: RunSettings,
    parse_settings: Any,
    optional: frozenset[str] = frozenset(),
    builds: Any = None,
    unit_cache: Any = None,
) -> Iterator[Any]:
    """Parse files in parallel threads with deep stacks: libclang releases the GIL while it parses (cursors cannot
    cross processes); with a `unit_cache` (hexlint/c/unit_cache.py), a unit whose files are unchanged is loaded
    from its saved AST instead. Each unit is yielded, in the order of `paths`, as soon as it is ready.
    An unreadable file is an input error, or, when its key is in `optional` (context files), left out (None)."""
    from hexlint.c.parse import InputError as ParseInputError
    from hexlint.c.parse import ParsedUnit, arguments_for, parse_unit

    def parse(path: str) -> Any:
        role = role_for(path, config, settings)
        unit_settings = unit_parse_settings(path, parse_settings, builds)
        if not _utf8_name(path):
            # libclang takes file names as UTF-8: it cannot open this file at all. The text rules still read it.
            return None if path_key(path) in optional else ParsedUnit(path, role, None, [_unopenable(path)])
        if unit_cache is not None:
            loaded = unit_cache.load(path, role, arguments_for(path, role, unit_settings))
            if loaded is not None:
                return loaded
        try:
            return parse_unit(path, role, unit_settings)
        except ParseInputError as error:
            if path_key(path) in optional:
                return None
            raise InputError(str(error)) from None

    if not paths:
        return iter(())
    from hexlint.c.parse import deep_stack_results

    work = parse
    if settings.progress is not None:
        import threading

        lock, done, report = threading.Lock(), [0], settings.progress

        def work(path: str) -> Any:
            unit = parse(path)
            with lock:
                done[0] += 1
                report("parsed", done[0], len(paths))
            return unit

    return deep_stack_results(work, paths, settings.jobs or usable_cores())  # type: ignore[return-value]


def usable_cores() -> int:
    """The cores this process may run on (a CPU affinity mask or a container's cpuset counts), at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return os.cpu_count() or 1


def _utf8_name(path: str) -> bool:
    try:
        os.path.abspath(path).encode("utf-8")
    except UnicodeEncodeError:  # bytes that are not UTF-8, kept by Python as lone surrogates
        return False
    return True


def _unopenable(path: str) -> Diagnostic:
    message = "the file name is not valid UTF-8, so libclang cannot open the file; rename it"
    return registry.diagnostic(PARSE_ERROR, message, Span(path), fingerprint_text="file name is not UTF-8")


# ---------------------------------------------------------------- context (the rest of the tree)


def context_mode(config: Config, settings: RunSettings) -> str:
    return settings.context or config.context or DEFAULT_CONTEXT


def _holds_kernel_dir(directory: str) -> bool:
    from hexlint.c.settings import KERNEL_DIR_NAMES

    return any(os.path.isdir(os.path.join(directory, name)) for name in KERNEL_DIR_NAMES)


def tree_root_for(path: str) -> str | None:
    """The backend tree a file belongs to: the nearest directory above it that holds an `htp/` directory, looked
    for up to the repository root (a checkout's `.git`), so an unrelated tree elsewhere is never picked up."""
    for directory in self_and_parents(os.path.dirname(os.path.realpath(path))):
        if _holds_kernel_dir(directory):
            return directory
        if os.path.exists(os.path.join(directory, ".git")):
            return None
    return None


def _tree_roots(sources: Sequence[str]) -> list[str]:
    """The distinct tree roots of the run's files, asking the file system once per directory."""
    by_directory: dict[str, str | None] = {}
    for path in sources:
        directory = os.path.dirname(os.path.abspath(path))
        if directory not in by_directory:
            by_directory[directory] = tree_root_for(path)
    return list(dict.fromkeys(root for root in by_directory.values() if root is not None))


def context_roots(sources: Sequence[str], config: Config, settings: RunSettings) -> list[str]:
    explicit = settings.project_root or config.project_root
    if explicit:
        if not os.path.isdir(explicit):
            raise InputError(f"--project-root: {explicit}: not a directory")
        return [spelled(explicit)]
    return _tree_roots(sources)


def context_sources(sources: Sequence[str], rules: Sequence[Rule], config: Config, settings: RunSettings) -> list[str]:
    """The tree's C/C++ files that are not in the run, when a cross-file rule is on and context is `tree`."""
    if context_mode(config, settings) != "tree" or not any(rule.scope == "project" for rule in rules):
        return []
    in_run = {path_key(path) for path in sources}
    found: dict[str, None] = {}
    for root in context_roots(sources, config, settings):
        try:
            walked = discover([root]).sources
        except DiscoveryError:
            continue  # an unreadable corner of the context: the run still checks its own files
        for path in walked:
            key = path_key(str(path))
            if key not in in_run and not _excluded(path, config):
                found[display_path(path)] = None
    return list(found)


@dataclass
class SourceRun:
    """What parsing and the source rules gave, before it is cut down to the files of the run: what the cache keeps.

    `units`: (path, parsed as context, parse diagnostics) in parse order; `findings`: every source rule's findings on
    every file; `dependencies`: every file the units read (headers included), for the cache to check."""

    units: list[tuple[str, bool, list[Diagnostic]]] = field(default_factory=list)
    findings: list[Diagnostic] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    dependencies: list[str] = field(default_factory=list)
    parsed_units: int = 0  # units parsed by libclang in this run (0 when the cache answered)


def reported_findings(source_run: SourceRun, in_run: set[str]) -> list[Diagnostic]:
    """The findings of a source run on the files of the run: parse errors of its own units (those of headers outside
    the run at their #include), a run header's own errors reached through context units, every rule's findings in
    the run's files."""
    found: list[Diagnostic] = []
    for path, is_context, diagnostics in source_run.units:
        if is_context:
            # A header of the run that only context files include is parsed through them: its errors are the run's.
            found += [diagnostic for diagnostic in diagnostics if path_key(diagnostic.span.path) in in_run]
        else:
            found += [on_file_of_run(diagnostic, in_run, path) for diagnostic in diagnostics]
    found += [diagnostic for diagnostic in source_run.findings if path_key(diagnostic.span.path) in in_run]
    return found


def run_source_rules(
    sources: Sequence[str],
    rules: Sequence[Rule],
    options: Mapping[str, Mapping[str, Any]],
    config: Config,
    settings: RunSettings,
    context: Sequence[str] = (),
    built_libraries: Sequence[Any] = (),
    notes: list[str] | None = None,
    builds: Any = None,
    stats: dict[str, Any] | None = None,
) -> list[Diagnostic]:
    """Parse the TUs (and headers no TU includes), build one Project, run every source rule on it; the findings on
    the files of the run (`reported_findings`). With `settings.cache_dir`, a run whose inputs are unchanged is read
    from the cache instead (hexlint/results_cache.py)."""
    wants_parse = any(rule.kind == "source" or rule.code == PARSE_ERROR for rule in rules)
    if not sources or not wants_parse:
        return []
    parse_settings = _parse_settings(config, settings)
    source_run = None
    cached = None
    if settings.cache_dir is not None:
        from hexlint import results_cache

        cached = results_cache.SourceRunCache.open(
            settings, sources, context, rules, options, config, parse_settings, builds, built_libraries
        )
        if cached is not None:
            source_run = cached.load()
    if source_run is None:
        unit_cache = cached.unit_cache() if cached is not None else None
        if unit_cache is not None:
            unit_cache.wait_for_saver()
        source_run = compute_source_run(
            sources, rules, options, config, settings, parse_settings, context, built_libraries, builds, unit_cache
        )
        if cached is not None:
            cached.store(source_run)
    if stats is not None:
        stats["parsed_units"] = stats.get("parsed_units", 0) + source_run.parsed_units
        stats["units"] = stats.get("units", 0) + len(source_run.units)
        stats["dependencies"] = [*stats.get("dependencies", ()), *source_run.dependencies]
        if cached is not None:
            stats["cache"] = cached.outcome
        elif settings.cache_dir is not None:
            stats["cache"] = "off (no secret to seal entries with: the user's cache directory is not writable)"
    if notes is not None:
        notes.extend(source_run.notes)
    return reported_findings(source_run, {path_key(path) for path in sources})


def _unit_preparation(rules: Sequence[Rule], options: Mapping[str, Mapping[str, Any]]) -> Callable[[Any], None]:
    """What to compute of each unit as it is indexed: the model's shared facts, then each rule's own (its module's
    `prepare_unit`)."""
    from hexlint.backend.model import prepare_unit
    from hexlint.checks import unit_preparer

    hooks = [(hook, options[rule.code]) for rule in rules if (hook := unit_preparer(rule.code)) is not None]

    def prepare(unit: Any) -> None:
        prepare_unit(unit)
        if unit.role == "kernel":
            for hook, rule_options in hooks:
                hook(unit, rule_options)

    return prepare


def _kernels_first(paths: list[str], config: Config, settings: RunSettings) -> list[str]:
    from hexlint.c.settings import KERNEL

    return sorted(paths, key=lambda path: role_for(path, config, settings) != KERNEL)


class _EarlyRules:
    """The source rules run on the kernel units while the host units parse: the findings of each rule that did not
    ask for the host units, by code; a rule that asked leaves no trace in the projects' or the units' memos. `own`:
    the units that hold files of the run, for the rules that judge each file alone (the project itself without
    context)."""

    def __init__(self, project: Any, own: Any, built_libraries: Sequence[Any]) -> None:
        self.project, self.own = project, own
        for subject in (project, own):
            subject.built_libraries = tuple(built_libraries)
        self.kernel_units = project.kernel_units()
        self.findings: dict[str, list[Diagnostic]] = {}
        self.models: list[Any] = []

    def run(self, rules: Sequence[Rule], options: Mapping[str, Mapping[str, Any]]) -> None:
        from hexlint.backend.model import model_of
        from hexlint.c.index import HostUnitsPending

        memos = [self.project.memo, self.own.memo, *(unit.memo for unit in self.kernel_units)]
        with _collector_paused():
            for rule in rules:
                model = model_of(self.project if rule.scope == "project" else self.own)
                before = [set(memo) for memo in memos]
                notes = len(model.notes)
                try:
                    found = _call_check(rule, model, options[rule.code], "project")
                except HostUnitsPending:
                    # Half-built facts would pass for whole ones later: forget all the rule computed.
                    for memo, keys in zip(memos, before, strict=True):
                        for key in set(memo) - keys:
                            del memo[key]
                    del model.notes[notes:]
                    continue
                self.findings[rule.code] = found
                self.models.append(model)

    def holds(self, indexes: Sequence[Any]) -> bool:
        """Whether the whole project has the same kernel units (a lone kernel header indexed after would differ)."""
        final = [index for index in indexes if index.role == "kernel"]
        return len(final) == len(self.kernel_units) and all(
            whole is early for whole, early in zip(final, self.kernel_units, strict=False)
        )


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The rules build many small records and few reference cycles: the cyclic collector, run by allocation counts,
    would rescan them again and again (a tenth of the rules' time on upstream's tree). It runs again after them."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def compute_source_run(
    sources: Sequence[str],
    rules: Sequence[Rule],
    options: Mapping[str, Mapping[str, Any]],
    config: Config,
    settings: RunSettings,
    parse_settings: Any,
    context: Sequence[str] = (),
    built_libraries: Sequence[Any] = (),
    builds: Any = None,
    unit_cache: Any = None,
) -> SourceRun:
    """`context` files (the rest of the tree) are parsed and indexed too, after the run's own units so a header of
    the run is indexed in a unit of the run; the cross-file rules see all of them, the others only the units that
    hold files of the run. `built_libraries`: the LibraryFacts of the libraries the same run audits."""
    from hexlint.backend.model import model_of
    from hexlint.c.index import Project, ProjectBuilder, included_files, project_headers_included
    from hexlint.c.settings import KERNEL

    run_tus = _kernels_first([path for path in sources if is_translation_unit(path)], config, settings)
    context_tus = _kernels_first([path for path in context if is_translation_unit(path)], config, settings)
    in_context = {path_key(path) for path in context_tus}
    project_files = [*sources, *context]
    source_rules = [rule for rule in rules if rule.kind == "source"]
    # Each unit is indexed (walked) as soon as it is parsed, while the threads parse the next ones: the walk costs
    # little more than the last unit's. Units are indexed in the order of a whole run: the run's own, then the
    # context, so a header of the run is indexed in a unit of the run; in each, kernel units before host units, so a
    # header both include is kernel code.
    builder = ProjectBuilder(project_files) if source_rules else None
    # The facts the cross-file rules ask of every kernel unit, computed while the threads parse the next files.
    cross_file = any(rule.scope == "project" for rule in source_rules)
    prepare = _unit_preparation(source_rules, options) if cross_file else None
    # One pool for both, so the context parses in parallel with the run's own files.
    parsed = []
    stream = [*run_tus, *context_tus]
    # Kernel units come first: once the last is indexed, while the host units parse, the rules run on the kernel
    # units (hexlint.c.index.Project.hosts_pending). Not when a host unit of the run comes before a kernel unit of
    # the context: it owns the headers it includes, kernel code among them.
    early: _EarlyRules | None = None
    kernels = [role_for(path, config, settings) == KERNEL for path in stream]
    last_kernel = max((at for at, kernel in enumerate(kernels) if kernel), default=-1)
    early_at = -1
    if builder is not None and -1 < last_kernel < len(stream) - 1 and all(kernels[: last_kernel + 1]):
        early_at = last_kernel
    for position, unit in enumerate(
        _parse_stream(stream, config, settings, parse_settings, frozenset(in_context), builds, unit_cache)
    ):
        if unit is not None:
            parsed.append(unit)
            if builder is not None:
                index = builder.add(unit, freeze=early is None)
                if prepare is not None:
                    prepare(index)
        if position == early_at and builder is not None:
            whole = builder.project(hosts_pending=True)
            own_early = whole
            if context_tus:
                in_run = {path_key(path) for path in sources}
                own_units = [index for index in builder.indexes if index.indexed_files & in_run]
                own_early = Project(own_units, hosts_pending=True)
            early = _EarlyRules(whole, own_early, built_libraries)
            early.run(source_rules, options)
    units = [unit for unit in parsed if path_key(unit.path) not in in_context]
    context_units = [unit for unit in parsed if path_key(unit.path) in in_context]
    included = {header for unit in parsed for header in project_headers_included(unit, project_files)}
    lone_headers = [path for path in sources if not is_translation_unit(path) and path_key(path) not in included]
    # A header of the tree that no unit includes is parsed on its own, as context when it is not the run's: a part of
    # the tree sees what the whole tree's run sees.
    lone_context = [path for path in context if not is_translation_unit(path) and path_key(path) not in included]
    in_context |= {path_key(path) for path in lone_context}
    lone = _parse_all(
        [*lone_headers, *lone_context], config, settings, parse_settings, frozenset(in_context), builds, unit_cache
    )
    lone_units = [unit for unit in lone if path_key(unit.path) not in in_context]
    lone_context_units = [unit for unit in lone if path_key(unit.path) in in_context]
    units += lone_units
    context_units += lone_context_units
    loaded = sum(1 for unit in [*units, *context_units] if getattr(unit, "from_cache", False))
    source_run = SourceRun(
        units=[(unit.path, False, list(unit.diagnostics)) for unit in units]
        + [(unit.path, True, list(unit.diagnostics)) for unit in context_units],
        dependencies=list(
            dict.fromkeys(name for unit in [*units, *context_units] for name in [unit.path, *included_files(unit)])
        ),
        parsed_units=len(units) + len(context_units) - loaded,
    )
    fresh = [unit for unit in [*units, *context_units] if not getattr(unit, "from_cache", False)]
    if builder is None:
        if unit_cache is not None:
            unit_cache.save(fresh)
        return source_run
    in_run = {path_key(path) for path in sources}
    if lone_units and len(builder.indexes) > len(units) - len(lone_units):
        # The run's lone headers come before the context in a whole run's order: the context units are indexed again
        # after them, so each owns what it would there (rare: a run holding a header no unit includes).
        reordered = ProjectBuilder(project_files)
        for index in builder.indexes[: len(units) - len(lone_units)]:
            reordered.adopt(index)
        for unit in [*lone_units, *context_units[: len(context_units) - len(lone_context_units)]]:
            reordered.add(unit, freeze=early is None)
        builder = reordered
    else:
        for unit in lone_units:
            builder.add(unit, freeze=early is None)
    for unit in lone_context_units:
        builder.add(unit, freeze=early is None)
    if early is not None and early.holds(builder.indexes):
        # No kernel unit came after the early rules (a lone kernel header would): theirs are the run's findings.
        project = early.project
        project.complete(builder.indexes)
        done = early.findings
    else:
        project = builder.project()
        done = {}
    project.built_libraries = tuple(built_libraries)
    own = project
    if context_units:
        own_units = [unit for unit in project.units if unit.indexed_files & in_run]
        own = Project(own_units, built_libraries=project.built_libraries)
    models = [] if early is None or not done else list(early.models)
    with _collector_paused():
        for rule in source_rules:
            if rule.code in done:
                source_run.findings.extend(done[rule.code])
                continue
            # Every rule of one scope queries the same backend model: each fact is computed once per run.
            subject = model_of(project if rule.scope == "project" else own)
            models.append(subject)
            source_run.findings.extend(_call_check(rule, subject, options[rule.code], "project"))
    source_run.notes = list(dict.fromkeys(note for model in models for note in model.notes))
    if unit_cache is not None:
        # After the rules, by a detached process: the next run after an edit re-parses only the units it changed.
        unit_cache.save(fresh)
    return source_run


# ---------------------------------------------------------------- binaries


def binary_namespace(arguments: argparse.Namespace | None) -> argparse.Namespace:
    """The binary audit's options: the CLI's when linting from the CLI, else the audit's defaults."""
    if arguments is not None:
        return arguments
    from hexlint.binary.options import add_binary_arguments

    parser = argparse.ArgumentParser(add_help=False)
    add_binary_arguments(parser)
    return parser.parse_args([])


def run_binary_rules(
    binaries: Sequence[str],
    options: Mapping[str, Mapping[str, Any]],
    settings: RunSettings,
    tables: list[dict[str, object]] | None = None,
    enabled: Iterable[str] | None = None,
    facts: list[Any] | None = None,
) -> tuple[list[Diagnostic], str]:
    """`enabled`: the rule codes the run selected (the audit runs, gates and reports only those of them)."""
    if not binaries:
        return [], ""
    try:
        from hexlint.binary.run import audit_paths
    except ImportError:
        raise InputError(f"{binaries[0]}: the binary audit is not available in this hexlint build") from None
    namespace = binary_namespace(settings.binary_arguments)
    try:
        diagnostics, report = audit_paths(
            list(binaries),
            namespace,
            options,
            tables,
            settings.jobs or usable_cores(),
            enabled=enabled,
            facts=facts,
            cache_dir=settings.cache_dir,
            progress=settings.progress,
        )
    except (InputError, InternalError):
        raise
    except (OSError, ValueError) as error:
        raise InputError(str(error)) from None
    return list(diagnostics), report


# ---------------------------------------------------------------- filtering


def _code_ignored_for(path: str, code: str, config: Config) -> bool:
    rule = registry.find_rule(code)
    return rule is not None and any(
        registry.matches_selector(rule, selector) for selector in ignored_codes_for(path, config)
    )


def with_fingerprint_text(diagnostic: Diagnostic, read: Callable[[str], bytes | None]) -> Diagnostic:
    """Fill an empty fingerprint_text with the offending source line, so baselines survive edits above it."""
    if diagnostic.fingerprint_text or diagnostic.span.line is None:
        return diagnostic
    data = read(diagnostic.span.path)
    if data is None:
        return diagnostic
    lines = data.splitlines()
    line = diagnostic.span.line
    text = lines[line - 1].decode("utf-8", "replace").strip() if 0 < line <= len(lines) else ""
    return replace(diagnostic, fingerprint_text=text or diagnostic.message)


class _FileCache:
    """Bytes of files diagnostics point at (sources of the run, and headers they reach)."""

    def __init__(self, sources: Mapping[str, bytes]) -> None:
        self._by_key: dict[str, bytes | None] = {path_key(path): data for path, data in sources.items()}

    def read(self, path: str) -> bytes | None:
        key = path_key(path)
        if key not in self._by_key:
            self._by_key[key] = read_bytes_or_none(path)
        return self._by_key[key]


def _suppressions_in(paths: Iterable[str], cache: _FileCache) -> list[Suppression]:
    found: list[Suppression] = []
    seen: set[str] = set()
    for path in paths:
        key = path_key(path)
        if key in seen:
            continue
        seen.add(key)
        data = cache.read(path)
        if data is not None and b"hexlint" in data:  # most files have no directive: the lexer is not even imported
            from hexlint.suppress import find_suppressions

            found.extend(find_suppressions(Source(path, data)))
    return found


# ---------------------------------------------------------------- one pass


class OptionsByCode(Mapping):  # Mapping[str, Mapping[str, Any]]
    """Rule code -> the rule's options (its document's defaults, the config's overrides), each read on first
    look-up: a run reads only the options of the rules it runs, and so parses no other rule's [options]."""

    def __init__(self, config: Config) -> None:
        self._config = config
        self._by_code: dict[str, Mapping[str, Any]] = {}

    def __getitem__(self, code: str) -> Mapping[str, Any]:
        options = self._by_code.get(code)
        if options is None:
            rule = registry.find_rule(code)
            if rule is None or rule.code != code:
                raise KeyError(code)
            options = self._by_code[code] = rule_options(rule, self._config)
        return options

    def __iter__(self) -> Iterator[str]:
        return (key.code for key in registry.rule_keys())

    def __len__(self) -> int:
        return len(registry.rule_keys())


@dataclass
class _Pass:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    suppressed: tuple[Diagnostic, ...] = ()
    baselined: tuple[Diagnostic, ...] = ()
    sources: dict[str, bytes] = field(default_factory=dict)
    binary_report: str = ""
    binary_tables: tuple[dict[str, object], ...] = ()
    files_checked: int = 0
    context_files: int = 0
    notes: tuple[str, ...] = ()
    build_defines: tuple[str, ...] = ()
    stats: dict[str, Any] = field(default_factory=dict)


def one_per_place(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """A header's problem reached through several TUs is one finding: equal findings are one, and so are parse
    errors at one place (each TU adds its own count of further errors to the message); the first is kept."""
    kept: dict[object, Diagnostic] = {}
    for diagnostic in diagnostics:
        span = diagnostic.span
        key = (PARSE_ERROR, span.path, span.line, span.column) if diagnostic.code == PARSE_ERROR else diagnostic
        kept.setdefault(key, diagnostic)
    return list(kept.values())


def _excluded(path: str, config: Config) -> bool:
    return any(path_matches_glob(path, glob, config.root) for glob in config.exclude)


def collect_files(paths: Sequence[str], config: Config) -> tuple[list[str], list[str]]:
    """(sources, binaries) as display paths; config `exclude` globs apply to files found by walking directories."""
    found = discover(paths)
    named = {path_key(str(path)) for path in paths if config.exclude and os.path.isfile(path)}

    def keep(path: str) -> bool:
        return not config.exclude or path_key(str(path)) in named or not _excluded(path, config)

    # dict.fromkeys: `a.c` and `dir/../a.c` are one file.
    sources = list(dict.fromkeys(display_path(path) for path in found.sources if keep(path)))
    binaries = list(dict.fromkeys(display_path(path) for path in found.binaries if keep(path)))
    return sources, binaries


def lint_once(paths: Sequence[str], config: Config, settings: RunSettings) -> tuple[_Pass, tuple[Rule, ...]]:
    rules = enabled_rules(config, settings)
    options = OptionsByCode(config)
    if settings.stdin is not None and settings.stdin_filename is not None:
        # Linted as if the file held the text; the tree around it is still the context of the cross-file rules.
        source_paths, binary_paths = [display_path(settings.stdin_filename)], []
        sources = {source_paths[0]: settings.stdin}
    else:
        source_paths, binary_paths = collect_files(paths, config)
        sources = {path: read_source(path) for path in source_paths}
    raw = run_text_rules(sources, rules, options)
    # Binaries are audited only when a binary rule is on (`--select HX1 .` on a build tree skips the .so files).
    if not any(rule.kind == "binary" for rule in rules):
        if binary_paths and not source_paths:
            raise InputError(f"{binary_paths[0]}: ELF input, but no binary rule (HX2xx) is selected")
        binary_paths = []
    # Before the source rules, so they can point at what the built libraries show (HX116: spills in the function).
    binary_tables: list[dict[str, object]] = []
    library_facts: list[Any] = []
    binary_diagnostics, binary_report = run_binary_rules(
        binary_paths, options, settings, binary_tables, [rule.code for rule in rules], library_facts
    )
    context = context_sources(source_paths, rules, config, settings) if source_paths else []
    notes: list[str] = []
    stats: dict[str, Any] = {}
    builds = tree_builds(config, settings) if source_paths else None  # a binary-only run reads no build files
    raw += run_source_rules(
        source_paths, rules, options, config, settings, context, library_facts, notes, builds, stats
    )
    raw += binary_diagnostics

    enabled_codes = frozenset(rule.code for rule in rules)
    cache = _FileCache(sources)
    unique = one_per_place(normalize_paths(diagnostic) for diagnostic in raw)
    kept = [
        with_fingerprint_text(diagnostic, cache.read)
        for diagnostic in unique
        if diagnostic.code in enabled_codes and not _code_ignored_for(diagnostic.span.path, diagnostic.code, config)
    ]
    # A rule without a check never ran, so a suppression naming it cannot be called unused.
    ran_on_sources = frozenset(
        rule.code for rule in rules if rule.kind == "tool" or (rule.kind in ("text", "source") and rule.check)
    )
    if context_mode(config, settings) == "files":
        # Without the rest of the tree a cross-file rule holds back: its silence does not make a suppression unused.
        ran_on_sources -= {rule.code for rule in rules if rule.scope == "project"}

    def active_codes_for(path: str) -> frozenset[str]:
        return frozenset(code for code in ran_on_sources if not _code_ignored_for(path, code, config))

    # A finding without a line (a library's, a file's) has no comment that could suppress it: its file is not read.
    lined = (diagnostic.span.path for diagnostic in kept if diagnostic.span.line is not None)
    suppressions = _suppressions_in([*sources, *lined], cache)
    reported, suppressed, problems = kept, (), ()
    if suppressions:
        from hexlint.suppress import apply_suppressions

        result = apply_suppressions(kept, suppressions, active_codes_for, key=path_key)
        reported, suppressed, problems = list(result.kept), result.suppressed, result.problems
    if UNUSED_SUPPRESSION in enabled_codes:
        reported += [
            normalize_paths(problem)
            for problem in problems
            if not _code_ignored_for(problem.span.path, UNUSED_SUPPRESSION, config)
        ]
    baselined: list[Diagnostic] = []
    if settings.baseline is not None:
        from hexlint import baseline as baseline_module

        recorded = baseline_module.load_baseline(settings.baseline)
        reported, baselined = baseline_module.filter_baseline(
            reported, recorded, os.path.dirname(spelled(settings.baseline))
        )
    outcome = _Pass(
        diagnostics=reported,
        suppressed=suppressed,
        baselined=tuple(baselined),
        sources=sources,
        binary_report=binary_report,
        binary_tables=tuple(binary_tables),
        files_checked=len(source_paths) + len(binary_paths),
        context_files=len(context),
        notes=tuple(dict.fromkeys(notes)),
        build_defines=tuple(taken_build_defines(builds)),
        stats=stats,
    )
    return outcome, rules


# ---------------------------------------------------------------- fixes


def fixes_by_path(diagnostics: Iterable[Diagnostic], unsafe: bool = False) -> dict[str, list[Fix]]:
    """Safe fixes (and with `unsafe` the unsafe ones too) grouped by the real path of the file their edits touch.
    Safe ones come first, so where a safe and an unsafe fix overlap, the safe one is applied."""
    grouped: dict[str, list[Fix]] = {}
    chosen = [diagnostic for diagnostic in diagnostics if diagnostic.fix is not None and diagnostic.fix.safe]
    if unsafe:
        chosen += [diagnostic for diagnostic in diagnostics if diagnostic.fix is not None and not diagnostic.fix.safe]
    for diagnostic in chosen:
        fix = diagnostic.fix
        if fix is None or not fix.edits:
            continue
        for path in {path_key(edit.path) for edit in fix.edits}:
            grouped.setdefault(path, []).append(fix)
    return grouped


def _edits_for(fixes: Sequence[Fix], real_path: str) -> list[Fix]:
    """The fixes with their edits re-keyed to the real path, so fixer.plan_fixes can filter by it."""
    return [
        Fix(
            fix.title,
            tuple(replace(edit, path=real_path) for edit in fix.edits if path_key(edit.path) == real_path),
            fix.safe,
        )
        for fix in fixes
    ]


def fixed_contents(
    diagnostics: Iterable[Diagnostic], cache: Callable[[str], bytes | None], unsafe: bool = False
) -> dict[str, tuple[bytes, bytes, int]]:
    """real path -> (old bytes, new bytes, fixes applied) for every file a fix changes (safe ones; unsafe too)."""
    from hexlint.fixer import apply_edits, plan_fixes

    changed: dict[str, tuple[bytes, bytes, int]] = {}
    for real_path, fixes in fixes_by_path(diagnostics, unsafe).items():
        old = cache(real_path)
        if old is None:
            continue
        plan = plan_fixes(old, _edits_for(fixes, real_path), real_path)
        new = apply_edits(old, plan.edits)
        if new != old:
            changed[real_path] = (old, new, len(plan.applied))
    return changed


def lint(paths: Sequence[str], config: Config, settings: RunSettings | None = None) -> LintResult:
    """Lint PATHS; with settings.fix apply safe fixes until nothing changes, with settings.diff only describe them."""
    settings = settings or RunSettings()
    forget_real_paths()
    try:
        return _lint(paths, config, settings)
    finally:
        forget_real_paths()


def _lint(paths: Sequence[str], config: Config, settings: RunSettings) -> LintResult:
    outcome, rules = lint_once(paths, config, settings)
    if not (settings.fix or settings.diff):
        return _result(outcome, rules)
    from hexlint.fixer import is_read_only, unified_diff, write_atomic

    if settings.diff:
        cache = _FileCache(outcome.sources)
        changes = fixed_contents(outcome.diagnostics, cache.read, settings.unsafe_fixes)
        diff = "".join(unified_diff(display_path(path), old, new) for path, (old, new, _) in sorted(changes.items()))
        fixed = sum(count for _, _, count in changes.values())
        return _result(outcome, rules, fixed=fixed, diff=diff, changed=tuple(display_path(p) for p in sorted(changes)))

    fixed = 0
    changed_files: set[str] = set()
    for _ in range(MAX_FIX_PASSES):
        changes = fixed_contents(outcome.diagnostics, _FileCache(outcome.sources).read, settings.unsafe_fixes)
        if not changes:
            break
        read_only = [path for path in sorted(changes) if not settings.fix_read_only and is_read_only(path)]
        if read_only:  # refused before any file of the pass is written
            raise InputError(
                f"{display_path(read_only[0])}: is read-only; --fix leaves it alone "
                "(make it writable, or pass --fix-read-only to rewrite it and keep it read-only)"
            )
        for real_path, (_, new, count) in changes.items():
            try:
                write_atomic(real_path, new)
            except OSError as error:
                raise InputError(f"{display_path(real_path)}: cannot write fix: {error.strerror or error}") from None
            fixed += count
            changed_files.add(display_path(real_path))
        outcome, rules = lint_once(paths, config, settings)
    return _result(outcome, rules, fixed=fixed, changed=tuple(sorted(changed_files)))


def _result(
    outcome: _Pass, rules: tuple[Rule, ...], fixed: int = 0, diff: str = "", changed: tuple[str, ...] = ()
) -> LintResult:
    from hexlint.report import sort_key

    return LintResult(
        diagnostics=tuple(sorted(outcome.diagnostics, key=sort_key)),
        rules=rules,
        files_checked=outcome.files_checked,
        suppressed=outcome.suppressed,
        baselined=outcome.baselined,
        fixed=fixed,
        diff=diff,
        binary_report=outcome.binary_report,
        binary_tables=outcome.binary_tables,
        changed_files=changed,
        context_files=outcome.context_files,
        notes=outcome.notes,
        build_defines=outcome.build_defines,
        parsed_units=outcome.stats.get("parsed_units", 0),
        units=outcome.stats.get("units", 0),
        cache_outcome=outcome.stats.get("cache", ""),
        dependencies=tuple(outcome.stats.get("dependencies", ())),
    )


def release_run_memory() -> None:
    """Give back what the last run kept, in a process that lints again and again (`--watch`, `hexlint server`). The
    index takes each run's syntax trees out of the cyclic collector's reach (gc.freeze in hexlint.c.index: a CLI run
    ends before it would matter), and some of what they hold is in reference cycles, so such a process would keep
    every run's trees (hundreds of MiB on upstream's tree). A full collection: run it after the findings are out.

    A Ctrl-C during the collection would be raised inside some object's finalizer, where Python drops it: on the main
    thread it is held until the collection is over, then raised."""
    import gc
    import signal
    import threading

    held: list[object] = []
    on_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, lambda number, frame: held.append(number)) if on_main else None
    try:
        gc.unfreeze()
        gc.collect()
    finally:
        if on_main:
            signal.signal(signal.SIGINT, previous if previous is not None else signal.default_int_handler)
    if held:
        raise KeyboardInterrupt


def write_baseline(path: str, result: LintResult) -> int:
    """Record the run's findings (including the ones an older baseline hid) in a baseline file."""
    from hexlint import baseline as baseline_module

    return baseline_module.write_baseline(path, [*result.diagnostics, *result.baselined])
