"""Progress on stderr for runs a person waits on: units parsed, libraries audited.

Only on a terminal, and only once a run has taken longer than `DELAY` seconds: a pipe, a CI log or a machine format
never gets a progress line, and a fast run never flickers one. The line is rewritten in place (`\\r`) and erased
before the report is written.
"""

from __future__ import annotations

import threading
import time

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

DELAY = 1.0  # seconds before the first line
_WHAT = {"parsed": "units parsed", "audited": "libraries audited"}


class Progress:
    """Called as `progress(event, done, total)` from any thread; `finish()` erases the line."""

    def __init__(self, stream: TextIO, delay: float = DELAY, clock=time.monotonic) -> None:
        self._stream = stream
        self._clock = clock
        self._start = clock()
        self._delay = delay
        self._lock = threading.Lock()
        self._shown = False

    def __call__(self, event: str, done: int, total: int) -> None:
        if self._clock() - self._start < self._delay:
            return
        line = f"hexlint: {done}/{total} {_WHAT.get(event, event)}"
        with self._lock:
            try:
                self._stream.write(f"\r{line}\x1b[K")
                self._stream.flush()
            except (OSError, ValueError):
                return
            self._shown = True

    def finish(self) -> None:
        with self._lock:
            if self._shown:
                try:
                    self._stream.write("\r\x1b[K")
                    self._stream.flush()
                except (OSError, ValueError):
                    pass
                self._shown = False


def progress_for(stream: TextIO, quiet: bool = False) -> Progress | None:
    """A Progress on `stream` when it is a terminal and the run is not quiet or in a machine format, else None."""
    if quiet:
        return None
    try:
        interactive = stream.isatty()
    except (AttributeError, ValueError, OSError):
        interactive = False
    return Progress(stream) if interactive else None
