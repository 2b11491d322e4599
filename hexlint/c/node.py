"""A thin, read-only wrapper over libclang cursors, so rules never touch clang.cindex."""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import clang.cindex as cindex

from hexlint.core import Span

_KIND_NAMES: dict[int, str] = {}


def kind_name(kind_id: int) -> str:
    name = _KIND_NAMES.get(kind_id)
    if name is None:
        try:
            name = cindex.CursorKind.from_id(kind_id).name
        except ValueError:
            name = f"UNKNOWN_{kind_id}"
        _KIND_NAMES[kind_id] = name
    return name


def _text(read) -> str:
    try:
        return read() or ""
    except UnicodeDecodeError:
        return ""


class Node:
    """One AST node. Attributes are computed on first use: most nodes are never looked at closely."""

    __slots__ = ("_cursor", "_end", "_kind", "_location", "_offsets")

    def __init__(self, cursor: cindex.Cursor, kind: str | None = None) -> None:
        self._cursor = cursor
        self._kind = kind
        self._location: tuple[str, int, int] | None = None
        self._end: tuple[int, int] | None = None
        self._offsets: tuple[int, int] | None = None

    def __eq__(self, other: object) -> bool:
        # clang_equalCursors tells apart copies of one node reached along different walks; hash + extent does not.
        return isinstance(other, Node) and self._identity() == other._identity()

    def _identity(self) -> tuple[int, int, int, int]:
        extent = self._cursor.extent
        return (self._cursor.hash, self._cursor._kind_id, extent.start.offset, extent.end.offset)

    def __hash__(self) -> int:
        return self._cursor.hash

    def __repr__(self) -> str:
        return f"Node({self.kind} {self.spelling!r} {self.path}:{self.line}:{self.column})"

    @property
    def kind(self) -> str:
        if self._kind is None:
            self._kind = kind_name(cindex.conf.lib.clang_getCursorKind(self._cursor))
        return self._kind

    @property
    def spelling(self) -> str:
        try:
            return self._cursor.spelling or ""
        except UnicodeDecodeError:
            return ""

    @property
    def member_name(self) -> str:
        """The member a MEMBER_REF_EXPR names. Inside a template, where the base's type is dependent (`t->buffer`
        with `t` of a template parameter's type), libclang leaves the spelling empty: the name is the last token."""
        spelling = self.spelling
        if spelling or self.kind != "MEMBER_REF_EXPR":
            return spelling
        tokens = self.tokens()
        if len(tokens) >= 2 and tokens[-2] in ("->", ".") and tokens[-1].isidentifier():
            return tokens[-1]
        return ""

    @property
    def callee_name(self) -> str:
        """The name a CALL_EXPR calls. A call a template leaves unresolved (`f(t->buffer)` with `t` dependent) has an
        empty spelling over a reference to the overloaded name: the name is that reference's."""
        spelling = self.spelling
        if spelling or self.kind != "CALL_EXPR":
            return spelling
        children = self.children()
        callee = children[0].unwrapped() if children else None
        while callee is not None and callee.kind in ("DECL_REF_EXPR", "OVERLOADED_DECL_REF"):
            if callee.spelling:
                return callee.spelling
            inner = callee.children()
            callee = inner[0] if inner else None
        return ""

    @property
    def type_spelling(self) -> str:
        return _text(lambda: self._cursor.type.spelling)

    def _load_location(self) -> tuple[str, int, int]:
        if self._location is None:
            self._location = expansion_location(self._cursor)
        return self._location

    @property
    def path(self) -> str:
        return self._load_location()[0]

    @property
    def line(self) -> int:
        return self._load_location()[1]

    @property
    def column(self) -> int:
        return self._load_location()[2]

    def _load_end(self) -> tuple[int, int]:
        if self._end is None:
            end = self._cursor.extent.end
            self._end = (end.line, end.column)
        return self._end

    @property
    def end_line(self) -> int:
        return self._load_end()[0]

    @property
    def end_column(self) -> int:
        return self._load_end()[1]

    def _load_offsets(self) -> tuple[int, int]:
        if self._offsets is None:
            extent = self._cursor.extent
            self._offsets = (extent.start.offset, extent.end.offset)
        return self._offsets

    @property
    def start_offset(self) -> int:
        return self._load_offsets()[0]

    @property
    def end_offset(self) -> int:
        return self._load_offsets()[1]

    def span(self) -> Span:
        return Span(self.path, self.line, self.column, self.end_line, self.end_column)

    def children(self) -> list[Node]:
        return [Node(child) for child in self._cursor.get_children()]

    def walk(self) -> Iterator[Node]:
        """This node and all below it, depth first, in source order."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children()))

    @property
    def referenced(self) -> Node | None:
        target = self._cursor.referenced
        return Node(target) if target is not None and not target.kind.is_invalid() else None

    @property
    def type_declaration(self) -> Node | None:
        """The declaration of this node's type, looking through pointers and typedefs (e.g. the struct of `kparams`)."""
        clang_type = self._cursor.type.get_canonical()
        while clang_type.kind == cindex.TypeKind.POINTER:
            clang_type = clang_type.get_pointee().get_canonical()
        declaration = clang_type.get_declaration()
        return None if declaration.kind.is_invalid() else Node(declaration)

    @property
    def is_definition(self) -> bool:
        return self._cursor.is_definition()

    @property
    def is_static(self) -> bool:
        """A declaration with internal linkage (`static`): every use of it is in its translation unit."""
        return self._cursor.linkage == cindex.LinkageKind.INTERNAL

    def arguments(self) -> list[Node]:
        """The argument expressions of a CALL_EXPR, in order (empty for other nodes)."""
        return [Node(argument) for argument in self._cursor.get_arguments()] if self.kind == "CALL_EXPR" else []

    @property
    def binary_operator(self) -> str:
        """The operator of a BINARY_OPERATOR / COMPOUND_ASSIGNMENT_OPERATOR node ("=", "/", "+=", ...), else ""."""
        if self.kind not in ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR"):
            return ""
        try:
            # The raw enum value and a table: the enum wrapper costs more than the call on hot paths.
            spelling = _binary_spelling_by_value().get(cindex.conf.lib.clang_getCursorBinaryOperatorKind(self._cursor))
        except (AttributeError, ValueError):
            spelling = None
        return spelling if spelling is not None else self._operator_from_tokens()

    def _operator_from_tokens(self) -> str:
        children = self.children()
        if len(children) != 2:
            return ""
        left_end = children[0].end_offset
        for token in self._cursor.get_tokens():
            if token.extent.start.offset >= left_end and token.kind == cindex.TokenKind.PUNCTUATION:
                return token.spelling
        return ""

    @property
    def unary_operator(self) -> str:
        """The operator of a UNARY_OPERATOR node ("!", "&", "*", "-", "++" ...)."""
        if self.kind != "UNARY_OPERATOR":
            return ""
        return _UNARY_SPELLING.get(_unary_operator_kind()(self._cursor), "")

    @property
    def unary_operator_is_dereference(self) -> bool:
        """A `*p` load."""
        return self.unary_operator == "*"

    def tokens(self) -> list[str]:
        return [_text(lambda t=token: t.spelling) for token in self._cursor.get_tokens()]

    @property
    def text(self) -> str:
        """The source text of this node's extent, rebuilt from tokens (macro-expanded nodes give their macro call)."""
        return " ".join(self.tokens())

    @property
    def constant_value(self) -> int | float | None:
        """The value clang folds this expression to (literals, enum constants, sizeof, const-initialised ints ...)."""
        return _evaluate(self._cursor)

    @property
    def type_kind(self) -> str:
        """The TypeKind name of the canonical type ("INT", "FLOAT", "POINTER", "RECORD" ...)."""
        try:
            return self._cursor.type.get_canonical().kind.name
        except ValueError:
            return "UNEXPOSED"

    @property
    def is_floating_type(self) -> bool:
        return self.type_kind in _FLOATING_TYPE_KINDS

    def unwrapped(self) -> Node:
        """This expression without the implicit casts, parentheses and C-style casts around it."""
        node = self
        while node.kind in _WRAPPER_KINDS:
            children = node.children()
            if not children:
                break
            node = children[-1]
        return node

    @property
    def spelling_start(self) -> SpellingPlace:
        """Where the node's first token is written: inside a #define for code a macro body produced."""
        return _spelling_place(self._cursor.extent.start)

    @property
    def is_macro_expansion(self) -> bool:
        """True when the node's first token comes from a macro expansion (spelling and expansion locations differ)."""
        return _spelling_differs(self._cursor)

    @property
    def raw(self) -> cindex.Cursor:
        """Escape hatch for hexlint/c only."""
        return self._cursor


class _Location(ctypes.Structure):
    _fields_ = [("ptr_data", ctypes.c_void_p * 2), ("int_data", ctypes.c_uint)]


_location_functions: tuple | None = None


def _location_calls() -> tuple:
    """Private prototypes of three libclang calls, so file names come from a per-TU cache keyed by CXFile."""
    global _location_functions
    if _location_functions is None:
        lib = cindex.conf.lib
        get_location = lib._FuncPtr(("clang_getCursorLocation", lib))
        get_location.argtypes = [cindex.Cursor]
        get_location.restype = _Location
        expansion = lib._FuncPtr(("clang_getExpansionLocation", lib))
        expansion.argtypes = [_Location, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_uint)]
        expansion.argtypes += [ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint)]
        expansion.restype = None
        file_name = lib._FuncPtr(("clang_getFileName", lib))
        file_name.argtypes = [ctypes.c_void_p]
        file_name.restype = cindex._CXString
        _location_functions = (get_location, expansion, file_name)
    return _location_functions


def file_name_cache(translation_unit: object) -> dict[int, str]:
    """CXFile handle -> name, kept on the TU object so it dies with the TU (handles are reused after a TU is freed)."""
    cache = getattr(translation_unit, "_hexlint_file_names", None)
    if cache is None:
        cache = {}
        translation_unit._hexlint_file_names = cache  # type: ignore[attr-defined]
    return cache


def expansion_location(cursor: cindex.Cursor) -> tuple[str, int, int]:
    """(file name, line, column) of a cursor's location, as cindex's `cursor.location` would give, only cheaper."""
    translation_unit = getattr(cursor, "_tu", None)
    if translation_unit is None:
        location = cursor.location
        return (_text(lambda: location.file.name) if location.file else "", location.line, location.column)
    get_location, expansion, file_name = _location_calls()
    handle, line, column = ctypes.c_void_p(), ctypes.c_uint(), ctypes.c_uint()
    expansion(get_location(cursor), ctypes.byref(handle), ctypes.byref(line), ctypes.byref(column), None)
    return (_file_name(translation_unit, handle.value, file_name), line.value, column.value)


def file_of(translation_unit: object, cursor: cindex.Cursor) -> str:
    """Just the file name of a cursor's location (the index walk asks this of every top-level declaration)."""
    get_location, expansion, file_name = _location_calls()
    handle = ctypes.c_void_p()
    expansion(get_location(cursor), ctypes.byref(handle), None, None, None)
    return _file_name(translation_unit, handle.value, file_name)


def _file_name(translation_unit: object, handle: int | None, file_name: object) -> str:
    if not handle:
        return ""
    cache = file_name_cache(translation_unit)
    name = cache.get(handle)
    if name is None:
        try:
            name = cindex._CXString.from_result(file_name(handle))  # type: ignore[operator]
        except UnicodeDecodeError:
            name = ""
        cache[handle] = name
    return name


_FLOATING_TYPE_KINDS = frozenset({"HALF", "FLOAT16", "FLOAT", "DOUBLE", "LONGDOUBLE", "BFLOAT16"})
_WRAPPER_KINDS = frozenset({"UNEXPOSED_EXPR", "PAREN_EXPR", "CSTYLE_CAST_EXPR"})
_EVAL_INT = 1
_EVAL_FLOAT = 2
_evaluation_ready = False


def _prepare_evaluation() -> None:
    # clang.cindex does not declare the clang_EvalResult_* functions; declare them once on the loaded library.
    global _evaluation_ready
    lib = cindex.conf.lib
    lib.clang_Cursor_Evaluate.argtypes = [cindex.Cursor]
    lib.clang_Cursor_Evaluate.restype = ctypes.c_void_p
    lib.clang_EvalResult_getKind.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getKind.restype = ctypes.c_int
    lib.clang_EvalResult_getAsLongLong.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getAsLongLong.restype = ctypes.c_longlong
    lib.clang_EvalResult_getAsDouble.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getAsDouble.restype = ctypes.c_double
    lib.clang_EvalResult_dispose.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_dispose.restype = None
    _evaluation_ready = True


def _evaluate(cursor: cindex.Cursor) -> int | float | None:
    if not _evaluation_ready:
        _prepare_evaluation()
    lib = cindex.conf.lib
    result = lib.clang_Cursor_Evaluate(cursor)
    if not result:
        return None
    try:
        kind = lib.clang_EvalResult_getKind(result)
        if kind == _EVAL_INT:
            return int(lib.clang_EvalResult_getAsLongLong(result))
        if kind == _EVAL_FLOAT:
            return float(lib.clang_EvalResult_getAsDouble(result))
        return None
    finally:
        lib.clang_EvalResult_dispose(result)


@dataclass(frozen=True)
class SpellingPlace:
    path: str
    line: int
    column: int
    offset: int


def _spelling_place(location: cindex.SourceLocation) -> SpellingPlace:
    file_object = cindex.c_object_p()
    line, column, offset = cindex.c_uint(), cindex.c_uint(), cindex.c_uint()
    cindex.conf.lib.clang_getSpellingLocation(
        location, cindex.byref(file_object), cindex.byref(line), cindex.byref(column), cindex.byref(offset)
    )
    path = _text(lambda: cindex.File(file_object).name) if file_object else ""
    return SpellingPlace(path, line.value, column.value, offset.value)


def _spelling_differs(cursor: cindex.Cursor) -> bool:
    file_object = cindex.c_object_p()
    line, column, offset = cindex.c_uint(), cindex.c_uint(), cindex.c_uint()
    cindex.conf.lib.clang_getSpellingLocation(
        cursor.extent.start, cindex.byref(file_object), cindex.byref(line), cindex.byref(column), cindex.byref(offset)
    )
    return offset.value != cursor.extent.start.offset


_BINARY_SPELLING = {
    "PtrMemD": ".*",
    "PtrMemI": "->*",
    "Mul": "*",
    "Div": "/",
    "Rem": "%",
    "Add": "+",
    "Sub": "-",
    "Shl": "<<",
    "Shr": ">>",
    "Cmp": "<=>",
    "LT": "<",
    "GT": ">",
    "LE": "<=",
    "GE": ">=",
    "EQ": "==",
    "NE": "!=",
    "And": "&",
    "Xor": "^",
    "Or": "|",
    "LAnd": "&&",
    "LOr": "||",
    "Assign": "=",
    "MulAssign": "*=",
    "DivAssign": "/=",
    "RemAssign": "%=",
    "AddAssign": "+=",
    "SubAssign": "-=",
    "ShlAssign": "<<=",
    "ShrAssign": ">>=",
    "AndAssign": "&=",
    "XorAssign": "^=",
    "OrAssign": "|=",
    "Comma": ",",
}

# CXUnaryOperatorKind values (libclang 17+).
_UNARY_SPELLING = {1: "++", 2: "--", 3: "++", 4: "--", 5: "&", 6: "*", 7: "+", 8: "-", 9: "~", 10: "!"}
_unary_function: object | None = None


def _unary_operator_kind() -> Any:
    global _unary_function
    if _unary_function is None:
        lib = cindex.conf.lib
        function = lib._FuncPtr(("clang_getCursorUnaryOperatorKind", lib))
        function.argtypes = [cindex.Cursor]
        function.restype = ctypes.c_int
        _unary_function = function
    return _unary_function


_BINARY_SPELLING_BY_VALUE: dict[int, str] = {}


def _binary_spelling_by_value() -> dict[int, str]:
    if not _BINARY_SPELLING_BY_VALUE:
        for name, spelling in _BINARY_SPELLING.items():
            operator = getattr(cindex.BinaryOperator, name, None)
            if operator is not None:
                _BINARY_SPELLING_BY_VALUE[operator.value] = spelling
    return _BINARY_SPELLING_BY_VALUE
