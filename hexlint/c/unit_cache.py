"""Parsed translation units in the persistent cache, so a run after an edit re-parses only the units it affects.

clang's own serialized AST (`clang_saveTranslationUnit`) is what is kept: loading one is lazy and takes milliseconds
where parsing the same unit takes 0.2-2.6 s, and the loaded unit answers every question the index and the rules ask
exactly as the parsed one did (tested: a run's findings are byte-identical either way). An AST file is data for
clang's reader, not code, and it is trusted only through a sealed entry (hexlint/cache.py) that holds its SHA-256,
the unit's parse diagnostics and include order, and the digests of every file the unit read: an AST file that
arrived with a checkout, or was swapped, is never opened.

There is one AST per unit and set of arguments (`units/KEY.ast`): a changed file overwrites its unit's AST rather
than adding one. Saving costs about a quarter of the parse, so it is done once the rules are done, by a detached
process the run does not wait for (its report is out at the same time as without the cache); it holds a lock that
the next run waits on before loading units, so back-to-back runs see every unit saved. Where forking is not safe
(other threads running: --watch, the server; no fork()) the process saves its units itself. A unit parsed from
unsaved text (stdin, an editor's buffer) is not saved: its AST would describe text that is not on disk.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import hashlib
import os
import sys
import threading
import time

import clang.cindex as cindex

from hexlint.c.index import included_files
from hexlint.c.parse import ParsedUnit
from hexlint.cache import FileDigests, diagnostic_data, diagnostic_from, key_of

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from hexlint.cache import Store

NAMESPACE = "units"
SAVER_TIMEOUT = 60.0  # seconds a run waits for an earlier run's saver before parsing without it
# Environment variables clang reads besides its arguments: a unit parsed under other ones is another unit.
_CLANG_ENVIRONMENT = ("CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH")


def _search_dirs(arguments: Sequence[str]) -> list[str]:
    """The directories a unit's headers are looked up in (-I, -isystem), whose listings its entry depends on: a
    header appearing in one of them may shadow the one the unit read, or be the one it missed."""
    found: list[str] = []
    waiting = False
    for argument in arguments:
        if waiting:
            found.append(argument)
            waiting = False
        elif argument in ("-I", "-isystem", "-iquote", "-idirafter"):
            waiting = True
        elif argument.startswith("-I") and len(argument) > 2:
            found.append(argument[2:])
    for variable in _CLANG_ENVIRONMENT:
        found += [part for part in os.environ.get(variable, "").split(os.pathsep) if part]
    return found


class UnitCache:
    def __init__(self, store: Store, digests: FileDigests) -> None:
        self._store = store
        self._digests = digests

    def _key(self, path: str, role: str, arguments: Sequence[str]) -> str:
        from hexlint.cache import build_id

        environment = [os.environ.get(variable, "") for variable in _CLANG_ENVIRONMENT]
        return key_of(build_id(), os.path.realpath(path), role, list(arguments), environment)

    def _ast_path(self, key: str) -> str:
        return os.path.join(self._store.directory, NAMESPACE, key[:2], key + ".ast")

    def load(self, path: str, role: str, arguments: Sequence[str]) -> ParsedUnit | None:
        """The unit from its saved AST when every file it read is unchanged; None otherwise. Runs on a parse thread."""
        key = self._key(path, role, arguments)
        payload = self._store.get(NAMESPACE, key)
        try:
            if payload is None or not all(self._digests.of(name) == digest for name, digest in payload["reads"]):
                return None
            ast_path = self._ast_path(key)
            with open(ast_path, "rb") as handle:
                if hashlib.sha256(handle.read()).hexdigest() != payload["ast_sha256"]:
                    return None
            translation_unit = cindex.TranslationUnit.from_ast_file(ast_path, cindex.Index.create())
            diagnostics = [diagnostic_from(item) for item in payload["diagnostics"]]
            includes = [str(name) for name in payload["includes"]]
        except (OSError, TypeError, KeyError, ValueError, cindex.TranslationUnitLoadError):
            return None
        unit = ParsedUnit(path, role, translation_unit, diagnostics, tuple(arguments))
        unit._included_files = includes  # type: ignore[attr-defined]  # in the order the parse met them
        unit.from_cache = True  # type: ignore[attr-defined]
        return unit

    # ------------------------------------------------------------ saving

    def save(self, units: Sequence[ParsedUnit]) -> None:
        """Save the units (those parsed from the disk's text): in a detached process once the rules are done, when
        forking is safe, so the run ends as soon as its report is out; else here."""
        units = [unit for unit in units if unit.translation_unit is not None and not unit.unsaved]
        if not units:
            return
        # Each entry's facts are read here, before the fork: the saver only writes.
        jobs = [(unit, self._entry(unit)) for unit in units]
        if not (hasattr(os, "fork") and sys.platform.startswith("linux") and threading.active_count() == 1):
            self._write(jobs)
            return
        # The lock is taken here and handed down: a run starting the moment this one ends already finds it held,
        # and waits for the saved units rather than parsing them again (hexlint.c.unit_cache.wait_for_saver).
        lock = self._lock_file()
        if lock is None:
            self._write(jobs)
            return
        child = os.fork()
        if child == 0:
            # The middle process: start the saver and leave, so the saver belongs to no one (no zombie, no wait).
            status = 0
            try:
                os.setsid()
                if os.fork() == 0:
                    _detach_stdio()
                    try:
                        self._write(jobs)
                    finally:
                        os._exit(0)
            except BaseException:
                status = 1
            finally:
                os._exit(status)
        os.close(lock)  # the saver holds the lock through its own copy of the descriptor
        with contextlib.suppress(ChildProcessError):
            os.waitpid(child, 0)

    def _lock_file(self) -> int | None:
        """A descriptor of the units' lock file, locked exclusively, or None when it cannot be had at once."""
        try:
            directory = os.path.join(self._store.directory, NAMESPACE)
            os.makedirs(directory, exist_ok=True)
            handle = os.open(os.path.join(directory, ".saving"), os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # another run is saving: this one saves its units itself
            os.close(handle)
            return None
        return handle

    def wait_for_saver(self, timeout: float = SAVER_TIMEOUT) -> None:
        wait_for_saver(self._store.directory, timeout)

    def _entry(self, unit: ParsedUnit) -> tuple[str, dict[str, Any]]:
        key = self._key(unit.path, unit.role, unit.arguments)
        includes = included_files(unit)
        reads = [unit.path, *includes]
        reads += ["dir:" + directory for directory in dict.fromkeys(_search_dirs(unit.arguments))]
        payload = {
            "reads": [[name, self._digests.of(name)] for name in dict.fromkeys(reads)],
            "diagnostics": [diagnostic_data(item) for item in unit.diagnostics],
            "includes": includes,
        }
        return key, payload

    def _write(self, jobs: Sequence[tuple[ParsedUnit, tuple[str, dict[str, Any]]]]) -> None:
        for unit, (key, payload) in jobs:
            ast_path = self._ast_path(key)
            temporary = f"{ast_path}.{os.getpid()}.tmp"
            for leftover in glob.glob(glob.escape(ast_path) + ".*.tmp"):  # of a saver that was killed
                with contextlib.suppress(OSError):
                    os.unlink(leftover)
            try:
                os.makedirs(os.path.dirname(ast_path), exist_ok=True)
                unit.translation_unit.save(temporary)
                with open(temporary, "rb") as handle:
                    payload["ast_sha256"] = hashlib.sha256(handle.read()).hexdigest()
                os.replace(temporary, ast_path)
            except (OSError, cindex.TranslationUnitSaveError):
                if os.path.exists(temporary):
                    os.unlink(temporary)
                continue
            # The entry goes last: until it names the new AST's digest, readers refuse the file.
            self._store.put(NAMESPACE, key, payload)


def wait_for_saver(cache_directory: str, timeout: float = SAVER_TIMEOUT) -> None:
    """Wait (at most `timeout` seconds) for an earlier run's saver to finish: loading what it saves is cheaper than
    parsing the same units again."""
    try:
        handle = os.open(os.path.join(cache_directory, NAMESPACE, ".saving"), os.O_RDONLY)
    except OSError:
        return  # no saver ever ran here
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return
            except OSError:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.02)
    finally:
        os.close(handle)  # closing releases the shared lock


def _detach_stdio() -> None:
    """The saver writes nothing: its standard streams go to /dev/null, so a pre-commit hook or a CI step reading the
    run's output sees it end with the run."""
    null = os.open(os.devnull, os.O_RDWR)
    for descriptor in (0, 1, 2):
        os.dup2(null, descriptor)
    os.close(null)
