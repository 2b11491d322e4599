"""HX111 macro-backslash-whitespace: whitespace after a macro's continuation backslash."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from hexlint.checks._macros import AlignmentOptions, find_macros
from hexlint.core import Diagnostic, Edit, Fix, Source, Span
from hexlint.registry import diagnostic

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CODE = "HX111"


def check(source: Source, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    tab_width = AlignmentOptions.from_mapping(options).tab_width
    data = source.data
    for macro in find_macros(data, tab_width):
        for line in macro.continuation_lines:
            assert line.backslash is not None
            if line.backslash + 1 == line.end:
                continue
            removal = Edit(source.path, line.backslash + 1, line.end, b"")
            yield diagnostic(
                CODE,
                (
                    f"Whitespace after the continuation backslash in macro `{macro.name}`: some compilers end the "
                    "macro there, others warn; remove it."
                ),
                Span(
                    path=source.path,
                    line=line.number,
                    column=line.backslash - line.start + 2,
                    end_line=line.number,
                    end_column=line.end - line.start + 1,
                ),
                fix=Fix("Remove the whitespace after the backslash", (removal,)),
                fingerprint_text=data[line.start : line.backslash + 1].decode("utf-8", "replace").strip(),
            )
