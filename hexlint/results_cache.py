"""The source run's findings in the persistent cache (hexlint/cache.py).

An entry holds a `SourceRun`: every unit's parse errors and every source rule's findings on every file of the tree,
with the files the units read. Its key is a digest of hexlint's build, the rules and their options, the parse
settings of each file (its build defines and role), and the real paths and contents of the run's files and of the
context (a buffer standing for a file counts as that file's content). Paths in an entry are absolute, so runs from
any working directory, the CLI's and an editor's, share entries. The headers the units include are known only after a
parse, so they are the entry's dependencies, checked (content, or size and mtime outside the tree) before it is
trusted. A unit whose parse failed also depends on the listings of the directories it searched, so that the
header it missed appearing invalidates the entry.

A partial run (a pre-commit hook on a few files, with the tree as context) is answered by its own entry, or else by
the entry of a run of the whole tree with the same inputs, cut down to its files: that is what a partial run
computes (the cross-file rules see the same tree; every other rule judges each file on its own).
"""

from __future__ import annotations

import os
from dataclasses import replace

from hexlint import cache as cache_module
from hexlint.cache import FileDigests, diagnostic_data, diagnostic_from, key_of

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from hexlint.config import Config
    from hexlint.core import Diagnostic, Rule
    from hexlint.engine import RunSettings, SourceRun

NAMESPACE = "source-runs"
# The newest entries kept (each a few hundred KB on ggml's tree): enough for a day of edits on a few branches.
KEPT_RUNS = 64


def stat_only_roots() -> list[str]:
    """Directories whose files are known by size and mtime, not content: hexlint's own (its build id covers them),
    libclang's builtin headers and the system's headers."""
    import importlib.util

    roots = [os.path.dirname(os.path.abspath(cache_module.__file__)), "/usr/include", "/usr/lib", "/usr/local/include"]
    spec = importlib.util.find_spec("clang")
    if spec is not None and spec.submodule_search_locations:
        roots += list(spec.submodule_search_locations)
    return roots


class SourceRunCache:
    """The cache's answer for one source run, and where its result goes."""

    def __init__(
        self,
        store: Any,
        key: str,
        tree_key: str | None,
        sources: Sequence[str],
        digests: Any,
        include_dirs: Sequence[str] = (),
    ) -> None:
        self._store = store
        self.key = key
        self.tree_key = tree_key  # the whole tree's run, which can answer for a part of it
        self.sources = list(sources)
        self.digests = digests
        self.include_dirs = list(include_dirs)
        self.outcome = "miss"

    @classmethod
    def open(
        cls,
        settings: RunSettings,
        sources: Sequence[str],
        context: Sequence[str],
        rules: Sequence[Rule],
        options: Mapping[str, Mapping[str, Any]],
        config: Config,
        parse_settings: Any,
        builds: Any,
        built_libraries: Sequence[Any],
    ) -> SourceRunCache | None:
        from hexlint.engine import path_key, role_for, unit_parse_settings

        if settings.cache_dir is None:
            return None
        store = cache_module.open_store(settings.cache_dir)
        if store is None:
            return None
        digests = FileDigests(overrides=dict(parse_settings.unsaved), stat_only_roots=stat_only_roots())
        # Text that stands for a file (stdin, an editor's buffer) is in the key as that file's digest, so a buffer
        # that equals the disk shares the disk's entries; paths are absolute, so runs from any directory share them.
        compile_commands = parse_settings.compile_commands
        base_settings = replace(
            parse_settings,
            unsaved=(),
            include_dirs=tuple(os.path.abspath(directory) for directory in parse_settings.include_dirs),
            compile_commands=os.path.abspath(compile_commands) if compile_commands else None,
        )

        def described(path: str) -> list[Any]:
            unit_settings = unit_parse_settings(path, parse_settings, builds)
            role = role_for(path, config, settings)
            return [path_key(path), role, repr(unit_settings.build_defines), digests.of(path)]

        run_files = [described(path) for path in sources]
        context_files = [described(path) for path in context]
        common = [
            cache_module.build_id(),
            sorted((rule.code, rule.kind, rule.scope) for rule in rules),
            {rule.code: dict(options[rule.code]) for rule in rules if rule.kind == "source"},
            repr(base_settings),
            digests.of(compile_commands) if compile_commands else None,
            [repr(library) for library in built_libraries],
        ]
        # Sorted: the whole tree's run and a part of it name the same files in different orders.
        key = key_of(*common, sorted(run_files), sorted(context_files))
        tree_key = key_of(*common, sorted(run_files + context_files), []) if context else None
        return cls(store, key, tree_key, sources, digests, parse_settings.include_dirs)

    def unit_cache(self) -> Any:
        """The cache of parsed units that shares this run's store and file digests (it loads libclang)."""
        from hexlint.c.unit_cache import UnitCache

        return UnitCache(self._store, self.digests)

    # ------------------------------------------------------------ reading

    def load(self) -> SourceRun | None:
        payload = self._store.get(NAMESPACE, self.key)
        source_run = self._trusted(payload)
        if source_run is not None:
            self.outcome = "hit"
            return source_run
        if self.tree_key is not None:
            source_run = self._as_part(self._trusted(self._store.get(NAMESPACE, self.tree_key)))
            if source_run is not None:
                self.outcome = "hit from the whole tree's run"
                return source_run
        return None

    def _trusted(self, payload: Any) -> SourceRun | None:
        from hexlint.engine import SourceRun

        try:
            if not cache_module.dependencies_hold(payload["dependencies"], self.digests):
                return None
            return SourceRun(
                units=[
                    (path, bool(is_context), [diagnostic_from(item) for item in diagnostics])
                    for path, is_context, diagnostics in payload["units"]
                ],
                findings=[diagnostic_from(item) for item in payload["findings"]],
                notes=[str(note) for note in payload["notes"]],
                dependencies=[path for path, _ in payload["dependencies"] if not path.startswith("dir:")],
            )
        except (TypeError, KeyError, ValueError, AttributeError):
            return None  # an entry of another shape: sealed by us, but not of this format

    def _as_part(self, whole: SourceRun | None) -> SourceRun | None:
        """The whole tree's run seen from a run of some of its files: the other units become context."""
        if whole is None:
            return None
        from hexlint.engine import path_key

        in_run = {path_key(path) for path in self.sources}
        units = [(path, path_key(path) not in in_run, diagnostics) for path, _, diagnostics in whole.units]
        # The run's own units are parsed first: their order decides which copy of a shared header's error is kept.
        units.sort(key=lambda unit: unit[1])
        return replace(whole, units=units)

    # ------------------------------------------------------------ writing

    def store(self, source_run: SourceRun) -> None:
        """Paths go in absolute: an entry answers runs from any working directory, whose report then shows each path
        relative to its own."""
        from hexlint.engine import with_paths

        dependencies = [os.path.abspath(path) for path in source_run.dependencies]
        if any(diagnostics for _, _, diagnostics in source_run.units):
            # A header a unit could not find may appear in a directory it searched, or next to a file it read.
            directories = [os.path.realpath(directory) for directory in self.include_dirs]
            directories += [os.path.dirname(os.path.realpath(name)) for name in source_run.dependencies]
            dependencies += ["dir:" + directory for directory in dict.fromkeys(directories)]

        def data(diagnostics: Sequence[Diagnostic]) -> list[dict[str, Any]]:
            return [diagnostic_data(with_paths(item, os.path.abspath)) for item in diagnostics]

        units = source_run.units
        payload = {
            "units": [[os.path.abspath(path), context, data(diagnostics)] for path, context, diagnostics in units],
            "findings": data(source_run.findings),
            "notes": source_run.notes,
            "dependencies": cache_module.dependencies_of(dependencies, self.digests),
        }
        self._store.put(NAMESPACE, self.key, payload)
        self._store.prune(NAMESPACE, KEPT_RUNS)
