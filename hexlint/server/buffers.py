"""Linting an editor's buffer, and the fixes it can take: the language server's use of the engine, without pygls.

A buffer is linted as the CLI lints `--stdin-filename PATH -`: the text is the buffer's, everything else (the
configuration found for PATH, the tree around it as the cross-file rules' context, the persistent cache) is what a
run on PATH from the command line would use.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from hexlint.core import Diagnostic, Edit, Fix

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


@dataclass(frozen=True)
class BufferLint:
    """One run on one buffer: its findings on the buffer's file, what to tell the user, or why it could not run."""

    path: str
    data: bytes  # the text that was linted: the findings' columns and the fixes' offsets are into it
    diagnostics: tuple[Diagnostic, ...] = ()
    notes: tuple[str, ...] = ()  # configuration warnings and the backend model's notes (a rule holding back)
    error: str | None = None  # one line, as the CLI would print it after `hexlint: error: `
    cache_outcome: str = ""
    parsed_units: int = 0
    units: int = 0


def same_file(first: str, second: str) -> bool:
    return os.path.realpath(first) == os.path.realpath(second)


def cache_directory_for(path: str, config: object, workspace_root: str | None) -> str | None:
    """The CLI's cache directory for PATH; its last resort, `.hexlint_cache` in the working directory, is taken in the
    workspace's root instead (an editor may start the server anywhere, even in /)."""
    from hexlint.config import cache_directory

    directory = cache_directory(None, False, config, [path])  # type: ignore[arg-type]
    if directory is not None and not os.path.isabs(directory) and workspace_root:
        return os.path.join(workspace_root, directory)
    return directory


def lint_buffer(path: str, data: bytes, workspace_root: str | None = None) -> BufferLint:
    """Lint `data` as the file `path`. Never raises: a bad configuration, an input error or a bug in hexlint is
    returned as `error`, so one bad run never takes the server down."""
    from hexlint.config import ConfigError, load_config
    from hexlint.discover import DiscoveryError
    from hexlint.engine import InputError, InternalError, RunSettings, lint

    try:
        config = load_config(None, path)
        settings = RunSettings(
            stdin=data, stdin_filename=path, cache_dir=cache_directory_for(path, config, workspace_root)
        )
        result = lint([path], config, settings)
    except (ConfigError, InputError, DiscoveryError, InternalError) as error:
        return BufferLint(path, data, error=str(error))
    except Exception as error:  # a bug: said to the user, and the next change lints again
        return BufferLint(path, data, error=f"internal error: {type(error).__name__}: {error}")
    return BufferLint(
        path,
        data,
        diagnostics=tuple(diagnostic for diagnostic in result.diagnostics if same_file(diagnostic.span.path, path)),
        notes=(*config.notes, *result.notes),
        cache_outcome=result.cache_outcome,
        parsed_units=result.parsed_units,
        units=result.units,
    )


def own_fix(diagnostic: Diagnostic, path: str) -> Fix | None:
    """The finding's safe fix when every edit of it is in the file `path` (the buffer the editor changes). Unsafe
    fixes change behaviour (HX103, HX104): the server does not offer them, as `hexlint --fix` does not apply them."""
    fix = diagnostic.fix
    if fix is None or not fix.safe or not fix.edits:
        return None
    if not all(same_file(edit.path, path) for edit in fix.edits):
        return None
    return fix


def fixed_buffer(data: bytes, fixes: Sequence[Fix]) -> bytes:
    """The buffer with every fix applied that does not overlap one before it (as one pass of `hexlint --fix`)."""
    from hexlint.fixer import apply_edits, plan_fixes

    return apply_edits(data, plan_fixes(data, fixes).edits)


def minimal_edit(old: bytes, new: bytes) -> Edit | None:
    """One edit turning `old` into `new`, spanning only what differs (so an editor's cursor and folds stay put)."""
    if old == new:
        return None
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    # Cut on a UTF-8 character boundary, so both ends convert to an editor position exactly.
    while prefix > 0 and (old[prefix] if prefix < len(old) else 0) & 0xC0 == 0x80:
        prefix -= 1
    while suffix > 0 and old[len(old) - suffix] & 0xC0 == 0x80:
        suffix -= 1
    return Edit("", prefix, len(old) - suffix, new[prefix : len(new) - suffix])
