"""Baselines: record today's findings, hide them tomorrow, report only what is new.

A finding's fingerprint is sha256(rule code, path relative to the baseline file's directory, the finding's
`fingerprint_text` with whitespace collapsed, and its occurrence index among findings with the same code, path
and text), so it survives edits elsewhere in the file (line numbers are not part of it) but a change of the
offending line itself makes the finding new. The occurrence index keeps two identical lines in one file apart.

File format (JSON, sorted, stable diffs):

    {"version": 1, "findings": [{"code": "HX104", "path": "htp/add-ops.c", "fingerprint": "9f2c...",
                                 "message": "..."}]}
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from hexlint.core import Diagnostic
from hexlint.report import dump_json

BASELINE_VERSION = 1


class BaselineError(Exception):
    """A baseline file that cannot be read or written; the message names it."""


@dataclass(frozen=True)
class Entry:
    code: str
    path: str
    fingerprint: str
    message: str = ""


def normalized_text(text: str) -> str:
    """Whitespace-insensitive text, so re-indenting a line keeps its findings matched."""
    return " ".join(text.split())


def relative_path(path: str, base_dir: str | os.PathLike[str]) -> str:
    """A finding's path as stored in a baseline: posix, relative to the baseline's directory when possible."""
    absolute = Path(os.path.abspath(path))
    try:
        return Path(os.path.relpath(absolute, os.path.abspath(base_dir))).as_posix()
    except ValueError:  # another drive on Windows
        return absolute.as_posix()


def _digest(code: str, path: str, text: str, occurrence: int) -> str:
    import hashlib  # only baselines hash: a lint run without one does not pay for the import

    payload = "\0".join((code, path, text, str(occurrence)))
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _position(diagnostic: Diagnostic) -> tuple[int, int, int]:
    span = diagnostic.span
    return (span.line or 0, span.column or 0, span.address or 0)


def entries_for(diagnostics: Iterable[Diagnostic], base_dir: str | os.PathLike[str]) -> list[tuple[Diagnostic, Entry]]:
    """Each finding with its baseline entry; occurrence indices count in file order."""
    ordered = sorted(diagnostics, key=lambda diagnostic: (diagnostic.span.path, _position(diagnostic)))
    seen: dict[tuple[str, str, str], int] = {}
    paired = []
    for diagnostic in ordered:
        path = relative_path(diagnostic.span.path, base_dir)
        text = normalized_text(diagnostic.fingerprint_text or diagnostic.message)
        key = (diagnostic.code, path, text)
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        entry = Entry(diagnostic.code, path, _digest(diagnostic.code, path, text, occurrence), diagnostic.message)
        paired.append((diagnostic, entry))
    return paired


def fingerprints(diagnostics: Sequence[Diagnostic], base_dir: str | os.PathLike[str]) -> dict[int, str]:
    """id(diagnostic) -> fingerprint (SARIF partialFingerprints use the same value)."""
    return {id(diagnostic): entry.fingerprint for diagnostic, entry in entries_for(diagnostics, base_dir)}


def render_baseline(diagnostics: Iterable[Diagnostic], base_dir: str | os.PathLike[str]) -> str:
    return _render_counted(diagnostics, base_dir)[0]


def _render_counted(diagnostics: Iterable[Diagnostic], base_dir: str | os.PathLike[str]) -> tuple[str, int]:
    """The baseline text and how many findings it records (so the writer need not parse it back)."""
    entries = sorted(
        (entry for _, entry in entries_for(diagnostics, base_dir)),
        key=lambda entry: (entry.path, entry.code, entry.fingerprint),
    )
    document = {
        "version": BASELINE_VERSION,
        "findings": [
            {"code": entry.code, "path": entry.path, "fingerprint": entry.fingerprint, "message": entry.message}
            for entry in entries
        ],
    }
    return dump_json(document), len(entries)


def write_baseline(path: str | os.PathLike[str], diagnostics: Iterable[Diagnostic]) -> int:
    """Write the baseline file; returns the number of findings recorded."""
    path = Path(path)
    text, count = _render_counted(diagnostics, path.parent)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise BaselineError(f"{path}: cannot write baseline: {error.strerror or error}") from None
    return count


def load_baseline(path: str | os.PathLike[str]) -> frozenset[tuple[str, str, str]]:
    """(code, path, fingerprint) triples recorded in a baseline file."""
    import json

    path = Path(path)

    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise BaselineError(f"{path}: cannot read baseline: {error.strerror or error}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BaselineError(f"{path}: baseline is not valid JSON: {error}") from None
    if not isinstance(document, dict) or document.get("version") != BASELINE_VERSION:
        raise BaselineError(f"{path}: not a hexlint baseline (version {BASELINE_VERSION} expected)")
    findings = document.get("findings")
    if not isinstance(findings, list):
        raise BaselineError(f"{path}: baseline has no `findings` list")
    try:
        return frozenset((item["code"], item["path"], item["fingerprint"]) for item in findings)
    except (KeyError, TypeError):
        raise BaselineError(f"{path}: baseline entries need code, path and fingerprint") from None


def filter_baseline(
    diagnostics: Sequence[Diagnostic], recorded: frozenset[tuple[str, str, str]], base_dir: str | os.PathLike[str]
) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(new findings, findings hidden because the baseline has them), both in the input order."""
    hidden_ids = {
        id(diagnostic)
        for diagnostic, entry in entries_for(diagnostics, base_dir)
        if (entry.code, entry.path, entry.fingerprint) in recorded
    }
    new = [diagnostic for diagnostic in diagnostics if id(diagnostic) not in hidden_ids]
    hidden = [diagnostic for diagnostic in diagnostics if id(diagnostic) in hidden_ids]
    return new, hidden
