"""What `hexlint splits` and `hexlint trace` share at their edges: reading device logs, writing the report."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TextIO, TypeVar

_Read = TypeVar("_Read")


class LogError(Exception):
    """A log, tree or output that cannot be read or written, or logs with nothing to analyse (the message names
    it): exit 2."""


def read_text(path: str) -> str:
    """A log's text; bytes that are not UTF-8 (a device log's torn write) become U+FFFD, never an error."""
    if os.path.isdir(path):
        raise LogError(f"{path}: is a directory (give the log files)")
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except OSError as error:
        raise LogError(f"{path}: cannot read: {error.strerror or error}") from None


def read_all(paths: Sequence[str], read: Callable[[str], _Read]) -> list[_Read]:
    return [read(path) for path in paths]


def write_report(text: str, output: str | None, stdout: TextIO) -> None:
    if not output:
        stdout.write(text)
        return
    try:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as error:
        raise LogError(f"--output: {output}: {error.strerror or error}") from None
