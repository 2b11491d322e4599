"""Multi-device (mdev) facts: per-device ranges, the partitions that compute them, fences and completion signals.

Facts for the rules of the guide's "Multi-Device Partitioning (mdev)" and "Multi-Device Synchronization" sections
(HX120-HX125). Everything here starts from text: a kernel function is looked at only when its comment- and
string-free text names what a fact is about (`mdev`, a partition helper, a range start, a fence or a completion
call), so a tree without multi-device code costs a substring test per function. Texts keep their length (comments and
string literals are blanked, not removed), so an offset in a function's text is an offset in its file.

What is computed:
- partitions: each call of the partition helper (`htp_tensor_mdev_partition`) and each hand-written split (a
  division or `fastdiv` by the device count) in a kernel function, with its total-units and units-per-chunk
  expressions resolved through the function's own assignments, whether it sits under `if (... mdev.count > 1)`, the
  variables the range lands in with their declarations, and whether an early return on an empty range follows;
- writers: whether an op (the function holding a partition, with the functions it reaches) writes its destination
  only through DMA (every use of the destination's data pointer, followed through copies into fields and locals, is
  an argument of a DMA call);
- coordinates: outer coordinates (`i01`, `i2` ...) declared at 0 and stepped in a loop of a function whose range
  starts at `row_start` / `elem_start`;
- mdev names in workers and context structs;
- completion signals (barrier, fence write, response) with the work, flushes, DMA pushes, pops and drains before
  them;
- fence sequence numbers: ordering comparisons between sequence values, and fence writes whose sequence number
  reads the counter without advancing it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from hexlint.backend import dispatch, trace
from hexlint.c.index import Project, UnitIndex, memoized
from hexlint.c.node import Node

_IDENTIFIER = re.compile(rb"[A-Za-z_]\w*")
_BLANKED = re.compile(rb"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.DOTALL)
_CAST = re.compile(rb"^\(\s*(?:const\s+)?(?:u?int\d+_t|unsigned|int|size_t|long|uint|float)\s*\)\s*")


@dataclass(frozen=True)
class MdevSettings:
    partition_functions: tuple[str, ...] = ("htp_tensor_mdev_partition",)
    rows_per_chunk_functions: tuple[str, ...] = ("htp_tensor_mdev_rows_per_chunk",)
    contiguity_checks: tuple[str, ...] = ("htp_tensor_is_contiguous",)
    alignment_checks: tuple[str, ...] = ("htp_tensor_mdev_data_aligned",)
    # Checks that every row of the destination starts on a 128-byte line (data aligned, row strides whole lines):
    # under them, any split on whole rows keeps each line on one device.
    row_partition_checks: tuple[str, ...] = ("htp_tensor_can_row_partition",)
    line_size_names: tuple[str, ...] = ("HTP_TENSOR_MDEV_LINE_SIZE", "HEX_L2_LINE_SIZE")
    line_size: int = 128
    device_count_pattern: str = r"\bmdev(?:\.|_|->)count\b"
    device_index_pattern: str = r"\bmdev(?:\.|_|->)idx\b"
    range_start_names: tuple[str, ...] = ("row_start", "elem_start")
    coordinate_pattern: str = r"^i[0-3]?[1-3]$"
    dst_data_pattern: str = (
        r"\bdsts?\s*(?:\[[^\]]*\]\s*)?->\s*data\b|\bhtp_tensor_data\s*\(\s*(?:\w+\s*->\s*)?dsts?\b[^)]*\)"
    )
    dma_functions: tuple[str, ...] = ("dma_queue_push*", "dma_make_ptr", "dma_make_data", "dma_queue_flush")
    dma_push_functions: tuple[str, ...] = ("dma_queue_push*",)
    dma_pop_functions: tuple[str, ...] = ("dma_queue_pop*",)
    dma_flush_functions: tuple[str, ...] = ("dma_queue_flush",)
    worker_runners: tuple[str, ...] = ("work_queue_run", "worker_pool_run_func")
    worker_argument: int = 1
    context_struct_pattern: str = r"_(?:context|ctx)$"
    flush_functions: tuple[str, ...] = (
        "htp_dcache_flush_dirty_tensors",
        "htp_flush_dirty_ranges",
        "htp_tensor_flush_all",
        "qurt_mem_cache_clean",
    )
    completion_functions: tuple[str, ...] = ("htp_mdev_group_barrier", "htp_fence_write", "dspqueue_write")
    bookkeeping_functions: tuple[str, ...] = ("htp_tensor_dirty_all", "htp_dcache_mark_dirty")
    fence_write_functions: tuple[str, ...] = ("htp_fence_write",)
    fence_seq_argument: int = 1
    sequence_pattern: str = r"(?:^|_)seq(?:$|_)"
    sequence_counter: str = "fence_seq"


def settings_from(options: Mapping[str, Any]) -> MdevSettings:
    defaults = MdevSettings()
    values: dict[str, Any] = {}
    for name, default in defaults.__dict__.items():
        value = options.get(name, default)
        if isinstance(default, tuple):
            value = (value,) if isinstance(value, str) else tuple(str(item) for item in value or ())
        elif isinstance(default, int):
            value = int(value)
        else:
            value = str(value)
        values[name] = value
    return MdevSettings(**values)


# ---------------------------------------------------------------- records


@dataclass(frozen=True)
class Place:
    """A point in a kernel file: the function it is in, and its offset."""

    unit: UnitIndex
    function: str
    path: str
    offset: int
    end: int
    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class RangeVariable:
    name: str
    declaration: str | None  # its initialiser at the declaration, None when declared without one or not found
    declared_at: Place | None


@dataclass(frozen=True)
class Partition:
    place: Place
    hand_written: bool  # a division by the device count instead of the helper
    total: str  # the total-units expression as written
    total_resolved: str  # through the function's own assignments (a name replaced by what it was set to)
    units: str  # units per chunk as written ("" for a hand split)
    units_leaves: tuple[str, ...]  # what else units per chunk can be (ternary branches, assignments, resolved)
    units_from_rows_helper: bool  # a leaf is the out-parameter of htp_tensor_mdev_rows_per_chunk()
    checks_contiguity: bool
    checks_alignment: bool
    checks_line_grid: bool  # the function tests a stride against the line size (`nb[2] & (LINE - 1)`)
    checks_row_partition: bool  # the function asks htp_tensor_can_row_partition() (every row on its own lines)
    guarded: bool  # inside `if (... mdev.count > 1)` or after an early return on a single device
    start: RangeVariable | None
    count: RangeVariable | None
    early_return: bool  # an `if (count == 0) ... return` follows the guarded block


@dataclass(frozen=True)
class Coordinate:
    place: Place  # the declaration at 0
    name: str
    step: Place  # where it is stepped in a loop
    range_start: str  # the range start the function reads


@dataclass(frozen=True)
class MdevName:
    place: Place
    name: str
    where: str  # "worker" or "struct"
    owner: str  # the worker function or the struct


@dataclass(frozen=True)
class Completion:
    place: Place
    signal: str
    missing: str  # "flush" (outputs written, no flush after) or "drain" (DMA pushed, not popped or flushed)
    cause: str  # the work call or the push before it


@dataclass(frozen=True)
class SequenceIssue:
    place: Place
    kind: str  # "unsigned-compare" or "not-advanced"
    text: str


# ---------------------------------------------------------------- text helpers


def blank(data: bytes) -> bytes:
    """Comments and string literals replaced by spaces (newlines kept): same length, same offsets."""

    def spaces(match: re.Match[bytes]) -> bytes:
        text = match.group(0)
        if text[:1] in (b'"', b"'"):
            return text[:1] + b" " * (len(text) - 2) + text[-1:]
        return re.sub(rb"[^\n]", b" ", text)

    return _BLANKED.sub(spaces, data)


def matching(text: bytes, open_index: int) -> int:
    """The index of the bracket closing the one at `open_index` (len(text) when unbalanced)."""
    opening = text[open_index : open_index + 1]
    closing = {b"(": b")", b"{": b"}", b"[": b"]"}[opening]
    depth = 0
    for index in range(open_index, len(text)):
        char = text[index : index + 1]
        if char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return index
    return len(text)


def arguments(text: bytes, open_index: int) -> list[tuple[int, int]]:
    """(start, end) of each argument of the call whose `(` is at `open_index`, split at top-level commas."""
    close = matching(text, open_index)
    spans: list[tuple[int, int]] = []
    depth = 0
    start = open_index + 1
    for index in range(open_index + 1, close):
        char = text[index]
        if char in b"([{":
            depth += 1
        elif char in b")]}":
            depth -= 1
        elif char == ord(",") and depth == 0:
            spans.append((start, index))
            start = index + 1
    if close > open_index + 1 and text[start:close].strip():
        spans.append((start, close))
    return spans


def strip_expression(text: str) -> str:
    """Whitespace squeezed, outer parentheses and scalar casts removed."""
    value = " ".join(text.split())
    while True:
        encoded = value.encode()
        cast = _CAST.match(encoded)
        if cast:
            value = encoded[cast.end() :].decode().strip()
            continue
        if value.startswith("(") and matching(encoded, 0) == len(encoded) - 1:
            value = value[1:-1].strip()
            continue
        return value


@functools.lru_cache(maxsize=256)
def _name_pattern(names: tuple[str, ...]) -> re.Pattern[bytes]:
    """One compiled pattern for a tuple of fnmatch patterns over identifiers (`*` any identifier characters)."""
    alternatives = [
        "".join(r"\w*" if char == "*" else r"\w" if char == "?" else re.escape(char) for char in name) for name in names
    ]
    return re.compile(("(?:" + "|".join(alternatives) + r")\Z").encode() if alternatives else rb"(?!)")


@functools.lru_cache(maxsize=256)
def _call_pattern(names: tuple[str, ...]) -> re.Pattern[bytes]:
    """Calls of the names: the name, then `(` (compiled patterns, not facts: safe to keep across projects)."""
    alternatives = [
        "".join(r"\w*" if char == "*" else r"\w" if char == "?" else re.escape(char) for char in name) for name in names
    ]
    return re.compile((r"\b(" + "|".join(alternatives) + r")(?!\w)\s*\(").encode() if alternatives else rb"(?!)")


def _calls(text: bytes, names: tuple[str, ...]) -> Iterator[tuple[str, int, int]]:
    """(callee, name offset, `(` offset) of each call of a name matching one of the patterns."""
    for match in _call_pattern(names).finditer(text):
        if match.group(1)[:1].isalpha() or match.group(1)[:1] == b"_":  # `*` may match nothing, or digits
            yield match.group(1).decode(), match.start(1), match.end() - 1


@functools.lru_cache(maxsize=1024)
def _words_pattern(words: tuple[bytes, ...], also: bytes = b"") -> re.Pattern[bytes]:
    """Any of the identifiers as a whole word (or `also`, a pattern)."""
    parts = [also] if also else []
    if words:
        parts.append(rb"(?<![\w])(?:" + b"|".join(map(re.escape, words)) + rb")\b")
    return re.compile(b"|".join(parts) if parts else rb"(?!)")


def _blocks(text: bytes, keyword: bytes) -> Iterator[tuple[int, int, int, int]]:
    """(condition start, condition end, body start, body end) of each `keyword (...) body` statement."""
    for match in re.finditer(rb"\b" + keyword + rb"\s*\(", text):
        open_index = match.end() - 1
        close = matching(text, open_index)
        body = close + 1
        while body < len(text) and text[body : body + 1].isspace():
            body += 1
        if text[body : body + 1] == b"{":
            end = matching(text, body)
        else:
            end = text.find(b";", body)
            end = len(text) if end < 0 else end
        yield open_index + 1, close, body, end + 1


def _definitions(text: bytes, name: str, before: int) -> list[tuple[int, str]]:
    """(offset, right-hand side) of each plain assignment or initialisation of a local `name` before `before`."""
    found = []
    pattern = re.compile(rb"(?<![.>\w])" + re.escape(name.encode()) + rb"\s*=(?!=)")
    for match in pattern.finditer(text, 0, before):
        end = match.end()
        depth = 0
        index = end
        while index < len(text):
            char = text[index]
            if char in b"([{":
                depth += 1
            elif char in b")]}":
                if depth == 0:
                    break
                depth -= 1
            elif char in b";," and depth == 0:
                break
            index += 1
        found.append((match.start(), text[end:index].decode("utf-8", "replace").strip()))
    return found


def _ternary_leaves(expression: str) -> list[str]:
    """`c ? a : b` -> [a, b] (nested ternaries too); anything else -> [expression]."""
    encoded = expression.encode()
    depth = 0
    question = -1
    for index, char in enumerate(encoded):
        if char in b"([{":
            depth += 1
        elif char in b")]}":
            depth -= 1
        elif char == ord("?") and depth == 0 and question < 0:
            question = index
        elif char == ord(":") and depth == 0 and question >= 0:
            return _ternary_leaves(strip_expression(expression[question + 1 : index])) + _ternary_leaves(
                strip_expression(expression[index + 1 :])
            )
    return [expression]


# ---------------------------------------------------------------- per-function sources


@dataclass
class FunctionText:
    name: str
    unit: UnitIndex
    node: Node
    path: str
    start: int
    own: bytes  # the function's blanked text (offsets: add `start` for the file)
    expanded: bytes  # its text then the bodies of the macros it expands (for facts, not places)

    def place(self, offset: int, end: int | None = None) -> Place:
        lines = _line_starts(self.unit, self.path)
        absolute = self.start + offset
        absolute_end = self.start + (end if end is not None else offset + 1)
        line, column = _line_column(lines, absolute)
        end_line, end_column = _line_column(lines, absolute_end)
        return Place(self.unit, self.name, self.path, absolute, absolute_end, line, column, end_line, end_column)


def _line_starts(unit: UnitIndex, path: str) -> list[int]:
    def compute() -> list[int]:
        data = unit.source_bytes(path)
        return [0, *(match.end() for match in re.finditer(rb"\n", data))]

    return memoized(unit.memo, ("mdev.line_starts", path), compute)


def _line_column(lines: list[int], offset: int) -> tuple[int, int]:
    import bisect

    index = bisect.bisect_right(lines, offset) - 1
    return index + 1, offset - lines[index] + 1


def blanked_file(unit: UnitIndex, path: str) -> bytes:
    """A file of the unit with comments and literals blanked (blank()), made once per unit and path."""
    return memoized(unit.memo, ("mdev.blanked", path), lambda: blank(unit.source_bytes(path)))


# A maximal run of word characters: `(?<![\w])name\b` matches exactly where such a run is `name`.
_RUN = re.compile(rb"\w+")


class MdevFacts:
    """The multi-device facts of one project under one settings record."""

    def __init__(self, project: Project, settings: MdevSettings) -> None:
        self.project = project
        self.settings = settings
        self.text = trace.kernel_text(project)
        self._functions: dict[str, FunctionText] = {}
        self._candidates: dict[tuple[bytes, ...], list[FunctionText]] = {}
        self._assignments: dict[bytes, list[tuple[bytes, int, int]]] = {}
        self._spans: dict[tuple[bytes, tuple[str, ...]], list[tuple[int, int]]] = {}
        self._starts_of: dict[bytes, frozenset[int]] = {}
        self._words_of: dict[bytes, tuple[frozenset[bytes], bool]] = {}
        self._copies_of: dict[bytes, tuple[tuple[bytes, bool, frozenset[bytes], int], ...]] = {}
        self._destination = re.compile(settings.dst_data_pattern.encode() or rb"(?!)")
        self._count = re.compile(settings.device_count_pattern.encode())
        self._multi = re.compile(self._count.pattern + rb"\s*>\s*1\b")
        self._single = re.compile(self._count.pattern + rb"\s*(?:<=\s*1|==\s*1|<\s*2)\b")
        line = b"|".join([*(re.escape(name.encode()) for name in settings.line_size_names), b"%d" % settings.line_size])
        self._line_grid = re.compile(
            rb"\bnb\s*\[\s*[1-3]\s*\]\s*\)?\s*(?:&\s*\(\s*(?:" + line + rb")\s*-\s*1\s*\)|%\s*(?:" + line + rb")\b)"
        )

    # ------------------------------------------------------------ sources

    def function(self, name: str) -> FunctionText | None:
        found = self._functions.get(name)
        if found is None:
            if name not in self.text.functions:
                return None
            unit, node = self.text.functions[name]
            blanked = blanked_file(unit, node.path)
            own = blanked[node.start_offset : node.end_offset]
            expanded = b"\n".join([own, *self.text.chunks(name)[1:]])
            found = FunctionText(name, unit, node, node.path, node.start_offset, own, expanded)
            self._functions[name] = found
        return found

    def candidates(self, *needles: bytes) -> list[FunctionText]:
        """Kernel functions whose text (macro bodies included) holds one of the byte strings."""
        cached = self._candidates.get(needles)
        if cached is not None:
            return cached
        found = self._candidates[needles] = []
        for name in self.text.functions:
            chunks = self.text.chunks(name)
            if any(needle in chunk for chunk in chunks for needle in needles):
                function = self.function(name)
                if function is not None:
                    found.append(function)
        return found

    # ------------------------------------------------------------ partitions

    def partitions(self) -> list[Partition]:
        settings = self.settings
        helpers = settings.partition_functions
        found: list[Partition] = []
        needles = (*tuple(name.encode() for name in helpers), b"mdev")
        for function in self.candidates(*needles):
            if function.name in helpers:
                continue  # the helper's own body splits by the device count: that is its job
            own = function.own
            for _callee, name_at, open_index in _calls(own, helpers):
                spans = arguments(own, open_index)
                if len(spans) < 2:
                    continue
                found.append(self._partition(function, name_at, matching(own, open_index) + 1, spans, False))
            for split_at, end, dividend in self._hand_splits(function):
                found.append(self._partition(function, split_at, end, [dividend], True))
        return found

    def _hand_splits(self, function: FunctionText) -> Iterator[tuple[int, int, tuple[int, int]]]:
        """`total / X.mdev.count` and `fastdiv(total, &X.mdev.count_div)`: (offset, end, dividend span)."""
        own = function.own
        if not self._count.search(own):
            return
        for match in re.finditer(rb"/\s*(?:\(\s*)?(?:[\w.>\-]*?)mdev(?:\.|_|->)count\b", own):
            left_end = match.start()
            left_start = _operand_start(own, left_end)
            yield left_start, match.end(), (left_start, left_end)
        for _callee, name_at, open_index in _calls(own, ("fastdiv",)):
            spans = arguments(own, open_index)
            if len(spans) == 2 and re.search(rb"mdev(?:\.|_|->)count_div", own[spans[1][0] : spans[1][1]]):
                yield name_at, matching(own, open_index) + 1, spans[0]

    def _partition(
        self, function: FunctionText, at: int, end: int, spans: list[tuple[int, int]], hand: bool
    ) -> Partition:
        settings = self.settings
        own = function.own
        total = strip_expression(own[spans[0][0] : spans[0][1]].decode("utf-8", "replace"))
        units = "" if hand else strip_expression(own[spans[1][0] : spans[1][1]].decode("utf-8", "replace"))
        leaves, from_helper = self._units_leaves(function, units, at) if units else ((), False)
        guard_end = self._guard_end(own, at)
        start_variable, count_variable = self._range_variables(function, at, end, total)
        early = False
        if count_variable is not None and guard_end is not None:
            early = _early_return(own, guard_end, count_variable.name)
        return Partition(
            place=function.place(at, end),
            hand_written=hand,
            total=total,
            total_resolved=self._resolve(own, total, at),
            units=units,
            units_leaves=tuple(leaves),
            units_from_rows_helper=from_helper,
            checks_contiguity=any(True for _ in _calls(function.expanded, settings.contiguity_checks)),
            checks_alignment=any(True for _ in _calls(function.expanded, settings.alignment_checks)),
            checks_line_grid=self._line_grid.search(function.expanded) is not None,
            checks_row_partition=any(True for _ in _calls(function.expanded, settings.row_partition_checks)),
            guarded=guard_end is not None,
            start=start_variable,
            count=count_variable,
            early_return=early,
        )

    def _resolve(self, own: bytes, expression: str, before: int, depth: int = 0) -> str:
        """A lone name replaced by the last value the function set it to before `before`, transitively."""
        if depth > 4 or not re.fullmatch(r"[A-Za-z_]\w*", expression):
            return expression
        definitions = _definitions(own, expression, before)
        if not definitions or re.search(rb"(?<![.>\w])" + re.escape(expression.encode()) + rb"\s*[-+*/%&|^<>]+=", own):
            return expression  # changed by a compound assignment too (`rows *= ne02`): not the value it was set to
        offset, value = definitions[-1]
        return self._resolve(own, strip_expression(value), offset, depth + 1)

    def _units_leaves(self, function: FunctionText, units: str, before: int) -> tuple[list[str], bool]:
        own = function.own
        leaves: list[str] = []
        from_helper = False
        pending = [(units, before, 0)]
        while pending:
            expression, at, depth = pending.pop()
            for leaf in _ternary_leaves(expression):
                if depth < 4 and re.fullmatch(r"[A-Za-z_]\w*", leaf):
                    if self._rows_helper_output(own, leaf, at):
                        from_helper = True
                        continue
                    definitions = [(offset, value) for offset, value in _definitions(own, leaf, at)]
                    if definitions:
                        for offset, value in definitions:
                            pending.append((strip_expression(value), offset, depth + 1))
                        continue
                leaves.append(leaf)
        return leaves, from_helper

    def _rows_helper_output(self, own: bytes, name: str, before: int) -> bool:
        for _callee, _at, open_index in _calls(own[:before], self.settings.rows_per_chunk_functions):
            for start, end in arguments(own, open_index):
                if strip_expression(own[start:end].decode("utf-8", "replace")) == "&" + name:
                    return True
        return False

    def _multi_flags(self, own: bytes) -> re.Pattern[bytes] | None:
        """The locals that hold the multi-device test (`const bool mdev_split = octx->ctx->mdev.count > 1 && ...`):
        `if (mdev_split)` guards as the test itself does."""
        names = {
            match.group(1)
            for match in re.finditer(rb"\b([A-Za-z_]\w*)\s*=(?!=)([^;]*)", own)
            if self._multi.search(match.group(2))
        }
        return re.compile(rb"\b(?:" + b"|".join(map(re.escape, sorted(names))) + rb")\b") if names else None

    def _guard_end(self, own: bytes, at: int) -> int | None:
        """The end of the `if (... mdev.count > 1)` block holding `at`, or of the function's single-device early
        return before it; None when unguarded."""
        flags = self._multi_flags(own)
        for condition_start, condition_end, body_start, body_end in _blocks(own, rb"if"):
            condition = own[condition_start:condition_end]
            multi = self._multi.search(condition) or (flags is not None and flags.search(condition))
            if body_start <= at < body_end and multi:
                return body_end
            single = self._single.search(condition)
            if body_end <= at and single and re.search(rb"\breturn\b", own[body_start:body_end]):
                return at
        return None

    def _range_variables(
        self, function: FunctionText, at: int, end: int, total: str
    ) -> tuple[RangeVariable | None, RangeVariable | None]:
        """The variables `X = range.start` / `Y = range.count` take, with their declarations' initialisers."""
        own = function.own
        # the range record: `struct htp_tensor_mdev_range r = helper(...)` or `r = helper(...)`
        head = own[max(0, at - 200) : at]
        record = re.search(rb"(\w+)\s*=\s*$", head)
        variables: list[RangeVariable | None] = []
        for member in (b"start", b"count"):
            if record is None:
                variables.append(None)
                continue
            pattern = rb"(?<![.>\w])(\w+)\s*=\s*" + re.escape(record.group(1)) + rb"\s*\.\s*" + member + rb"\b"
            assignment = re.search(pattern, own[end:])
            if assignment is None:
                variables.append(None)
                continue
            name = assignment.group(1).decode()
            declarations = [
                match
                for match in re.finditer(
                    rb"\b(?:u?int\d+_t|unsigned|int|size_t|uint)\s+(" + re.escape(name.encode()) + rb")\s*([=;,])",
                    own,
                )
                if match.start() < at
            ]
            declaration = declarations[-1] if declarations else None
            value = None
            declared_at = None
            if declaration is not None and declaration.start() < at:
                declared_at = function.place(declaration.start(1), declaration.end(1))
                if declaration.group(2) == b"=":
                    value_end = own.find(b";", declaration.end())
                    value = strip_expression(own[declaration.end() : value_end].decode("utf-8", "replace"))
            variables.append(RangeVariable(name, value, declared_at))
        return variables[0], variables[1]

    # ------------------------------------------------------------ writers

    def dma_only_writer(self, function: str) -> bool:
        """The op writes its destination through DMA alone: every use of the destination's data pointer, in the
        op and the functions it reaches, is an argument of a DMA call or a copy into another name."""
        return memoized(self.project.memo, ("mdev.dma_only", function, self.settings), lambda: self._dma_only(function))

    def _dma_only(self, function: str) -> bool:
        settings = self.settings
        graph = dispatch.kernel_call_graph(self.project)
        names = sorted(dispatch.reachable(graph, function))
        texts = [found.expanded for name in names if (found := self.function(name)) is not None]
        holders: set[bytes] = set()
        # names that receive the destination's data pointer, followed through copies: an assignment copies when its
        # value matches the destination pattern or names, as a whole word, a holder of the round before
        changed = True
        while changed:
            changed = False
            copied = frozenset(holders)
            for text in texts:
                if b"dst" not in text and not any(name in text for name in holders):
                    continue  # most reached functions (HVX helpers) never see the destination
                words, names_destination = self._text_words(text)
                if not names_destination and words.isdisjoint(copied):
                    continue
                dma_calls = self._call_spans(text, settings.dma_functions)
                for lhs, names_destination, words, rhs_start in self._copies(text):
                    if lhs in holders or not (names_destination or not words.isdisjoint(copied)):
                        continue
                    if not _inside(dma_calls, rhs_start):
                        holders.add(lhs)
                        changed = True
        if not holders:
            return False
        uses = _words_pattern(tuple(sorted(holders)))
        pushes = False
        for text in texts:
            if self._text_words(text)[0].isdisjoint(holders):
                continue  # no holder is a word of the text: `uses` finds nothing in it
            dma_calls = self._call_spans(text, settings.dma_functions)
            runner_calls = self._call_spans(text, settings.worker_runners)
            assigned = self.assignments(text)
            lhs_starts = self._assignment_starts(text)
            for use in uses.finditer(text):
                at = use.start()
                if _inside(dma_calls, at):
                    pushes = True
                    continue
                if _inside(runner_calls, at) or at in lhs_starts:
                    continue  # the context goes to the worker (what the worker does decides); a target
                if any(start <= at < end for _lhs, start, end in assigned):
                    continue  # copied into another holder (followed above)
                if re.match(rb"\w+\s*(?:==|!=)", text[at : at + 80]) or _in_condition(text, at):
                    continue
                return False
        return pushes

    def _text_words(self, text: bytes) -> tuple[frozenset[bytes], bool]:
        """Every maximal run of word characters of a text (a whole-word match is one of them), and whether the
        destination pattern matches it."""
        found = self._words_of.get(text)
        if found is None:
            found = self._words_of[text] = (frozenset(_RUN.findall(text)), self._destination.search(text) is not None)
        return found

    def _assignment_starts(self, text: bytes) -> frozenset[int]:
        found = self._starts_of.get(text)
        if found is None:
            found = self._starts_of[text] = frozenset(match.start() for match in _ASSIGNMENT.finditer(text))
        return found

    def _copies(self, text: bytes) -> tuple[tuple[bytes, bool, frozenset[bytes], int], ...]:
        """The assignments a destination copy can be, read once per text: not a brace initialiser (its designated
        fields are assignments of their own), (assigned name, whether its value matches the destination pattern, the
        words of its value, where the value starts)."""
        found = self._copies_of.get(text)
        if found is None:
            destination = self._destination.search
            found = self._copies_of[text] = tuple(
                (lhs, destination(text, start, end) is not None, frozenset(_RUN.findall(text, start, end)), start)
                for lhs, start, end in self.assignments(text)
                if not text[start:end].lstrip().startswith(b"{")
            )
        return found

    def assignments(self, text: bytes) -> list[tuple[bytes, int, int]]:
        found = self._assignments.get(text)
        if found is None:
            found = self._assignments[text] = _assignments(text)
        return found

    def _call_spans(self, text: bytes, names: tuple[str, ...]) -> list[tuple[int, int]]:
        """(open, close) of the argument list of each call of one of the names in the text."""
        key = (text, names)
        found = self._spans.get(key)
        if found is None:
            found = self._spans[key] = [
                (open_index, matching(text, open_index)) for _c, _a, open_index in _calls(text, names)
            ]
        return found

    # ------------------------------------------------------------ coordinates

    def coordinates(self) -> list[Coordinate]:
        settings = self.settings
        starts = tuple(name.encode() for name in settings.range_start_names)
        coordinate = re.compile(settings.coordinate_pattern)
        found = []
        declaration = re.compile(rb"\b(?:const\s+)?(?:u?int\d+_t|unsigned|int|size_t|uint)\s+([^;]*);")
        for function in self.candidates(*starts):
            # A worker stamped out by a macro (`DEFINE_CPY_SAMESHAPE(f16, f32)`) has its body in the #define: read
            # that, and place what is found at the invocation, the function's only text in the file.
            stamped = function.node.is_macro_expansion
            own = function.expanded if stamped else function.own
            place = (lambda start, end, f=function: f.place(0, len(f.own))) if stamped else function.place
            start_name = next((name.decode() for name in starts if re.search(rb"\b" + name + rb"\b", own)), "")
            if not start_name:
                continue
            # the row loops: those whose header reads the range start or a local computed from it (`ir0`); an
            # outer coordinate stepped in another loop (over a dimension the range does not split) may start at 0
            derived = self._derived_names(own, start_name)
            derived_pattern = re.compile(rb"\b(?:" + b"|".join(re.escape(name.encode()) for name in derived) + rb")\b")
            loops = [
                (body_start, body_end)
                for keyword in (rb"for", rb"while")
                for head_start, head_end, body_start, body_end in _blocks(own, keyword)
                if derived_pattern.search(own[head_start:head_end])
            ]
            for_heads = [(start, end) for start, end, _body, _end in _blocks(own, rb"for")]
            for statement in declaration.finditer(own):
                if any(start <= statement.start() < end for start, end in for_heads):
                    continue
                for declarator in statement.group(1).split(b","):
                    parts = declarator.split(b"=", 1)
                    name = parts[0].strip().decode("utf-8", "replace")
                    if len(parts) != 2 or not coordinate.match(name) or parts[1].strip() != b"0":
                        continue
                    step = re.compile(
                        rb"(?:\+\+\s*" + name.encode() + rb"\b|(?<![\w.>])" + name.encode() + rb"\s*(?:\+\+|\+=))"
                    )
                    for match in step.finditer(own, statement.end()):
                        if any(start <= match.start() < end for start, end in loops):
                            at = (
                                statement.start(1)
                                + declarator.find(parts[0].strip())
                                + _offset_in(statement.group(1), declarator)
                            )
                            found.append(
                                Coordinate(
                                    place(at, at + len(name)), name, place(match.start(), match.end()), start_name
                                )
                            )
                            break
        return found

    def _derived_names(self, own: bytes, start_name: str) -> set[str]:
        """The range start and the locals computed from it (`ir0 = row_start + dr * ith`, `ir1 = MIN(ir0 ...)`)."""
        names = {start_name}
        for _round in range(3):
            pattern = re.compile(rb"\b(?:" + b"|".join(re.escape(name.encode()) for name in names) + rb")\b")
            grown = set(names)
            for lhs, start, end in self.assignments(own):
                if pattern.search(own, start, end):
                    grown.add(lhs.decode("utf-8", "replace"))
            if grown == names:
                break
            names = grown
        return names

    # ------------------------------------------------------------ mdev names

    def worker_names(self) -> set[str]:
        """Functions handed to a worker runner (its worker argument, by name), read from the text of the functions
        that call a runner: no AST walk."""
        settings = self.settings
        runners = tuple(settings.worker_runners)
        names: set[str] = set()
        for function in self.candidates(*(runner.encode() for runner in runners)):
            for _callee, texts in self.text.calls_with_arguments(function.name, runners):
                if len(texts) <= settings.worker_argument:
                    continue
                argument = strip_expression(texts[settings.worker_argument])
                if re.fullmatch(r"[A-Za-z_]\w*", argument):  # a name, not the runner's own parameter list
                    names.update(self.text.assigned_functions(function.name, argument) or [argument])
        return names

    def mdev_names(self) -> list[MdevName]:
        found: list[MdevName] = []
        for name in sorted(self.worker_names() & {function.name for function in self.candidates(b"mdev")}):
            function = self.function(name)
            if function is None:
                continue
            # A worker stamped out by a macro is read in its #define and placed at the invocation (as coordinates).
            stamped = function.node.is_macro_expansion
            text = function.expanded if stamped else function.own
            match = re.search(rb"\b\w*mdev\w*\b", text) if b"mdev" in text else None
            if match:
                place = function.place(0, len(function.own)) if stamped else function.place(match.start(), match.end())
                found.append(MdevName(place, match.group(0).decode(), "worker", name))
        context = re.compile(self.settings.context_struct_pattern)
        seen: set[tuple[str, int]] = set()
        for unit in self.project.kernel_units():
            for field in unit.nodes("FIELD_DECL"):
                if not field.spelling.startswith("mdev_") or (field.path, field.start_offset) in seen:
                    continue
                seen.add((field.path, field.start_offset))
                owner = unit.parent(field)
                owner_name = owner.spelling if owner is not None else ""
                if owner is None or not context.search(owner_name):
                    continue
                lines = _line_starts(unit, field.path)
                line, column = field.line, field.column
                end_line, end_column = _line_column(lines, field.end_offset)
                place = Place(
                    unit,
                    owner_name,
                    field.path,
                    field.start_offset,
                    field.end_offset,
                    line,
                    column,
                    end_line,
                    end_column,
                )
                found.append(MdevName(place, field.spelling, "struct", owner_name))
        return found

    # ------------------------------------------------------------ completion

    def completions(self) -> list[Completion]:
        settings = self.settings
        needles = tuple(name.encode() for name in settings.completion_functions)
        exempt = set(settings.completion_functions) | set(settings.flush_functions)
        found = []
        for function in self.candidates(*needles):
            if function.name in exempt:
                continue
            before, _after = self._walk_calls(function.name, set())
            for at, callee, state in before:
                if not _matches(callee, settings.completion_functions):
                    continue
                if state.dirty is not None:
                    found.append(Completion(function.place(at, at + len(callee)), callee, "flush", state.dirty))
                elif state.pushed is not None:
                    found.append(Completion(function.place(at, at + len(callee)), callee, "drain", state.pushed))
        return found

    def _own_calls(self, name: str) -> list[tuple[int, str]]:
        function = self.function(name)
        if function is None:
            return []
        skip = {"if", "for", "while", "switch", "return", "sizeof", name}
        return sorted((at, callee) for callee, at, _open in _calls(function.own, ("*",)) if callee not in skip)

    def _walk_calls(self, name: str, active: set[str]) -> tuple[list[tuple[int, str, _CallState]], _CallState]:
        """Each call of the function in source order with the state before it (work not flushed yet: the call
        that ran it; a DMA push not popped or drained yet), and the state after its last call."""
        state = _CallState(None, None)
        before = []
        for at, callee in self._own_calls(name):
            before.append((at, callee, state))
            state = self._step(name, callee, state, active)
        return before, state

    def _step(self, name: str, callee: str, state: _CallState, active: set[str]) -> _CallState:
        settings = self.settings
        if _matches(callee, settings.flush_functions):
            return _CallState(None, state.pushed)
        if _matches(callee, settings.bookkeeping_functions):
            return state  # marks or evicts cache lines: no output of an op is written there
        if _matches(callee, settings.dma_push_functions):
            return _CallState(state.dirty, callee)
        if _matches(callee, settings.dma_pop_functions + settings.dma_flush_functions):
            return _CallState(state.dirty, None)
        if callee in settings.worker_runners:
            return state if dma_only_writer(self.project, self.settings, name) else _CallState(callee, state.pushed)
        if callee in self.text.functions and callee not in active:
            effect = self._effect(callee, active)
            if effect == "dirty":
                return _CallState(callee, state.pushed)
            if effect == "clean":
                return _CallState(None, state.pushed)
        return state

    def _effect(self, name: str, active: set[str]) -> str:
        """What calling the function leaves: "dirty" (work written through the caches, not flushed after it),
        "clean" (it flushes, after any work), "none" (neither)."""
        key = ("mdev.effect", name, self.settings)
        if key not in self.project.memo:
            before, after = self._walk_calls(name, active | {name})
            if after.dirty is not None:
                effect = "dirty"
            elif any(_matches(callee, self.settings.flush_functions) for _at, callee, _state in before):
                effect = "clean"
            else:
                effect = "none"
            self.project.memo[key] = effect
        return self.project.memo[key]

    # ------------------------------------------------------------ sequence numbers

    def sequence_issues(self) -> list[SequenceIssue]:
        settings = self.settings
        sequence = re.compile(settings.sequence_pattern)
        counter = settings.sequence_counter.encode()
        found = []
        writes = tuple(settings.fence_write_functions)
        needles = (b"fence",)
        compare = re.compile(
            rb"(?<![\w.>)\]])([A-Za-z_]\w*(?:\s*(?:->|\.)\s*[A-Za-z_]\w*)*)\s*(>=|<=|<(?![<=])|>(?![>=]))\s*"
            rb"([A-Za-z_]\w*(?:\s*(?:->|\.)\s*[A-Za-z_]\w*)*)(?!\s*[\w(\[])"
        )
        for function in self.candidates(*needles):
            own = function.own
            for match in compare.finditer(own):
                if own[match.start(2) - 1 : match.start(2)] in (b"-", b"<", b">"):
                    continue
                left = re.split(rb"->|\.", match.group(1))[-1].strip().decode()
                right = re.split(rb"->|\.", match.group(3))[-1].strip().decode()
                if sequence.search(left) and sequence.search(right):
                    text = " ".join(match.group(0).decode().split())
                    found.append(SequenceIssue(function.place(match.start(), match.end()), "unsigned-compare", text))
            for _callee, at, open_index in _calls(own, writes):
                spans = arguments(own, open_index)
                if len(spans) <= settings.fence_seq_argument:
                    continue
                start, end = spans[settings.fence_seq_argument]
                value = strip_expression(own[start:end].decode("utf-8", "replace"))
                resolved = [value]
                if re.fullmatch(r"[A-Za-z_]\w*", value):
                    resolved = [text for _offset, text in _definitions(own, value, at)] or [value]
                last = resolved[-1].encode()
                if counter in last and not re.search(
                    rb"\+\+\s*[\w.>\-]*" + counter + rb"\b|" + counter + rb"\s*(?:\+\+|\+=)", last
                ):
                    found.append(
                        SequenceIssue(function.place(start, end), "not-advanced", " ".join(last.decode().split()))
                    )
        return found


# ---------------------------------------------------------------- small text facts


@dataclass(frozen=True)
class _CallState:
    dirty: str | None  # the call that ran work whose outputs are not flushed yet
    pushed: str | None  # the DMA push not popped or drained yet


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return _name_pattern(patterns).match(name.encode()) is not None  # a whole name: the pattern ends in \Z


_ASSIGNMENT = re.compile(rb"(?<![\w])([A-Za-z_]\w*)\s*=(?!=)")


_DELIMITER = re.compile(rb"[;,()\[\]{}]")


def _assignments(text: bytes) -> list[tuple[bytes, int, int]]:
    """(assigned name: the last identifier of the target, rhs start, rhs end) of each `x = ...`, `a.b = ...`,
    `.field = ...` (designated initialisers) and `T x = ...`."""
    found = []
    for match in _ASSIGNMENT.finditer(text):
        before = text[match.start() - 1 : match.start()]
        if before in (b"=", b"!", b"<", b">", b"+", b"-", b"*", b"/", b"&", b"|", b"^", b"%"):
            continue
        start = match.end()
        depth = 0
        end = len(text)
        for delimiter in _DELIMITER.finditer(text, start):
            char = delimiter.group(0)
            if char in b"([{":
                depth += 1
            elif char in b")]}":
                if depth == 0:
                    end = delimiter.start()
                    break
                depth -= 1
            elif depth == 0:
                end = delimiter.start()
                break
        found.append((match.group(1), start, end))
    return found


def _inside(spans: list[tuple[int, int]], at: int) -> bool:
    return any(open_index < at <= close for open_index, close in spans)


def _in_condition(text: bytes, at: int) -> bool:
    """`at` is in the condition of an `if`: a NULL or range test reads the pointer, it does not write through it."""
    head = text[max(0, at - 120) : at]
    match = re.search(rb"\bif\s*\((?:[^;{}]*)$", head)
    return match is not None


def _operand_start(text: bytes, end: int) -> int:
    """The start of the multiplicative operand ending at `end` (before a `/`)."""
    index = end
    while index > 0 and text[index - 1 : index].isspace():
        index -= 1
    if text[index - 1 : index] == b")":
        depth = 0
        while index > 0:
            index -= 1
            char = text[index : index + 1]
            if char == b")":
                depth += 1
            elif char == b"(":
                depth -= 1
                if depth == 0:
                    break
        return index
    while index > 0 and (
        text[index - 1 : index].isalnum() or text[index - 1 : index] in (b"_", b".", b">", b"-", b"[", b"]")
    ):
        if text[index - 1 : index] == b"-" and text[index : index + 1] != b">":
            break
        index -= 1
    return index


def _early_return(own: bytes, after: int, name: str) -> bool:
    pattern = re.compile(
        rb"(?:\b" + re.escape(name.encode()) + rb"\s*==\s*0\b|!\s*" + re.escape(name.encode()) + rb"\b)"
    )
    for condition_start, condition_end, body_start, body_end in _blocks(own[after:], rb"if"):
        if pattern.search(own[after + condition_start : after + condition_end]) and re.search(
            rb"\breturn\b", own[after + body_start : after + body_end]
        ):
            return True
    return False


def _offset_in(whole: bytes, part: bytes) -> int:
    return whole.find(part)


# The settings each fact depends on: rules configured alike (the defaults) share the fact whatever else their
# options hold (HX120-HX122 share the partitions, HX121 and HX124 the DMA-only writers).
_PARTITION_FIELDS = (
    "partition_functions",
    "rows_per_chunk_functions",
    "contiguity_checks",
    "alignment_checks",
    "row_partition_checks",
    "line_size_names",
    "line_size",
    "device_count_pattern",
)
_WRITER_FIELDS = ("dst_data_pattern", "dma_functions", "worker_runners", "worker_argument")


def _facet(settings: MdevSettings, fields: tuple[str, ...]) -> MdevSettings:
    return replace(MdevSettings(), **{name: getattr(settings, name) for name in fields})


def mdev_facts(project: Project, settings: MdevSettings) -> MdevFacts:
    return memoized(project.memo, ("mdev.facts", settings), lambda: MdevFacts(project, settings))


def partitions(project: Project, settings: MdevSettings) -> list[Partition]:
    settings = _facet(settings, _PARTITION_FIELDS)
    return memoized(project.memo, ("mdev.partitions", settings), lambda: mdev_facts(project, settings).partitions())


def coordinates(project: Project, settings: MdevSettings) -> list[Coordinate]:
    return memoized(project.memo, ("mdev.coordinates", settings), lambda: mdev_facts(project, settings).coordinates())


def completions(project: Project, settings: MdevSettings) -> list[Completion]:
    return memoized(project.memo, ("mdev.completions", settings), lambda: mdev_facts(project, settings).completions())


def sequence_issues(project: Project, settings: MdevSettings) -> list[SequenceIssue]:
    return memoized(project.memo, ("mdev.sequences", settings), lambda: mdev_facts(project, settings).sequence_issues())


def mdev_names(project: Project, settings: MdevSettings) -> list[MdevName]:
    return memoized(project.memo, ("mdev.names", settings), lambda: mdev_facts(project, settings).mdev_names())


def dma_only_writer(project: Project, settings: MdevSettings, function: str) -> bool:
    return mdev_facts(project, _facet(settings, _WRITER_FIELDS)).dma_only_writer(function)
