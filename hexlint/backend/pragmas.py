"""Loop unroll pragmas of kernel code, the loop each one governs, and whether that loop does HVX work.

libclang keeps no pragma in the AST, so requests are read from the text: `#pragma unroll`, `#pragma unroll N`,
`#pragma unroll(N)`, `#pragma nounroll`, `#pragma clang loop unroll(full|enable|disable) unroll_count(N)`,
`#pragma GCC unroll N`, the same inside `_Pragma("...")` (in macro bodies), and inside a macro that stringizes its
argument into `_Pragma` (`#define hvx_splat_pragma(x) _Pragma(#x)`). A request governs the loop statement that
follows it (only blanks, comments, line continuations and other pragmas between); the loop is matched to the AST
by where its keyword is written, so a loop in a macro body is governed once per expansion.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from hexlint.backend.dispatch import macro_bodies
from hexlint.backend.loops import LOOP_KINDS
from hexlint.backend.names import matches_any
from hexlint.c.index import Project, UnitIndex, memoized
from hexlint.c.node import Node

_COMMENT = re.compile(rb"//[^\n]*|/\*.*?\*/", re.DOTALL)
_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*pragma[ \t]+(?P<body>[^\n]*)", re.MULTILINE)
_OPERATOR = re.compile(rb'_Pragma\s*\(\s*"(?P<body>(?:[^"\\\n]|\\.)*)"\s*\)')
_STRINGIZING_WRAPPER = re.compile(
    rb"^[ \t]*#[ \t]*define[ \t]+(?P<name>[A-Za-z_]\w*)\((?P<parameter>[A-Za-z_]\w*)\)[ \t]*"
    rb"_Pragma\s*\(\s*#\s*(?P=parameter)\s*\)",
    re.MULTILINE,
)
_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+(?P<name>[A-Za-z_]\w*)(?:\((?P<parameters>[^)]*)\))?", re.MULTILINE)
_UNROLL = re.compile(r"^unroll\s*(?:\(\s*(?P<parenthesised>[^()]*?)\s*\)|\s+(?P<bare>\S+))?\s*$")
_CLANG_LOOP = re.compile(r"^clang\s+loop\s+(?P<options>.*)$")
_CLANG_UNROLL = re.compile(r"\bunroll\s*\(\s*(?P<mode>\w+)\s*\)")
_CLANG_UNROLL_COUNT = re.compile(r"\bunroll_count\s*\(\s*(?P<count>[^()]*?)\s*\)")
_GCC_UNROLL = re.compile(r"^GCC\s+unroll\s+(?P<count>\S+)\s*$")
_INTEGER = re.compile(r"^(?:0[xX][0-9a-fA-F]+|\d+)[uUlL]*$")
_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")
_LOOP_KEYWORD = re.compile(rb"(?:for|while|do)\b")
_WORD = re.compile(rb"[A-Za-z_]\w*")
_COMPARISONS = frozenset({"<", "<=", "!=", ">", ">="})


@dataclass(frozen=True)
class UnrollRequest:
    """One unroll pragma as written. `count` None with `full` set: unroll as far as the compiler can (`#pragma
    unroll`, `unroll(full)`, `unroll(enable)`); `count_name`: the count is a name (a macro parameter or macro)."""

    path: str
    line: int
    column: int
    offset: int
    text: str
    full: bool
    count: int | None
    count_name: str | None
    loop_offset: int | None  # where the governed loop's keyword is written; None: no loop follows
    macro: str | None  # the #define the request is written in
    macro_parameters: tuple[str, ...]

    @property
    def disables(self) -> bool:
        return not self.full and self.count is not None and self.count <= 1


@dataclass(frozen=True)
class GovernedLoop:
    """A loop (one expansion of it, for a loop in a macro body) and the unroll request governing it."""

    request: UnrollRequest
    unit: UnitIndex
    loop: Node
    function: str | None
    count: int | None  # the factor asked for, names resolved where they can be (None: full, or unknown)
    trip_count: int | None  # the loop's compile-time trip count, when its header says it


@dataclass(frozen=True)
class HvxMarkers:
    types: tuple[str, ...]  # fnmatch patterns of HVX type spellings (`HVX_Vector`, `HVX_VectorPair *`)
    calls: tuple[str, ...]  # fnmatch patterns of HVX intrinsics and helpers (`Q6_V*`, `hvx_*`)


def unroll_requests(data: bytes, path: str) -> list[UnrollRequest]:
    """Every unroll request of one file's text, in order."""
    if b"unroll" not in data:
        return []
    text = _COMMENT.sub(lambda match: re.sub(rb"[^\n]", b" ", match.group(0)), data)
    found: list[tuple[int, int, str]] = []  # (start, end, pragma body)
    for match in _DIRECTIVE.finditer(text):
        body = _decode(match.group("body")).rstrip().rstrip("\\")
        found.append((text.index(b"#", match.start()), match.end(), body))
    for match in _OPERATOR.finditer(text):
        found.append((match.start(), match.end(), _decode(match.group("body")).replace('\\"', '"')))
    for wrapper in _STRINGIZING_WRAPPER.finditer(text):
        name = wrapper.group("name")
        for use in re.finditer(rb"(?<![\w#])" + re.escape(name) + rb"\s*\(", text):
            if use.start() == wrapper.start("name"):
                continue
            close = _closing_paren(text, use.end() - 1)
            if close is not None:
                found.append((use.start(), close + 1, _decode(text[use.end() : close])))
    requests = []
    for start, end, body in sorted(found):
        parsed = parse_unroll(body)
        if parsed is None:
            continue
        full, count, count_name = parsed
        line = text.count(b"\n", 0, start) + 1
        column = start - (text.rfind(b"\n", 0, start) + 1) + 1
        macro, parameters = _enclosing_define(text, start)
        requests.append(
            UnrollRequest(
                path, line, column, start, " ".join(body.split()), full, count, count_name,
                _loop_after(text, end), macro, parameters,
            )
        )  # fmt: skip
    return requests


def parse_unroll(body: str) -> tuple[bool, int | None, str | None] | None:
    """(full, count, count_name) of a pragma body, or None when it is no unroll request."""
    body = " ".join(body.split())
    if body == "nounroll":
        return False, 1, None
    match = _UNROLL.match(body)
    if match is not None:
        argument = match.group("parenthesised") or match.group("bare")
        return (True, None, None) if argument is None else _count(argument)
    match = _GCC_UNROLL.match(body)
    if match is not None:
        return _count(match.group("count"))
    match = _CLANG_LOOP.match(body)
    if match is not None:
        options = match.group("options")
        count = _CLANG_UNROLL_COUNT.search(options)
        if count is not None:
            return _count(count.group("count"))
        mode = _CLANG_UNROLL.search(options)
        if mode is None:
            return None
        if mode.group("mode") == "disable":
            return False, 1, None
        return True, None, None
    return None


def _count(argument: str) -> tuple[bool, int | None, str | None]:
    argument = argument.strip()
    if _INTEGER.match(argument):
        return False, int(argument.rstrip("uUlL"), 0), None
    return False, None, argument if _IDENTIFIER.match(argument) else None


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


def _closing_paren(text: bytes, position: int) -> int | None:
    depth = 0
    for index in range(position, min(len(text), position + 400)):
        byte = text[index]
        if byte == ord("("):
            depth += 1
        elif byte == ord(")"):
            depth -= 1
            if depth == 0:
                return index
        elif byte == ord("\n") and text[index - 1 : index] != b"\\":
            return None
    return None


def _loop_after(text: bytes, position: int) -> int | None:
    """Where the loop keyword following a pragma is written, skipping blanks, continuations and other pragmas."""
    while True:
        while position < len(text) and text[position : position + 1] in (b" ", b"\t", b"\n", b"\r", b"\\"):
            position += 1
        if text.startswith(b"#", position) or text.startswith(b"_Pragma", position):
            end = text.find(b"\n", position)
            if text.startswith(b"_Pragma", position):
                close = _closing_paren(text, text.find(b"(", position))
                end = close + 1 if close is not None else end
            if end < 0:
                return None
            position = end
            continue
        break
    return position if _LOOP_KEYWORD.match(text, position) else None


def _enclosing_define(text: bytes, position: int) -> tuple[str | None, tuple[str, ...]]:
    """The #define whose (continued) lines hold `position`, with its parameters."""
    line_start = text.rfind(b"\n", 0, position) + 1
    while True:
        match = _DEFINE.match(text, line_start)
        if match is not None:
            parameters = match.group("parameters")
            names = tuple(part.strip() for part in _decode(parameters).split(",")) if parameters else ()
            return _decode(match.group("name")), names
        if line_start == 0 or text[line_start - 2 : line_start - 1] != b"\\":
            return None, ()
        line_start = text.rfind(b"\n", 0, line_start - 1) + 1


def file_requests(project: Project, path: str, data: bytes) -> list[UnrollRequest]:
    """unroll_requests of a file, read once per project however many units index loops in it."""
    key = ("pragmas.requests", os.path.realpath(path))
    return memoized(project.memo, key, lambda: unroll_requests(data, path))


def governed_loops(project: Project) -> list[GovernedLoop]:
    """Every kernel loop an unroll request governs, one per expansion of a macro's loop. Whether it does HVX work
    is asked of each (`hvx_operation`): it walks the loop."""
    return memoized(project.memo, "pragmas.governed_loops", lambda: list(_governed_loops(project)))


def _governed_loops(project: Project) -> Iterator[GovernedLoop]:
    for unit in project.kernel_units():
        by_place: dict[tuple[str, int], UnrollRequest] = {}
        read: set[str] = set()
        for loop in _loops(unit):
            place = loop.spelling_start if loop.is_macro_expansion else None
            if place is not None and place.path:
                path, offset = place.path, place.offset
            else:
                path, offset = loop.path, loop.start_offset
            real = os.path.realpath(path)
            if real not in read:
                read.add(real)
                for request in file_requests(project, path, unit.source_bytes(path)):
                    if request.loop_offset is not None:
                        by_place[(real, request.loop_offset)] = request
            request = by_place.get((real, offset))
            if request is None:
                continue
            function = unit.enclosing_function(loop)
            yield GovernedLoop(
                request,
                unit,
                loop,
                function.spelling if function is not None else None,
                _resolved_count(project, unit, loop, request),
                trip_count(loop),
            )


def _loops(unit: UnitIndex) -> Iterable[Node]:
    for kind in LOOP_KINDS:
        yield from unit.nodes(kind)


def _object_macro_integers(project: Project) -> dict[str, int]:
    """Object-like macros whose body is an integer literal (`#define UNROLL 4`), for counts written as names."""
    return memoized(project.memo, "pragmas.object_macro_integers", lambda: _integer_macros(project))


def _integer_macros(project: Project) -> dict[str, int]:
    found: dict[str, int] = {}
    for name, body in macro_bodies(project).items():
        text = _decode(body).strip().strip("()").strip()
        if _INTEGER.match(text):
            found[_decode(name)] = int(text.rstrip("uUlL"), 0)
    return found


def _resolved_count(project: Project, unit: UnitIndex, loop: Node, request: UnrollRequest) -> int | None:
    """The request's count; a macro parameter is read from the macro use this loop was expanded from."""
    if request.count is not None or request.count_name is None:
        return request.count
    name = request.count_name
    if request.macro is not None and name in request.macro_parameters and loop.is_macro_expansion:
        data = unit.source_bytes(loop.path)
        use = re.compile(re.escape(request.macro.encode()) + rb"\s*\(").match(data, loop.start_offset)
        if use is not None:
            close = _closing_paren(data, use.end() - 1)
            if close is not None:
                arguments = _split_arguments(data[use.end() : close])
                index = request.macro_parameters.index(name)
                if index < len(arguments):
                    argument = arguments[index].strip()
                    if _INTEGER.match(argument):
                        return int(argument.rstrip("uUlL"), 0)
                    return _object_macro_integers(project).get(argument)
        return None
    return _object_macro_integers(project).get(name)


def _split_arguments(text: bytes) -> list[str]:
    arguments, depth, begin = [], 0, 0
    for index, byte in enumerate(text):
        if byte in b"([{":
            depth += 1
        elif byte in b")]}":
            depth -= 1
        elif byte == ord(",") and depth == 0:
            arguments.append(_decode(text[begin:index]))
            begin = index + 1
    arguments.append(_decode(text[begin:]))
    return arguments


def trip_count(loop: Node) -> int | None:
    """Iterations of `for (i = A; i < B; i += S)` with A, B, S constants clang folds; None otherwise."""
    if loop.kind != "FOR_STMT":
        return None
    parts = loop.children()
    if len(parts) != 4:
        return None  # an empty init, condition or increment: the AST does not say which part is missing
    init, condition, increment, _body = parts
    variable, start = _initial_value(init)
    if variable is None or start is None:
        return None
    bound = _bound(condition, variable)
    step = _step(increment, variable)
    if bound is None or step is None or step == 0:
        return None
    operator, limit = bound
    if operator in ("<", "!=") and step > 0:
        span = limit - start
    elif operator == "<=" and step > 0:
        span = limit - start + 1
    elif operator in (">", "!=") and step < 0:
        span = start - limit
    elif operator == ">=" and step < 0:
        span = start - limit + 1
    else:
        return None
    magnitude = abs(step)
    return max(0, (span + magnitude - 1) // magnitude)


def _initial_value(init: Node) -> tuple[str | None, int | None]:
    if init.kind == "DECL_STMT":
        declarations = init.children()
        if len(declarations) != 1 or declarations[0].kind != "VAR_DECL":
            return None, None
        values = [child for child in declarations[0].children() if child.kind not in ("TYPE_REF",)]
        value = values[-1].constant_value if values else None
        return declarations[0].spelling, value if isinstance(value, int) else None
    operands = init.children()
    if init.binary_operator == "=" and len(operands) == 2:
        left, right = operands
        value = right.constant_value
        return left.unwrapped().spelling or None, value if isinstance(value, int) else None
    return None, None


def _bound(condition: Node, variable: str) -> tuple[str, int] | None:
    operator = condition.binary_operator
    operands = condition.children()
    if operator not in _COMPARISONS or len(operands) != 2:
        return None
    left, right = operands
    value = right.constant_value
    if left.unwrapped().spelling != variable or not isinstance(value, int):
        return None
    return operator, value


def _step(increment: Node, variable: str) -> int | None:
    if increment.kind == "UNARY_OPERATOR":
        operands = increment.children()
        if len(operands) != 1 or operands[0].unwrapped().spelling != variable:
            return None
        return {"++": 1, "--": -1}.get(increment.unary_operator)
    operator = increment.binary_operator
    operands = increment.children()
    if operator in ("+=", "-=") and len(operands) == 2:
        left, right = operands
        value = right.constant_value
        if left.unwrapped().spelling != variable or not isinstance(value, int):
            return None
        return value if operator == "+=" else -value
    return None


_NAMING_LIMIT = 400  # nodes looked at for a better name once the loop is known to do HVX work


def hvx_operation(governed: GovernedLoop, markers: HvxMarkers) -> str | None:
    """An HVX helper, intrinsic or type the loop (header included) uses, or None for a scalar loop.

    An SDK intrinsic is a macro over a builtin: it is named by the word written where it is used, unless that word
    is the macro the whole loop comes from (then a later, better-named use is looked for)."""
    unit, loop = governed.unit, governed.loop
    loop_word = _word_at(unit, loop) if loop.is_macro_expansion else None
    fallback: str | None = None
    for seen, node in enumerate(loop.walk()):
        if fallback is not None and seen > _NAMING_LIMIT:
            break
        kind = node.kind
        if kind in ("CALL_EXPR", "DECL_REF_EXPR") and matches_any(node.spelling, markers.calls):
            if not node.is_macro_expansion:
                return node.spelling
            word = _word_at(unit, node)
            if word and word != loop_word and matches_any(word, markers.calls):
                return word
            fallback = fallback or node.spelling
        elif kind in ("VAR_DECL", "DECL_REF_EXPR", "ARRAY_SUBSCRIPT_EXPR", "UNARY_OPERATOR", "CALL_EXPR"):
            spelling = node.type_spelling
            if spelling and _is_hvx_type(spelling, markers.types):
                if not node.is_macro_expansion:
                    return spelling
                fallback = fallback or spelling
    return fallback


def _word_at(unit: UnitIndex, node: Node) -> str:
    match = _WORD.match(unit.source_bytes(node.path), node.start_offset)
    return _decode(match.group(0)) if match is not None else ""


def _is_hvx_type(spelling: str, patterns: Sequence[str]) -> bool:
    words = re.findall(r"[A-Za-z_]\w*", spelling)
    return any(matches_any(word, patterns) for word in words)


# ---------------------------------------------------------------- built libraries audited in the same run


def libraries_spilling_in_loops(project: Project, function: str) -> tuple[str, ...]:
    """The libraries of the run (when it also audits built libraries) where `function` spills HVX registers in a
    loop (the binary audit's HX201 fact), by file name."""
    found = []
    for library in project.built_libraries:
        if function in library.functions_spilling_vectors_in_loops:
            found.append(os.path.basename(library.path))
    return tuple(found)
