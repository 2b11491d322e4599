"""SARIF 2.1.0 for GitHub code scanning and other viewers.

tool.driver.rules lists every rule given (id, name, shortDescription, fullDescription, help.text + markdown,
default level); results carry ruleId/ruleIndex, level, message, a physicalLocation (artifact + region),
relatedLocations, partialFingerprints (the baseline fingerprint) and fixes for findings with a fix.
A binary finding's first location is the library (artifactLocation + address) with a logicalLocation naming the
function; the DWARF source line, when known, is a second location.

GitHub code scanning drops a result whose first location has no `region.startLine`, so a place without a line (a
binary finding, a file libclang could not parse at all) gets `startLine` 1 of its artifact; for binaries the
instruction address and function are also in the result's `properties` (`address` as hex text, `symbol`), where the
code scanning UI and scripts reading the log find them.

Paths below the source root (`hexlint.report.source_root`: the git work tree holding the working directory) are
relative URIs with `uriBaseId: SRCROOT`, and `run.originalUriBaseIds.SRCROOT` is that root's file URI: a viewer
resolves them the same whichever directory hexlint ran in. Other paths are absolute file URIs.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hexlint import __version__
from hexlint.baseline import fingerprints
from hexlint.core import Diagnostic, Fix, Rule, Severity, Span
from hexlint.report import code_point_column, dump_json, forget_file_lines, root_relative, sort_key, source_root

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/ggml-org/hexlint"
FINGERPRINT_KEY = "hexlintFingerprint/v1"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
SOURCE_ROOT_ID = "SRCROOT"


def artifact_uri(path: str) -> str:
    """Relative posix paths stay relative (viewers resolve them against the checkout); others become file URIs.
    Either is a URI: spaces, `%`, `#` and bytes that are not UTF-8 are percent-encoded."""
    posix = Path(path).as_posix()
    quoted = urllib.parse.quote(os.fsencode(posix), safe="/")
    return "file://" + quoted if os.path.isabs(path) else quoted


def artifact_location(path: str, root: str | None = None) -> dict[str, str]:
    """`{"uri", "uriBaseId"}` relative to `root` for a path below it; else the path's own (absolute) URI."""
    relative = root_relative(path, root) if root is not None else None
    if relative is not None:
        return {"uri": artifact_uri(relative), "uriBaseId": SOURCE_ROOT_ID}
    return {"uri": artifact_uri(os.path.abspath(path) if root is not None else path)}


def root_uri(root: str) -> str:
    """The file URI of a directory, ending in `/` as SARIF requires of a base URI."""
    uri = Path(os.path.abspath(root)).as_uri()
    return uri if uri.endswith("/") else uri + "/"


def rule_help(rule: Rule) -> tuple[str, str]:
    """(plain text, markdown) help built from the rule's documentation sections."""
    doc = rule.doc
    sections = [("What it does", doc.what), ("Why is this bad?", doc.why)]
    text_parts = [f"{title}\n{body.strip()}" for title, body in sections if body.strip()]
    markdown_parts = [f"## {title}\n{body.strip()}" for title, body in sections if body.strip()]
    for title, code in (("Example", doc.example), ("Use instead", doc.use_instead)):
        if code.strip():
            text_parts.append(f"{title}\n{code.strip()}")
            markdown_parts.append(f"## {title}\n```c\n{code.strip()}\n```")
    if doc.fix_safety.strip():
        text_parts.append(f"Fix safety\n{doc.fix_safety.strip()}")
        markdown_parts.append(f"## Fix safety\n{doc.fix_safety.strip()}")
    return "\n\n".join(text_parts) or rule.summary, "\n\n".join(markdown_parts) or rule.summary


def rule_descriptor(rule: Rule) -> dict[str, Any]:
    help_text, help_markdown = rule_help(rule)
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.doc.what.strip() or rule.summary},
        "help": {"text": help_text, "markdown": help_markdown},
        "defaultConfiguration": {"level": _LEVEL[rule.severity]},
        "properties": {"kind": rule.kind, "tags": [rule.kind]},
    }


def region(span: Span) -> dict[str, Any] | None:
    if span.line is None:
        return None
    fields: dict[str, Any] = {"startLine": span.line}
    if span.column is not None:
        fields["startColumn"] = code_point_column(span.path, span.line, span.column)
    if span.end_line is not None and span.end_line >= span.line:
        fields["endLine"] = span.end_line
        if span.end_column is not None and (span.end_line > span.line or span.end_column >= (span.column or 1)):
            fields["endColumn"] = code_point_column(span.path, span.end_line, span.end_column)
    return fields


def physical_location(span: Span, root: str | None = None) -> dict[str, Any]:
    location: dict[str, Any] = {"artifactLocation": artifact_location(span.path, root)}
    text_region = region(span)
    if text_region is not None:
        location["region"] = text_region
    if span.address is not None:
        location["address"] = {"absoluteAddress": span.address, "kind": "instruction"}
    return location


def primary_physical_location(span: Span, root: str | None = None) -> dict[str, Any]:
    """The result's own place: always with a region, since code scanning needs `startLine` to show an alert."""
    location = physical_location(span, root)
    location.setdefault("region", {"startLine": 1})
    return location


def locations(diagnostic: Diagnostic, root: str | None = None) -> list[dict[str, Any]]:
    primary: dict[str, Any] = {"physicalLocation": primary_physical_location(diagnostic.span, root)}
    if diagnostic.span.symbol is not None:
        primary["logicalLocations"] = [{"name": diagnostic.span.symbol, "kind": "function"}]
    found = [primary]
    if diagnostic.source_span is not None:
        found.append({"physicalLocation": physical_location(diagnostic.source_span, root)})
    return found


def fix_object(fix: Fix, root: str | None = None) -> dict[str, Any]:
    by_path: dict[str, list[dict[str, Any]]] = {}
    for edit in fix.edits:
        by_path.setdefault(edit.path, []).append(
            {
                "deletedRegion": {"byteOffset": edit.start, "byteLength": edit.end - edit.start},
                "insertedContent": {"text": edit.replacement.decode("utf-8", "backslashreplace")},
            }
        )
    return {
        "description": {"text": fix.title},
        "artifactChanges": [
            {"artifactLocation": artifact_location(path, root), "replacements": replacements}
            for path, replacements in by_path.items()
        ],
    }


def result(
    diagnostic: Diagnostic, rule_index: dict[str, int], fingerprint: str, root: str | None = None
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "ruleId": diagnostic.code,
        "level": _LEVEL[diagnostic.severity],
        "message": {"text": diagnostic.message},
        "locations": locations(diagnostic, root),
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint},
    }
    if diagnostic.code in rule_index:
        entry["ruleIndex"] = rule_index[diagnostic.code]
    binary_place = {
        key: value
        for key, value in (
            ("address", f"{diagnostic.span.address:#x}" if diagnostic.span.address is not None else None),
            ("symbol", diagnostic.span.symbol),
        )
        if value is not None
    }
    if binary_place:
        entry["properties"] = binary_place
    if diagnostic.related:
        entry["relatedLocations"] = [
            {
                "id": number,
                "physicalLocation": physical_location(related.span, root),
                "message": {"text": related.message},
            }
            for number, related in enumerate(diagnostic.related, start=1)
        ]
    if diagnostic.fix is not None and diagnostic.fix.edits:
        entry["fixes"] = [fix_object(diagnostic.fix, root)]
    return entry


def render(diagnostics: Sequence[Diagnostic], rules: Sequence[Rule] = (), base_dir: Path | None = None) -> str:
    """The SARIF log; URIs and fingerprints are relative to `base_dir` (default: the source root, so the same from
    any working directory)."""
    forget_file_lines()
    ordered = sorted(diagnostics, key=sort_key)
    rule_index = {rule.code: index for index, rule in enumerate(rules)}
    root = os.path.abspath(base_dir) if base_dir is not None else source_root()
    prints = fingerprints(ordered, root)
    log = {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "hexlint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": [rule_descriptor(rule) for rule in rules],
                    }
                },
                "originalUriBaseIds": {SOURCE_ROOT_ID: {"uri": root_uri(root)}},
                "columnKind": "unicodeCodePoints",
                "results": [result(diagnostic, rule_index, prints[id(diagnostic)], root) for diagnostic in ordered],
            }
        ],
    }
    return dump_json(log)
