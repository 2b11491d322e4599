"""Multiline `#define`s found at the byte level, shared by HX110 (alignment) and HX111 (whitespace after a backslash).

No libclang: a small regex lexer finds comments and literals so that a `#define` inside a block comment is not a macro
and a backslash inside a string literal is never moved. Offsets are byte offsets into the file; columns are visual.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# UTF-8's byte-order mark, which some editors write at the start of a file.
_BYTE_ORDER_MARK = b"\xef\xbb\xbf"
# Horizontal whitespace C allows between a backslash and the newline it splices (compilers warn, but splice).
_HSPACE = rb"[ \t\f\v]"
_SPLICE = rb"\\" + _HSPACE + rb"*\r?\n"


def _literal_body(quote: bytes) -> bytes:
    """Inside a string or character literal: splices, escapes (`\\\\` unless a splice follows), any other byte."""
    return (
        rb"(?:" + _SPLICE + rb"|\\\\(?!" + _HSPACE + rb"*\r?\n)|\\(?=\\" + _HSPACE + rb"*\r?\n)|\\[^\n\\]"
        rb"|[^" + quote + rb"\\\n])*"
    )


# Comments and literals, leftmost first. Splices are honoured everywhere (translation phase 2 precedes tokenizing).
_LEXEME_PATTERN = (
    rb"(?P<block>/\*.*?(?:\*/|\Z))"
    rb"|(?P<line>//(?:" + _SPLICE + rb"|[^\n])*)"
    rb'|(?P<raw>R"(?P<delim>[^()\\ \t\f\v\r\n"]{0,16})\(.*?\)(?P=delim)")'
    rb'|(?P<string>"' + _literal_body(b'"') + rb'"?)'
    rb"|(?P<char>'" + _literal_body(b"'") + rb"'?)"
)


@functools.cache
def _lexeme() -> re.Pattern[bytes]:
    """Compiled on first use: most runs never lex, and compiling costs milliseconds at import."""
    return re.compile(_LEXEME_PATTERN, re.DOTALL)


# Same shape as the upstream script's `^\s*#\s*define\s+NAME`, without letting the whitespace cross a line.
# Starting at the `#` lets the regex engine jump between `#`s; the indentation before it is checked separately.
_DEFINE = re.compile(rb"#[ \t\f\v]*define[ \t\f\v]+([A-Za-z_][A-Za-z0-9_]*)")
_HORIZONTAL_WHITESPACE = b" \t\f\v"
_IDENTIFIER_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_WHITESPACE_BYTES = b" \t\f\v\r\n"
_WHITESPACE = frozenset(_WHITESPACE_BYTES)
_ALIGNMENT_MODES = ("min", "max", "majority")
# What HX110's fix moves: only the lines out of the macro's own column (when they fit there), or every line to the
# column the upstream script computes (longest line + pad).
REALIGN_MISALIGNED_LINES = "misaligned-lines"
REALIGN_WHOLE_MACRO = "whole-macro"
_REALIGN_MODES = (REALIGN_MISALIGNED_LINES, REALIGN_WHOLE_MACRO)
_QUICK_TEST_LIMIT = 64


@dataclass(frozen=True)
class AlignmentOptions:
    """How HX110 picks the column: the upstream script's --mode, --pad and --target-col, plus the tab width."""

    pad: int = 2
    mode: str = "min"
    target_column: int = 0  # 0: none
    tab_width: int = 8
    realign: str = REALIGN_MISALIGNED_LINES

    @staticmethod
    def from_mapping(options: Mapping[str, Any]) -> AlignmentOptions:
        values = (
            options.get("pad", 2),
            options.get("mode", "min"),
            options.get("target_column", 0),
            options.get("tab_width", 8),
            options.get("realign", REALIGN_MISALIGNED_LINES),
        )
        try:
            return _validated_options(*values)  # the checks ask once per file, always with the run's options
        except TypeError:  # an unhashable value: validate it uncached, which names it
            return _validated_options.__wrapped__(*values)


# typed: True and 1 are different keys, so a bool is rejected however often it is asked for.
@functools.lru_cache(maxsize=64, typed=True)
def _validated_options(pad: Any, mode: Any, target_column: Any, tab_width: Any, realign: Any) -> AlignmentOptions:
    chosen = AlignmentOptions(pad=pad, mode=mode, target_column=target_column, tab_width=tab_width, realign=realign)
    for name, smallest in (("pad", 2), ("target_column", 0), ("tab_width", 1)):
        value = getattr(chosen, name)
        if not isinstance(value, int) or isinstance(value, bool) or value < smallest:
            raise ValueError(f"option {name!r} must be an integer >= {smallest}, got {value!r}")
    if chosen.mode not in _ALIGNMENT_MODES:
        raise ValueError(f"option 'mode' must be one of {', '.join(_ALIGNMENT_MODES)}, got {chosen.mode!r}")
    if chosen.realign not in _REALIGN_MODES:
        raise ValueError(f"option 'realign' must be one of {', '.join(_REALIGN_MODES)}, got {chosen.realign!r}")
    return chosen


@dataclass(frozen=True)
class MacroLine:
    """One physical line of a multiline macro. Offsets are into the file; `backslash` is None on the final line."""

    number: int  # 1-based
    start: int
    content_end: int  # just past the last non-whitespace byte before the backslash (or of the line)
    backslash: int | None
    end: int  # the line terminator (CR LF or LF) or the end of the file
    content_width: int  # visual columns of the content
    backslash_column: int | None  # 1-based visual column of the backslash
    in_literal: bool  # the backslash continues a string or character literal: the spaces before it are its value
    glues_tokens: bool  # no whitespace around the splice: inserting spaces could split a token


@dataclass(frozen=True)
class Macro:
    name: str
    lines: tuple[MacroLine, ...]

    @functools.cached_property
    def continuation_lines(self) -> tuple[MacroLine, ...]:
        return tuple(line for line in self.lines if line.backslash is not None)

    @functools.cached_property
    def movable_lines(self) -> tuple[MacroLine, ...]:
        """Continuation lines whose backslash may move: not inside a literal."""
        return tuple(line for line in self.continuation_lines if not line.in_literal)


@dataclass(frozen=True)
class _Regions:
    """Comments and literals of a file, sorted and disjoint, for "is this offset inside one?" by bisection."""

    starts: tuple[int, ...]
    ends: tuple[int, ...]
    literal: tuple[bool, ...]

    def find(self, offset: int) -> int | None:
        index = bisect.bisect_right(self.starts, offset) - 1
        if index >= 0 and offset < self.ends[index]:
            return index
        return None


def _lex_regions(data: bytes, begin: int = 0, end: int | None = None) -> _Regions:
    """Comments and literals in data[begin:end], in order; `begin` must be outside any comment or literal."""
    stop = len(data) if end is None else end
    starts: list[int] = []
    ends: list[int] = []
    literal: list[bool] = []
    position = begin
    lexeme = _lexeme()
    while True:
        match = lexeme.search(data, position, stop)
        if match is None:
            break
        start = match.start()
        kind = "raw" if match.lastgroup == "delim" else match.lastgroup
        rejected = (kind == "raw" and not _raw_string_prefix_ok(data, start)) or (
            # A C++14 digit separator (1'000) or a quote glued to a name is not a character literal.
            kind == "char" and start > 0 and data[start - 1] in _IDENTIFIER_BYTES and not _char_prefix(data, start)
        )
        if rejected:
            position = start + 1
            continue
        starts.append(start)
        ends.append(match.end())
        literal.append(kind in ("raw", "string", "char"))
        position = max(match.end(), start + 1)
    return _Regions(tuple(starts), tuple(ends), tuple(literal))


def _raw_string_prefix_ok(data: bytes, start: int) -> bool:
    """`R"(` starts a raw string only as a whole token: R, LR, uR, UR or u8R, not the end of a longer name."""
    prefix_start = start
    for prefix in (b"u8", b"u", b"U", b"L"):
        if data[max(0, start - len(prefix)) : start] == prefix:
            prefix_start = start - len(prefix)
            break
    return prefix_start == 0 or data[prefix_start - 1] not in _IDENTIFIER_BYTES


def _char_prefix(data: bytes, start: int) -> bool:
    """L'x', u'x', U'x', u8'x': an encoding prefix that is a whole token before the quote."""
    for prefix in (b"u8", b"u", b"U", b"L"):
        begin = start - len(prefix)
        if begin >= 0 and data[begin:start] == prefix and (begin == 0 or data[begin - 1] not in _IDENTIFIER_BYTES):
            return True
    return False


def display_width(text: bytes, tab_width: int = 8) -> int:
    """Visual columns of a line prefix: tabs to the next multiple of tab_width, wide characters 2, combining 0.

    Bytes that are not UTF-8 count one column each, as editors show them as one replacement glyph.
    """
    if text.isascii():
        if b"\t" not in text:
            return len(text)
        return len(text.decode("ascii").expandtabs(tab_width))
    width = 0
    for character in text.decode("utf-8", "surrogateescape"):
        if character == "\t":
            width += tab_width - width % tab_width
        elif unicodedata.combining(character):
            continue
        elif unicodedata.east_asian_width(character) in ("W", "F"):
            width += 2
        else:
            width += 1
    return width


def _line_end(data: bytes, start: int) -> tuple[int, int]:
    """(terminator, next line start) of the line at `start`; the terminator is the CR of a CR LF, or the LF."""
    newline = data.find(b"\n", start)
    if newline < 0:
        return len(data), len(data)
    terminator = newline - 1 if newline > start and data[newline - 1] == 0x0D else newline
    return terminator, newline + 1


def _continuation_backslash(data: bytes, start: int, terminator: int) -> int | None:
    """Offset of the backslash that continues this line (whitespace may follow it), or None."""
    kept = len(data[start:terminator].rstrip(_HORIZONTAL_WHITESPACE))
    if kept and data[start + kept - 1] == 0x5C:
        return start + kept - 1
    return None


def _continues_previous_line(data: bytes, line_start: int) -> bool:
    if line_start == 0 or data[line_start - 1] != 0x0A:
        return False  # the first line, after a byte-order mark if there is one
    previous_start = data.rfind(b"\n", 0, line_start - 1) + 1
    terminator, _ = _line_end(data, previous_start)
    return _continuation_backslash(data, previous_start, terminator) is not None


def _maybe_in_comment_or_literal(data: bytes, offset: int, first_raw_string: int) -> bool:
    """False when `offset` certainly lies outside every block comment and raw string; True means lex to be sure.

    A comment holding `offset` would be the last `/*` before it with no `*/` in between; splice-continued `//`
    comments and strings are ruled out by the caller (the line before is not continued).
    """
    if 0 <= first_raw_string < offset:
        return True
    opening = data.rfind(b"/*", 0, offset)
    return opening >= 0 and data.rfind(b"*/", opening + 2, offset) < 0


def _physical_lines(data: bytes, define_start: int) -> list[tuple[int, int, int, bytes, bool]]:
    """(start, terminator, next start, line bytes up to the backslash or the line end, continued?) of each line."""
    lines = []
    size = len(data)
    line_start = define_start
    while line_start < size:
        newline = data.find(b"\n", line_start)
        if newline < 0:
            terminator = next_start = size
        else:
            next_start = newline + 1
            terminator = newline - 1 if newline > line_start and data[newline - 1] == 0x0D else newline
        line = data[line_start:terminator]
        kept = line.rstrip(_HORIZONTAL_WHITESPACE)
        if kept.endswith(b"\\"):
            lines.append((line_start, terminator, next_start, kept[:-1], True))
            line_start = next_start
        else:
            lines.append((line_start, terminator, next_start, line, False))
            break
    return lines


def _macro_lines(data: bytes, define_start: int, number: int, tab_width: int) -> list[MacroLine]:
    """One pass over the macro's lines: the rule's hot loop, so the per-line work stays in bytes methods."""
    physical = _physical_lines(data, define_start)
    end = physical[-1][1]
    body = data[define_start:end]
    # Lex (from the `#`: a directive starts outside comments and literals) only when a literal may hold a backslash,
    # or a comment may hide a splice that glues tokens; up to the next line, so that a file ending in a continued line
    # keeps its last splice (a literal continued there holds the spaces before it).
    lex_end = physical[-1][2]
    regions = _lex_regions(data, define_start, lex_end) if b'"' in body or b"'" in body else None
    has_comments = b"/*" in body or b"//" in body
    # Tabs or non-ASCII bytes anywhere in the macro: widths need display_width; otherwise a width is a length.
    plain = body.isascii() and b"\t" not in body
    size = len(data)
    lines: list[MacroLine] = []
    for line_start, terminator, next_start, before, continued in physical:
        content = before.rstrip()
        content_end = line_start + len(content)
        width = len(content) if plain else display_width(content, tab_width)
        if not continued:
            lines.append(MacroLine(number, line_start, content_end, None, terminator, width, None, False, False))
            break
        backslash = line_start + len(before)
        gap_length = len(before) - len(content)
        column = width + gap_length + 1 if plain else _backslash_column(before, content, width, tab_width)
        # No whitespace around the splice: inserting spaces could split a token.
        may_glue = (
            gap_length == 0 and content_end > line_start and next_start < size and data[next_start] not in _WHITESPACE
        )
        if regions is None and may_glue and has_comments:
            regions = _lex_regions(data, define_start, lex_end)
        region = regions.find(backslash) if regions is not None else None
        in_literal = region is not None and regions is not None and regions.literal[region]
        glues = may_glue and (region is None or in_literal)
        lines.append(
            MacroLine(number, line_start, content_end, backslash, terminator, width, column, in_literal, glues)
        )
        number += 1
    return lines


def _backslash_column(before: bytes, content: bytes, width: int, tab_width: int) -> int:
    """1-based visual column of the backslash after `before` (content + the whitespace gap)."""
    gap = before[len(content) :]
    return width + len(gap) + 1 if b"\t" not in gap else display_width(before, tab_width) + 1


# The engine runs each rule over every file in turn: the cache must hold a whole run's files for HX111 to reuse
# HX110's scan. Entries are small next to the file bytes the engine holds anyway.
@functools.lru_cache(maxsize=1024)
def find_macros(data: bytes, tab_width: int = 8) -> tuple[Macro, ...]:
    """Every multiline `#define` of a file that is a real directive (not in a comment, not a continued line)."""
    if b"\\" not in data:
        return ()
    candidates = []
    for match in _DEFINE.finditer(data):
        line_start = data.rfind(b"\n", 0, match.start()) + 1
        if line_start == 0 and data.startswith(_BYTE_ORDER_MARK):
            line_start = len(_BYTE_ORDER_MARK)  # not part of the line: editors show nothing there
        if data[line_start : match.start()].strip(_HORIZONTAL_WHITESPACE):
            continue
        terminator, _ = _line_end(data, line_start)
        if _continuation_backslash(data, line_start, terminator) is not None:
            candidates.append((line_start, match))
    if not candidates:
        return ()
    # The quick comment test scans back to the last `/*`: linear per macro, so many macros get one lexing pass.
    whole_file = _lex_regions(data) if len(candidates) > _QUICK_TEST_LIMIT else None
    first_raw_string = data.find(b'R"')
    macros: list[Macro] = []
    consumed_until = 0
    counted_until, line_number = 0, 1  # line numbers counted incrementally, never from the top again
    for start, match in candidates:
        if start < consumed_until or _continues_previous_line(data, start):
            continue
        if whole_file is not None or _maybe_in_comment_or_literal(data, start, first_raw_string):
            whole_file = whole_file or _lex_regions(data)
            if whole_file.find(match.start(1)) is not None:
                continue
        line_number += data.count(b"\n", counted_until, start)
        counted_until = start
        lines = _macro_lines(data, start, line_number, tab_width)
        macros.append(Macro(match.group(1).decode("ascii"), tuple(lines)))
        consumed_until = lines[-1].end
    return tuple(macros)


def target_column(macro: Macro, options: AlignmentOptions) -> int:
    """The upstream script's column: longest content + pad (mode min), or the widest / most common column if larger."""
    needed = max(line.content_width for line in macro.lines) + options.pad
    if options.target_column:
        return max(options.target_column, needed)
    columns = [line.backslash_column for line in macro.movable_lines if line.backslash_column is not None]
    if not columns or options.mode == "min":
        return needed
    if options.mode == "max":
        return max(max(columns), needed)
    counts = Counter(columns)
    # Most frequent first, ties to the larger column, as the script sorts.
    majority = sorted(counts.items(), key=lambda item: (-item[1], -item[0]))[0][0]
    return max(majority, needed)


def existing_column(macro: Macro) -> int | None:
    """The macro's own column: where most movable backslashes are (ties to the larger column, as the script's
    majority mode); None without a movable backslash."""
    columns = Counter(line.backslash_column for line in macro.movable_lines if line.backslash_column is not None)
    if not columns:
        return None
    return sorted(columns.items(), key=lambda item: (-item[1], -item[0]))[0][0]


def fitting_column(macro: Macro) -> int | None:
    """The existing column every movable line fits in, shared by the most backslashes (ties to the larger): where
    moving the fewest lines aligns the macro. The rightmost existing column always fits, so None only without one."""
    columns = Counter(line.backslash_column for line in macro.movable_lines if line.backslash_column is not None)
    for column, _count in sorted(columns.items(), key=lambda item: (-item[1], -item[0])):
        if all(fits_column(line, column) for line in misaligned_lines(macro, column)):
            return column
    return None


def misaligned_lines(macro: Macro, column: int) -> tuple[MacroLine, ...]:
    """The movable continuation lines whose backslash is not in `column`."""
    return tuple(line for line in macro.movable_lines if line.backslash_column != column)


def fits_column(line: MacroLine, column: int) -> bool:
    """The line's backslash can stand in `column` with at least one space after any content."""
    return line.content_end == line.start or line.content_width + 2 <= column


def is_aligned(macro: Macro) -> bool:
    """Aligned: every movable backslash in one visual column (the script never touches such a macro)."""
    return len({line.backslash_column for line in macro.movable_lines}) <= 1


def padding_before_backslash(line: MacroLine, column: int) -> bytes:
    """The whitespace that puts the line's backslash at `column`, at least one space after any content."""
    if line.content_end == line.start:
        return b" " * max(0, column - 1)
    return b" " * max(1, column - line.content_width - 1)
