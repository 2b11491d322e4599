"""The host's op table: which GGML ops `supports_op` can take, through which `supported_*()` predicate, which HTP op
each one runs as (the host's op mapping), whether a kernel dispatch `case` handles that HTP op, and each predicate's
rejections (every `return false` with the conditions that lead to it, as small expression trees a log can be
evaluated against). Facts only: no messages.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from hexlint.core import Span

# typing.TYPE_CHECKING without importing typing: `hexlint splits` without --tree reads these records and never loads
# the C front end (libclang), which the functions below import when they run.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from hexlint.backend.host import CallHop
    from hexlint.c.index import Project, UnitIndex
    from hexlint.c.node import Node

# ggml_unary_op / ggml_glu_op names (ggml_op_desc of a UNARY / GLU node), used when the tree declares no such enum.
DEFAULT_UNARY_OPS = (
    "ABS", "SGN", "NEG", "STEP", "TANH", "ELU", "RELU", "SIGMOID", "GELU", "GELU_QUICK", "SILU", "HARDSWISH",
    "HARDSIGMOID", "EXP", "EXPM1", "SOFTPLUS", "GELU_ERF", "XIELU", "FLOOR", "CEIL", "ROUND", "TRUNC",
)  # fmt: skip
DEFAULT_GLU_OPS = ("REGLU", "GEGLU", "SWIGLU", "SWIGLU_OAI", "GEGLU_ERF", "GEGLU_QUICK")
VIEW_OPS = ("NONE", "RESHAPE", "VIEW", "PERMUTE", "TRANSPOSE")
_LABEL = re.compile(r"^GGML_(UNARY_OP|GLU_OP|OP)_(\w+)$")


@dataclass(frozen=True)
class OpTableSettings:
    supports_op_pattern: str = r"supports_op$"
    predicate_pattern: str = r"supported_"
    htp_op_pattern: str = r"^HTP_OP_\w+$"  # dispatch.DEFAULT_OP_PATTERN


# ------------------------------------------------------------------ expressions of a predicate's conditions


@dataclass(frozen=True)
class Operand:
    """A tensor of the node: `dst` (the node itself) or `src0`, `src1`, ..."""

    role: str


@dataclass(frozen=True)
class Field:
    """`base->name` or `base->name[index]` (type, ne[1], nb[0], op_params[2], buffer ...)."""

    base: Expr
    name: str
    index: int | None = None


@dataclass(frozen=True)
class Call:
    name: str
    arguments: tuple[Expr, ...]


@dataclass(frozen=True)
class Binary:
    operator: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Unary:
    operator: str
    operand: Expr


@dataclass(frozen=True)
class Const:
    value: int | float | bool | str  # str: an enum constant kept by name (GGML_TYPE_F32)


@dataclass(frozen=True)
class Opaque:
    text: str


Expr = Operand | Field | Call | Binary | Unary | Const | Opaque


@dataclass(frozen=True)
class Rejection:
    """One `return false` of a predicate (or a `return EXPR` read as "rejects when EXPR is false"): the conditions
    on the way, each with the value it must have."""

    path: tuple[tuple[Expr, bool], ...]
    text: str  # the conditions as the source spells them, joined by " && "
    kinds: frozenset[str]  # types, dims, strides, op-params, buffers, session, op
    span: Span


@dataclass(frozen=True)
class Predicate:
    name: str
    span: Span
    rejections: tuple[Rejection, ...]


@dataclass(frozen=True)
class OpSupport:
    """One ggml_op_desc as supports_op sees it."""

    op: str  # SOFT_MAX, SILU, SWIGLU ...
    label: str  # the case label: GGML_OP_SOFT_MAX, GGML_UNARY_OP_SILU
    predicate: str | None  # the supported_*() function its case calls
    always: bool  # the case says yes without a predicate (view ops)
    htp_ops: tuple[str, ...]  # what the host's op mapping turns it into
    kernel: bool  # a kernel dispatch case handles one of htp_ops
    span: Span  # the case label


@dataclass(frozen=True)
class OpTable:
    supports_op: str | None  # the function found, None when the tree has none
    # supports_op's call chains (hexlint.backend.host): predicate -> the calls from supports_op that reach it
    chains: dict[str, tuple[CallHop, ...]]
    ops: dict[str, OpSupport]
    predicates: dict[str, Predicate]
    buffer_checks: tuple[str, ...]  # predicates supports_op calls before its switch (buffers, sessions)
    unary_ops: frozenset[str]
    glu_ops: frozenset[str]
    kernel_ops: frozenset[str]  # HTP ops some kernel dispatch case handles
    has_kernels: bool  # the tree holds kernel code (else a mapped op counts as implemented)
    notes: tuple[str, ...] = field(default=())

    def support(self, op: str) -> OpSupport | None:
        """The table's entry for an op desc; a unary or GLU op falls back on a `case GGML_OP_UNARY` / `GLU` entry."""
        found = self.ops.get(op)
        if found is not None:
            return found
        if op in self.unary_ops:
            return self.ops.get("UNARY")
        if op in self.glu_ops:
            return self.ops.get("GLU")
        return None

    def resolve(self, truncated: str) -> str:
        """The whole op desc a dump's 10-character one stands for, when exactly one known op starts with it."""
        if len(truncated) < 10 or truncated in self.ops:
            return truncated
        known = set(self.ops) | self.unary_ops | self.glu_ops
        matches = sorted(name for name in known if name.startswith(truncated))
        return matches[0] if len(matches) == 1 else truncated


def op_table(project: Project, settings: OpTableSettings) -> OpTable:
    from hexlint.c.index import memoized

    return memoized(project.memo, ("ops.op_table", settings), lambda: _op_table(project, settings))


def _op_table(project: Project, settings: OpTableSettings) -> OpTable:
    from hexlint.backend import dispatch

    supports_pattern = re.compile(settings.supports_op_pattern)
    predicate_pattern = re.compile(settings.predicate_pattern)
    htp_pattern = re.compile(settings.htp_op_pattern)
    unary, glu = _enum_names(project)
    mapping = _host_mapping(project, htp_pattern)
    kernel_ops = frozenset(op for ops in _kernel_dispatch(project, htp_pattern).values() for op in ops)
    has_kernels = bool(project.kernel_units())
    host_functions = {function.spelling for unit in project.host_units() for function in unit.functions_all()}
    ops: dict[str, OpSupport] = {}
    buffer_checks: list[str] = []
    found: str | None = None
    chains: dict[str, tuple[CallHop, ...]] = {}
    predicate_sites: dict[str, tuple[UnitIndex, Node]] = {}
    for unit in project.host_units():
        for function in unit.functions_all():
            if not supports_pattern.search(function.spelling) or _body(function) is None:
                continue
            found = function.spelling
            from hexlint.backend import host

            chains = host.call_chains(unit, (found,), (), ("*log*", "*dump*"))
            switches = _inside(unit.nodes("SWITCH_STMT"), function)
            for switch in switches:
                for labels, statement in dispatch.case_groups(switch, _LABEL, frozenset()):
                    if statement.kind == "SWITCH_STMT":
                        continue  # a switch on the unary / GLU op: its own cases are read
                    predicate = _first_call(statement, predicate_pattern, host_functions)
                    always = predicate is None and _says_yes(statement)
                    for label in sorted(labels):
                        op = _LABEL.match(label).group(2)  # type: ignore[union-attr]
                        htp_ops = tuple(sorted(mapping.get(op, ())))
                        implemented = bool(htp_ops) and (not has_kernels or any(o in kernel_ops for o in htp_ops))
                        known = ops.get(op)
                        # A case's statements come one by one (`log(op); supp = check(op); break;`): the first
                        # that names a predicate or says yes decides.
                        if known is None or (known.predicate is None and not known.always):
                            ops[op] = OpSupport(op, label, predicate, always, htp_ops, implemented, switch.span())
            for call in _inside(unit.nodes("CALL_EXPR"), function):
                if predicate_pattern.search(call.spelling) and not any(_within(call, s) for s in switches):
                    buffer_checks.append(call.spelling)
            break
        if found:
            break
    named = {support.predicate for support in ops.values() if support.predicate}
    for unit in project.host_units():
        for function in unit.functions_all():
            wanted = predicate_pattern.search(function.spelling) or function.spelling in named
            if wanted and _body(function) is not None:
                predicate_sites.setdefault(function.spelling, (unit, function))
    predicates = {
        name: Predicate(name, node.span(), tuple(_rejections(unit, node)))
        for name, (unit, node) in predicate_sites.items()
    }
    notes = () if found else ("no supports_op function in the tree's host code",)
    return OpTable(
        found,
        {name: chain for name, chain in chains.items() if name in predicates},
        ops,
        predicates,
        tuple(dict.fromkeys(buffer_checks)),
        frozenset(unary) or frozenset(DEFAULT_UNARY_OPS),
        frozenset(glu) or frozenset(DEFAULT_GLU_OPS),
        kernel_ops,
        has_kernels,
        notes,
    )


def _kernel_dispatch(project: Project, pattern: re.Pattern[str]) -> dict[str, frozenset[str]]:
    from hexlint.backend import dispatch

    return dispatch.kernel_dispatch(project, pattern, frozenset(dispatch.DEFAULT_IGNORED_OPS))


def _enum_names(project: Project) -> tuple[set[str], set[str]]:
    unary: set[str] = set()
    glu: set[str] = set()
    for unit in project.units:
        for constant in unit.nodes("ENUM_CONSTANT_DECL"):
            match = _LABEL.match(constant.spelling)
            if match and match.group(1) == "UNARY_OP" and match.group(2) != "COUNT":
                unary.add(match.group(2))
            elif match and match.group(1) == "GLU_OP" and match.group(2) != "COUNT":
                glu.add(match.group(2))
    return unary, glu


def _host_mapping(project: Project, htp_pattern: re.Pattern[str]) -> dict[str, set[str]]:
    """GGML op desc -> the HTP ops a host switch returns for it (`case GGML_OP_CONT: return HTP_OP_CPY;`)."""
    from hexlint.backend import dispatch

    mapping: dict[str, set[str]] = {}
    for unit in project.host_units():
        for switch in unit.nodes("SWITCH_STMT"):
            for labels, statement in dispatch.case_groups(switch, _LABEL, frozenset()):
                if statement.kind != "RETURN_STMT":
                    continue
                returned = next((child for child in statement.walk() if child.kind == "DECL_REF_EXPR"), None)
                if returned is None or not htp_pattern.search(returned.spelling):
                    continue
                for label in labels:
                    op = _LABEL.match(label).group(2)  # type: ignore[union-attr]
                    mapping.setdefault(op, set()).add(returned.spelling)
    return mapping


def _body(function: Node) -> Node | None:
    return next((child for child in function.children() if child.kind == "COMPOUND_STMT"), None)


def _within(node: Node, outer: Node) -> bool:
    return node.path == outer.path and outer.start_offset <= node.start_offset and node.end_offset <= outer.end_offset


def _inside(nodes: list[Node], function: Node) -> list[Node]:
    return [node for node in nodes if _within(node, function)]


def _first_call(statement: Node, pattern: re.Pattern[str], host_functions: set[str]) -> str | None:
    """The case's predicate: its first call of a `supported_*()` function, else of any function the host defines
    (a checker named otherwise); logging helpers are declared, not defined, in a tree's host code."""
    calls = [node.spelling for node in statement.walk() if node.kind == "CALL_EXPR" and node.spelling]
    for name in calls:
        if pattern.search(name):
            return name
    for name in calls:
        if name in host_functions:
            return name
    return None


def _says_yes(statement: Node) -> bool:
    """`supp = true;` or `return true;` among the case's statements."""
    return any(node.kind == "CXX_BOOL_LITERAL_EXPR" and node.text == "true" for node in statement.walk())


# ------------------------------------------------------------------ a predicate's rejections


def _rejections(unit: UnitIndex, function: Node) -> Iterator[Rejection]:
    body = _body(function)
    if body is None:
        return
    parameters = [child for child in function.children() if child.kind == "PARM_DECL"]
    tensor = next((p.spelling for p in parameters if "ggml_tensor" in p.type_spelling), "op")
    reader = _Reader(tensor)
    yield from reader.statement(body, ())


class _Reader:
    def __init__(self, tensor_parameter: str) -> None:
        self.tensor = tensor_parameter
        self.bindings: dict[str, Expr] = {}

    def statement(self, node: Node, path: tuple[tuple[Node, bool], ...]) -> Iterator[Rejection]:
        kind = node.kind
        if kind == "COMPOUND_STMT":
            for child in node.children():
                yield from self.statement(child, path)
        elif kind == "DECL_STMT":
            for declaration in node.children():
                if declaration.kind == "VAR_DECL":
                    initial = [child for child in declaration.children() if child.kind not in _TYPE_KINDS]
                    if initial:
                        self.bindings[declaration.spelling] = self.expression(initial[-1])
        elif kind == "IF_STMT":
            parts = node.children()
            if len(parts) >= 2:
                condition = parts[0]
                yield from self.statement(parts[1], (*path, (condition, True)))
                if len(parts) >= 3:
                    yield from self.statement(parts[2], (*path, (condition, False)))
        elif kind == "RETURN_STMT":
            returned = node.children()
            if not returned:
                return
            value = returned[0].unwrapped()
            constant = _boolean(value)
            if constant is True:
                return
            steps = path if constant is False else (*path, (value, False))
            if steps:
                yield self.rejection(steps, node)

    def rejection(self, steps: tuple[tuple[Node, bool], ...], at: Node) -> Rejection:
        converted = tuple((self.expression(condition), wanted) for condition, wanted in steps)
        parts = []
        for condition, wanted in steps:
            text = tidy(condition.text)
            if not wanted:
                text = f"!({text})"
            elif len(steps) > 1 and "||" in text:
                text = f"({text})"  # `a && (b || c)`, as the nested ifs mean it
            parts.append(text)
        kinds = frozenset(kind for expression, _ in converted for kind in expression_kinds(expression))
        return Rejection(converted, " && ".join(parts), kinds or frozenset({"operands"}), at.span())

    def expression(self, node: Node) -> Expr:
        node = node.unwrapped()
        kind = node.kind
        if kind == "DECL_REF_EXPR":
            name = node.spelling
            if name in self.bindings:
                return self.bindings[name]
            if name == self.tensor:
                return Operand("dst")
            if name.startswith("GGML_") or name.startswith("HTP_"):
                return Const(name)
            value = node.constant_value
            return Const(value) if value is not None else Opaque(name)
        if kind in ("INTEGER_LITERAL", "FLOATING_LITERAL"):
            value = node.constant_value
            return Const(value) if value is not None else Opaque(node.text)
        if kind == "CXX_BOOL_LITERAL_EXPR":
            return Const(node.text == "true")
        if kind == "GNU_NULL_EXPR" or kind == "CXX_NULL_PTR_LITERAL_EXPR":
            return Const(0)
        if kind == "UNARY_OPERATOR":
            operator = node.unary_operator
            operand = self.expression(node.children()[0])
            return operand if operator == "&" else Unary(operator, operand)
        if kind == "BINARY_OPERATOR":
            left, right = node.children()[:2]
            return Binary(node.binary_operator, self.expression(left), self.expression(right))
        if kind == "MEMBER_REF_EXPR":
            children = node.children()
            base = self.expression(children[0]) if children else Opaque("?")
            return Field(base, node.spelling)
        if kind == "ARRAY_SUBSCRIPT_EXPR":
            base_node, index_node = node.children()[:2]
            base = self.expression(base_node)
            index = index_node.unwrapped().constant_value
            if isinstance(base, Field) and base.name == "op_params" and isinstance(index, int):
                return Field(base.base, base.name, index)  # `op_params = &op->op_params[0]; op_params[2]`
            if isinstance(base, Field) and base.index is None and isinstance(index, int):
                if base.name == "src" and base.base == Operand("dst"):
                    return Operand(f"src{index}")
                return Field(base.base, base.name, index)
            return Opaque(node.text)
        if kind == "CALL_EXPR":
            return Call(node.spelling, tuple(self.expression(argument) for argument in node.arguments()))
        value = node.constant_value
        return Const(value) if value is not None else Opaque(" ".join(node.text.split()))


_TYPE_KINDS = frozenset({"TYPE_REF", "NAMESPACE_REF", "TEMPLATE_REF"})
_CALL_PAREN = re.compile(r"(\w) \(")


def tidy(text: str) -> str:
    """Source text as tokens joined by spaces, with the spaces C style leaves out taken out again."""
    text = " ".join(text.split())
    for spaced, tight in (
        (" -> ", "->"),
        (" [ ", "["),
        (" ]", "]"),
        ("( ", "("),
        (" )", ")"),
        (" ,", ","),
        ("! ", "!"),
    ):
        text = text.replace(spaced, tight)
    text = _CALL_PAREN.sub(r"\1(", text)
    return text.replace("!=", " != ").replace("  ", " ").replace("( ", "(").replace(" )", ")")


def _boolean(node: Node) -> bool | None:
    if node.kind == "CXX_BOOL_LITERAL_EXPR":
        return node.text == "true"
    if node.kind == "INTEGER_LITERAL":
        return bool(node.constant_value)
    return None


_CALL_KINDS = (
    (("contiguous", "permuted", "transposed", "padded"), "strides"),
    (("same_shape", "can_repeat", "nrows", "nelements", "is_matrix", "is_vector", "is_scalar"), "dims"),
    (("op_params", "get_op_params"), "op-params"),
    (("unary_op", "glu_op"), "op"),
    (("buffer", "buft"), "buffers"),
    (("type_size", "row_size", "blck_size", "is_quantized"), "types"),
)
_FIELD_KINDS = {
    "type": "types",
    "ne": "dims",
    "nb": "strides",
    "op_params": "op-params",
    "buffer": "buffers",
    "op": "op",
}


def expression_kinds(expression: Expr) -> set[str]:
    """What an expression tests: the tensor properties it reads."""
    if isinstance(expression, Field):
        if isinstance(expression.base, Operand):
            return {_FIELD_KINDS.get(expression.name, "tensor")}
        if expression.name == "op_params" or expression.name.startswith("op_params"):
            return {"op-params"}
        return {"session"} | expression_kinds(expression.base)
    if isinstance(expression, Call):
        kinds = {kind for names, kind in _CALL_KINDS if any(name in expression.name for name in names)}
        for argument in expression.arguments:
            if not isinstance(argument, Operand):
                kinds |= expression_kinds(argument)
        return kinds or {"call"}
    if isinstance(expression, Binary):
        return expression_kinds(expression.left) | expression_kinds(expression.right)
    if isinstance(expression, Unary):
        return expression_kinds(expression.operand)
    return set()
