"""Which rejection of a `supported_*()` predicate a supports-op line shows: each rejection's conditions evaluated on
the line's types, dims, strides and buffers, in three values (true, false, unknown: op params, the session, calls
hexlint does not model)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hexlint.backend.ops import Binary, Call, Const, Expr, Field, Opaque, Operand, Predicate, Rejection, Unary
from hexlint.runtime.hexlog import SupportsOp

_SIZES = {"float": 4, "double": 8, "int32_t": 4, "int64_t": 8, "uint16_t": 2, "ggml_fp16_t": 2}


@dataclass(frozen=True, slots=True)
class TensorFacts:
    present: bool
    type: str  # ggml_type_name: f32, f16, q4_0 ...
    ne: tuple[int, int, int, int] | None
    nb: tuple[int, int, int, int] | None
    contiguous: bool | None
    buffer: str  # buffer name, NONE before allocation


def tensor_facts(record: SupportsOp) -> dict[str, TensorFacts]:
    """`src0`, `src1`, ... and `dst` as the line shows them."""
    roles = [f"src{index}" for index in range(len(record.types.inputs))] + ["dst"]
    facts: dict[str, TensorFacts] = {}
    columns = (record.types.all(), record.dims.all(), record.strides.all(), record.buffers.all())
    fields = zip(roles, *(_padded(column, len(roles)) for column in columns), strict=True)
    for role, type_name, dims, strides, buffer in fields:
        if type_name == "NONE":
            facts[role] = TensorFacts(False, "", None, None, None, "NONE")
            continue
        contiguous = None if strides == "NONE" else not strides.endswith("!")
        facts[role] = TensorFacts(True, type_name, _numbers(dims), _numbers(strides.rstrip("!")), contiguous, buffer)
    return facts


def _padded(values: tuple[str, ...], length: int) -> tuple[str, ...]:
    return (*values, *("NONE",) * (length - len(values)))[:length]


def _numbers(text: str) -> tuple[int, int, int, int] | None:
    parts = text.split(":")
    if not all(part.isdigit() for part in parts) or len(parts) not in (2, 4):
        return None
    values = [int(part) for part in parts] + [1, 1]
    if len(parts) == 2:
        return (values[0], values[1], 1, 1)
    return (values[0], values[1], values[2], values[3])


Value = bool | int | float | str | TensorFacts | None  # None: unknown


class _Evaluator:
    def __init__(self, facts: dict[str, TensorFacts]) -> None:
        self.facts = facts

    def value(self, expression: Expr) -> Value:
        if isinstance(expression, Const):
            return expression.value
        if isinstance(expression, Operand):
            return self.facts.get(expression.role, TensorFacts(False, "", None, None, None, "NONE"))
        if isinstance(expression, Field):
            return self.field(expression)
        if isinstance(expression, Unary):
            operand = self.value(expression.operand)
            if expression.operator == "!":
                truth = _truth(operand)
                return None if truth is None else not truth
            if expression.operator == "-" and isinstance(operand, (int, float)) and not isinstance(operand, bool):
                return -operand
            return None
        if isinstance(expression, Binary):
            return self.binary(expression)
        if isinstance(expression, Call):
            return self.call(expression)
        assert isinstance(expression, Opaque)
        size = re.fullmatch(r"sizeof\s*\(\s*(\w+)\s*\)", expression.text)
        return _SIZES.get(size.group(1)) if size else None

    def field(self, expression: Field) -> Value:
        base = self.value(expression.base)
        if not isinstance(base, TensorFacts) or not base.present:
            return None
        if expression.name == "type":
            return "GGML_TYPE_" + base.type.upper()
        if expression.name in ("ne", "nb") and expression.index is not None:
            numbers = base.ne if expression.name == "ne" else base.nb
            return numbers[expression.index] if numbers and 0 <= expression.index < 4 else None
        if expression.name == "buffer":
            return None if base.buffer == "NONE" else base.buffer
        return None

    def binary(self, expression: Binary) -> Value:
        operator = expression.operator
        if operator in ("&&", "||"):
            left = _truth(self.value(expression.left))
            if (operator == "&&" and left is False) or (operator == "||" and left is True):
                return left
            right = _truth(self.value(expression.right))
            if operator == "&&":
                return False if right is False else (True if left and right else None)
            return True if right is True else (False if left is False and right is False else None)
        left, right = self.value(expression.left), self.value(expression.right)
        if operator in ("==", "!=") and (isinstance(left, TensorFacts) or isinstance(right, TensorFacts)):
            tensor, other = (left, right) if isinstance(left, TensorFacts) else (right, left)
            if other != 0 or isinstance(other, bool) or not isinstance(tensor, TensorFacts):
                return None
            return tensor.present == (operator == "!=")  # `mask != NULL`
        if left is None or right is None or isinstance(left, TensorFacts) or isinstance(right, TensorFacts):
            return None
        if operator in ("==", "!="):
            if isinstance(left, str) != isinstance(right, str):
                return None
            return (left == right) == (operator == "==")
        if isinstance(left, str) or isinstance(right, str):
            return None
        try:
            return _ARITHMETIC[operator](left, right)
        except (KeyError, ZeroDivisionError, TypeError):
            return None

    def call(self, expression: Call) -> Value:
        name = expression.name
        tensors = [self.value(argument) for argument in expression.arguments]
        tensors = [tensor for tensor in tensors if isinstance(tensor, TensorFacts)]
        if not tensors or not all(tensor.present for tensor in tensors):
            return None
        if name.endswith("is_contiguous"):
            return tensors[0].contiguous
        if re.search(r"is_contiguous_(1|2|rows|channels)$", name):
            return True if tensors[0].contiguous else None  # contiguous implies these; the converse is unknown
        if name.endswith("are_same_shape") and len(tensors) == 2:
            if tensors[0].ne is None or tensors[1].ne is None:
                return None
            return tensors[0].ne == tensors[1].ne
        if name.endswith("can_repeat") and len(tensors) == 2:
            small, large = tensors[0].ne, tensors[1].ne
            if small is None or large is None:
                return None
            return all(s and b % s == 0 for s, b in zip(small, large, strict=True))
        if name.endswith("is_permuted") and tensors[0].nb is not None:
            nb = tensors[0].nb
            return nb[0] > nb[1] or nb[1] > nb[2] or nb[2] > nb[3]
        if name.endswith("is_transposed") and tensors[0].nb is not None:
            return tensors[0].nb[0] > tensors[0].nb[1]
        return None


_ARITHMETIC = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a // b if isinstance(a, int) and isinstance(b, int) else a / b,
    "%": lambda a, b: a % b,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
}


def _truth(value: Value) -> bool | None:
    if value is None:
        return None
    if isinstance(value, TensorFacts):
        return value.present
    if isinstance(value, str):
        return True  # a buffer or an enum constant other than the zero one: not decided here
    return bool(value)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a predicate's rejections say about one supports-op line."""

    predicate: str
    rejected_by: tuple[Rejection, ...]  # rejections whose conditions all hold
    possible: tuple[Rejection, ...]  # rejections that cannot be decided from the line (op params, session, ...)


def judge(predicate: Predicate, record: SupportsOp) -> Verdict:
    evaluator = _Evaluator(tensor_facts(record))
    holds: list[Rejection] = []
    unknown: list[Rejection] = []
    for rejection in predicate.rejections:
        states = [_truth(evaluator.value(condition)) == wanted if _truth(evaluator.value(condition)) is not None
                  else None for condition, wanted in rejection.path]  # fmt: skip
        if any(state is False for state in states):
            continue
        (holds if all(states) else unknown).append(rejection)
    return Verdict(predicate.name, tuple(holds), tuple(unknown))


def foreign_buffers(record: SupportsOp) -> list[tuple[str, str]]:
    """(tensor name, buffer) of each operand in a buffer of no NPU session of this line's (`HTP0`, `HTP0-REPACK`)."""
    names = record.names.all()
    found = []
    for index, buffer in enumerate(record.buffers.all()):
        if buffer == "NONE" or buffer == record.session or buffer.startswith(record.session + "-"):
            continue
        found.append((names[index] if index < len(names) else "?", buffer))
    return found
