"""The `ggml-hex:` lines of the Hexagon backend's host (ggml-hexagon.cpp), one parser per line kind.

Formats read from ggml's src/ggml-hexagon/ggml-hexagon.cpp and htp-opnode.h at ggml d99724f2 (2026-08-21):

- supports-op (GGML_HEXAGON_VERBOSE=1), `ggml_hexagon_dump_op_supp`:
  `ggml-hex: SESSION supports-op OP|NAMES|DIMS|TYPES|STRIDES|BUFFS|yes` (or `no`)
- profile-op (GGML_HEXAGON_PROFILE), `ggml_hexagon_dump_op_prof`:
  `ggml-hex: SESSION profile-op OP|NAMES|DIMS|TYPES|STRIDES|KPARAMS|usec U cycles C start S mhz M[ pmu [..]]`
- the batch line, `ggml_hexagon_dump_batch_prof`:
  `ggml-hex: SESSION profile-op OPBATCH|----|n-ops N|evt-cnt A,B,..|----|----|usec U cycles C start S mhz M`
  (`----` instead of the event counts unless GGML_HEXAGON_PROFILE=3)
- trace-evt (GGML_HEXAGON_PROFILE=3), `ggml_hexagon_dump_trace_events`:
  `ggml-hex: SESSION trace-evt EVENT: thread T info I start|stop CYCLES`

Each field list (NAMES, DIMS, ...) is the op's inputs joined by ` x `, then ` -> ` and the op's own tensor; a missing
input is `NONE`. A stride entry ends with `!` when its tensor is not contiguous. Lines may carry llama.cpp's log
prefix (timestamp and level) and may follow the unterminated piece of another thread's output on the same line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MARKER = "ggml-hex: "
# llama.cpp's log prefix (common/log.cpp) with --log-prefix and --log-timestamps: `0.00.123.456 D `, coloured with
# --log-colors. It starts every log call's text, so in a dump it also stands between the pieces of one record.
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
LOG_PREFIX = re.compile(r"^(?:\d+\.\d+\.\d+\.\d+ )?[DIWE] ")
_PIECE_PREFIX = re.compile(r"(?<=[:\]s ])(?:\d+\.\d+\.\d+\.\d+ )?[DIWE] (?=[ :\[]|$)")
_HEAD = re.compile(r"ggml-hex: (?P<session>\S+) (?P<kind>supports-op|profile-op|trace-evt) (?P<rest>.*)$")
_TRACE = re.compile(
    r"(?P<event>[A-Za-z0-9_\-]+): thread (?P<thread>\d+) info (?P<info>\d+) (?P<edge>start|stop) (?P<cycles>\d+)$"
)
_TIMING = re.compile(
    r"usec (?P<usec>\d+) cycles (?P<cycles>\d+) start (?P<start>\d+) mhz (?P<mhz>[0-9.]+)"
    r"(?: pmu \[(?P<pmu>[0-9, ]*)\])?$"
)


@dataclass(frozen=True, slots=True)
class OperandFields:
    """One `A x B -> C` field split: the inputs' entries and the op's own."""

    inputs: tuple[str, ...]
    output: str

    @classmethod
    def parse(cls, text: str) -> OperandFields:
        head, arrow, output = text.rpartition(" -> ")
        if not arrow:
            return cls((), text.strip())
        return cls(tuple(part.strip() for part in head.split(" x ")), output.strip())

    def all(self) -> tuple[str, ...]:
        return (*self.inputs, self.output)


@dataclass(frozen=True, slots=True)
class SupportsOp:
    """`supports-op`: the backend's answer for one node (supports_op is asked several times per node)."""

    path: str
    line: int
    session: str
    op: str  # ggml_op_desc: ADD, MUL_MAT, SILU, SWIGLU ...
    names: OperandFields
    dims: OperandFields
    types: OperandFields
    strides: OperandFields
    buffers: OperandFields
    supported: bool


@dataclass(frozen=True, slots=True)
class ProfileOp:
    """`profile-op` for one executed op (fused ops are named `A+B`)."""

    path: str
    line: int
    session: str
    op: str
    names: OperandFields
    dims: OperandFields
    types: OperandFields
    strides: OperandFields
    kernel_params: str
    usec: int
    cycles: int
    start: int
    mhz: float


@dataclass(frozen=True, slots=True)
class ProfileBatch:
    """`profile-op OPBATCH`: one batch of ops; `event_counts` per thread (10 HVX threads + HMX) with PROFILE=3."""

    path: str
    line: int
    session: str
    n_ops: int
    event_counts: tuple[int, ...] | None
    usec: int
    cycles: int
    start: int


@dataclass(frozen=True, slots=True)
class TraceEvent:
    """`trace-evt`: one start or stop edge of a trace event on one NPU thread (thread 10 is HMX)."""

    path: str
    line: int
    session: str
    event: str
    thread: int
    info: int
    edge: str  # "start" | "stop"
    cycles: int  # the low 32 bits of the cycle counter


HexRecord = SupportsOp | ProfileOp | ProfileBatch | TraceEvent


def split_marker(text: str) -> tuple[str, str]:
    """(what precedes a `ggml-hex:` line on this physical line, the `ggml-hex:` line or ""), llama.cpp's log
    prefixes taken out of the first (a dump record's pieces each carry one)."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    text = LOG_PREFIX.sub("", text, count=1)
    position = text.find(MARKER)
    before, line = (text, "") if position < 0 else (text[:position], text[position:])
    return _PIECE_PREFIX.sub("", before), line


def parse_line(text: str, path: str, line: int) -> HexRecord | None:
    """The record of one `ggml-hex: ...` line (no line end), or None for another kind or a line not in the format."""
    head = _HEAD.match(text.rstrip("\r\n"))
    if head is None:
        return None
    session, kind, rest = head.group("session"), head.group("kind"), head.group("rest")
    if kind == "trace-evt":
        event = _TRACE.match(rest)
        if event is None:
            return None
        return TraceEvent(
            path,
            line,
            session,
            event.group("event"),
            int(event.group("thread")),
            int(event.group("info")),
            event.group("edge"),
            int(event.group("cycles")),
        )
    fields = rest.split("|")
    if kind == "supports-op":
        if len(fields) != 7 or fields[6] not in ("yes", "no"):
            return None
        op, names, dims, types, strides, buffers, answer = fields
        return SupportsOp(
            path,
            line,
            session,
            op,
            OperandFields.parse(names),
            OperandFields.parse(dims),
            OperandFields.parse(types),
            OperandFields.parse(strides),
            OperandFields.parse(buffers),
            answer == "yes",
        )
    if len(fields) != 7:
        return None
    timing = _TIMING.match(fields[6])
    if timing is None:
        return None
    if fields[0] == "OPBATCH":
        n_ops = re.fullmatch(r"n-ops (\d+)", fields[2])
        if n_ops is None:
            return None
        counts = re.fullmatch(r"evt-cnt ([0-9,]+)", fields[3])
        return ProfileBatch(
            path,
            line,
            session,
            int(n_ops.group(1)),
            tuple(int(count) for count in counts.group(1).split(",")) if counts else None,
            int(timing.group("usec")),
            int(timing.group("cycles")),
            int(timing.group("start")),
        )
    op, names, dims, types, strides, kernel_params, _ = fields
    return ProfileOp(
        path,
        line,
        session,
        op,
        OperandFields.parse(names),
        OperandFields.parse(dims),
        OperandFields.parse(types),
        OperandFields.parse(strides),
        kernel_params,
        int(timing.group("usec")),
        int(timing.group("cycles")),
        int(timing.group("start")),
        float(timing.group("mhz")),
    )
