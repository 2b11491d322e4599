"""HX110 macro-backslash-misaligned: the continuation backslashes of a multiline `#define` are not in one column."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from hexlint.checks._macros import (
    REALIGN_WHOLE_MACRO,
    AlignmentOptions,
    Macro,
    MacroLine,
    existing_column,
    find_macros,
    fitting_column,
    is_aligned,
    misaligned_lines,
    padding_before_backslash,
    target_column,
)
from hexlint.core import Diagnostic, Edit, Fix, Related, Source, Span
from hexlint.registry import diagnostic

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CODE = "HX110"


def _alignment_edits(path: str, data: bytes, lines: tuple[MacroLine, ...], column: int) -> tuple[Edit, ...]:
    """Whitespace-only edits: the run between each line's content and its backslash becomes the right padding."""
    edits = []
    for line in lines:
        assert line.backslash is not None
        padding = padding_before_backslash(line, column)
        if data[line.content_end : line.backslash] != padding:
            edits.append(Edit(path, line.content_end, line.backslash, padding))
    return tuple(edits)


def _columns_text(macro: Macro) -> str:
    columns = sorted({line.backslash_column for line in macro.movable_lines if line.backslash_column is not None})
    return ", ".join(str(column) for column in columns)


def _line_text(data: bytes, line: MacroLine) -> str:
    return data[line.start : line.content_end].decode("utf-8", "replace").strip()


def check(source: Source, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    settings = AlignmentOptions.from_mapping(options)
    data = source.data
    for macro in find_macros(data, settings.tab_width):
        if is_aligned(macro):
            continue
        own_column = existing_column(macro)
        assert own_column is not None  # a misaligned macro has two movable backslashes at least
        off_column = misaligned_lines(macro, own_column)
        # Move only the lines out of the macro's own column, when they fit there; when the longest do not, the other
        # lines go to the existing column that moves the fewest. Upstream's script (and `realign = "whole-macro"`)
        # realigns every line to the longest line + pad instead.
        whole_macro = settings.realign == REALIGN_WHOLE_MACRO
        column = target_column(macro, settings) if whole_macro else fitting_column(macro) or own_column
        moved = macro.movable_lines if whole_macro else misaligned_lines(macro, column)
        edits = _alignment_edits(source.path, data, moved, column)
        moved_starts = {edit.start for edit in edits}
        # Inserting a space where a splice joins two pieces of one token would split it: offer that only as unsafe.
        splits_token = any(line.glues_tokens and line.content_end in moved_starts for line in macro.movable_lines)
        first, last = macro.lines[0], macro.lines[-1]
        first_backslash = first.backslash if first.backslash is not None else first.content_end
        fix = None
        if edits:
            verb = "Realign the backslashes of" if whole_macro else "Move the misaligned backslashes of"
            fix = Fix(f"{verb} `{macro.name}` to column {column}", edits, safe=not splits_token)
        numbers = ", ".join(str(line.number) for line in off_column)
        if whole_macro:
            advice = f"realign the macro to column {column}"
        elif column == own_column:
            advice = f"move them to column {column}"
        else:
            advice = f"they do not fit there: move the other lines to column {column}"
        yield diagnostic(
            CODE,
            (
                f"The continuation backslashes of macro `{macro.name}` are in columns {_columns_text(macro)} "
                f"(line{'s' if len(off_column) > 1 else ''} {numbers} out of the common column {own_column}); {advice}."
            ),
            Span(
                path=source.path,
                line=first.number,
                column=first_backslash - first.start + 1,
                end_line=last.number,
                end_column=last.end - last.start + 1,
            ),
            related=tuple(
                Related(
                    Span(
                        path=source.path,
                        line=line.number,
                        column=(line.backslash or line.content_end) - line.start + 1,
                        end_line=line.number,
                        end_column=(line.backslash or line.content_end) - line.start + 2,
                    ),
                    f"backslash in column {line.backslash_column}, not {own_column}",
                )
                for line in off_column
            ),
            fix=fix,
            # The lines out of column are part of the identity: one more of them is a new finding for a baseline.
            fingerprint_text=" | ".join([_line_text(data, first), *(_line_text(data, line) for line in off_column)]),
        )
