"""HX110 macro-backslash-misaligned: the continuation backslashes of a multiline `#define` are not in one column."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from hexlint.checks._macros import (
    AlignmentOptions,
    Macro,
    find_macros,
    is_aligned,
    padding_before_backslash,
    target_column,
)
from hexlint.core import Diagnostic, Edit, Fix, Source, Span
from hexlint.registry import diagnostic

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CODE = "HX110"


def _alignment_edits(path: str, data: bytes, macro: Macro, column: int) -> tuple[Edit, ...]:
    """Whitespace-only edits: the run between each line's content and its backslash becomes the right padding."""
    edits = []
    for line in macro.movable_lines:
        assert line.backslash is not None
        padding = padding_before_backslash(line, column)
        if data[line.content_end : line.backslash] != padding:
            edits.append(Edit(path, line.content_end, line.backslash, padding))
    return tuple(edits)


def _columns_text(macro: Macro) -> str:
    columns = sorted({line.backslash_column for line in macro.movable_lines if line.backslash_column is not None})
    return ", ".join(str(column) for column in columns)


def check(source: Source, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    settings = AlignmentOptions.from_mapping(options)
    data = source.data
    for macro in find_macros(data, settings.tab_width):
        if is_aligned(macro):
            continue
        column = target_column(macro, settings)
        edits = _alignment_edits(source.path, data, macro, column)
        moved_starts = {edit.start for edit in edits}
        # Inserting a space where a splice joins two pieces of one token would split it: offer that only as unsafe.
        splits_token = any(line.glues_tokens and line.content_end in moved_starts for line in macro.movable_lines)
        first, last = macro.lines[0], macro.lines[-1]
        first_backslash = first.backslash if first.backslash is not None else first.content_end
        fix = None
        if edits:
            title = f"Align the backslashes of `{macro.name}` to column {column}"
            fix = Fix(title, edits, safe=not splits_token)
        yield diagnostic(
            CODE,
            (
                f"The continuation backslashes of macro `{macro.name}` are in columns {_columns_text(macro)}; "
                f"align them to column {column}."
            ),
            Span(
                path=source.path,
                line=first.number,
                column=first_backslash - first.start + 1,
                end_line=last.number,
                end_column=last.end - last.start + 1,
            ),
            fix=fix,
            fingerprint_text=data[first.start : first.content_end].decode("utf-8", "replace").strip(),
        )
