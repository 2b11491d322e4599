"""Byte places in a buffer <-> LSP positions. hexlint counts bytes (1-based columns, as libclang does, and byte offsets
in a fix's edits); an LSP position is a 0-based line and a character offset in the encoding the client and server
agreed on: UTF-16 code units unless both said otherwise ("utf-8": bytes, "utf-32": code points).

Pure functions over bytes: no pygls here, so the conversions are tested on their own.
"""

from __future__ import annotations

from bisect import bisect_right

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"


class LineIndex:
    """A buffer's lines, for converting hexlint's byte places to LSP positions in one encoding."""

    def __init__(self, data: bytes, encoding: str = UTF16) -> None:
        self.data = data
        self.encoding = encoding
        # Lines end at "\n" as libclang and hexlint's text rules count them; a "\r" before it is not part of the line.
        self._starts = [0]
        position = data.find(b"\n")
        while position != -1:
            self._starts.append(position + 1)
            position = data.find(b"\n", position + 1)

    @property
    def line_count(self) -> int:
        return len(self._starts)

    def line_bytes(self, line: int) -> bytes:
        """The bytes of 0-based `line` without its line ending; b"" past the end."""
        if not 0 <= line < len(self._starts):
            return b""
        start = self._starts[line]
        end = self._starts[line + 1] - 1 if line + 1 < len(self._starts) else len(self.data)
        text = self.data[start:end]
        return text[:-1] if text.endswith(b"\r") else text

    def units(self, text: bytes) -> int:
        """How many characters of the agreed encoding `text` is. An undecodable byte is one U+FFFD, as an editor
        showing the buffer counts it."""
        if self.encoding == UTF8 or text.isascii():
            return len(text)
        decoded = text.decode("utf-8", errors="replace")
        if self.encoding == UTF32:
            return len(decoded)
        return len(decoded) + sum(1 for char in decoded if ord(char) > 0xFFFF)

    def position(self, line: int, byte_column: int) -> tuple[int, int]:
        """The LSP position of the byte `byte_column` (0-based) of 0-based `line`, both clamped into the buffer."""
        if line < 0:
            return 0, 0
        if line >= len(self._starts):
            return self.end()
        content = self.line_bytes(line)
        column = max(0, min(byte_column, len(content)))
        return line, self.units(content[:column])

    def line_end(self, line: int) -> tuple[int, int]:
        if line >= len(self._starts):
            return self.end()
        return self.position(line, len(self.line_bytes(line)))

    def end(self) -> tuple[int, int]:
        last = len(self._starts) - 1
        return last, self.units(self.line_bytes(last))

    def offset_position(self, offset: int) -> tuple[int, int]:
        """The LSP position of byte offset `offset` of the buffer (a fix's edits are byte offsets)."""
        offset = max(0, min(offset, len(self.data)))
        line = bisect_right(self._starts, offset) - 1
        start = self._starts[line]
        # An offset between a "\r" and its "\n" is the end of the line: the editor has no position inside CRLF.
        return line, self.units(self.data[start:offset].removesuffix(b"\r"))


def span_range(
    index: LineIndex,
    line: int | None,
    column: int | None,
    end_line: int | None,
    end_column: int | None,
) -> tuple[tuple[int, int], tuple[int, int]]:
    """The LSP range of a hexlint span (1-based line and byte column; the end column is exclusive, as libclang's
    extents and SARIF's are). With no end, the range runs to the end of the line; with no line, the buffer's start."""
    if line is None:
        return (0, 0), (0, 0)
    start = index.position(line - 1, (column or 1) - 1)
    if end_line is None or end_line < line:
        return start, index.line_end(line - 1)
    end = index.line_end(end_line - 1) if end_column is None else index.position(end_line - 1, end_column - 1)
    return start, max(start, end)
