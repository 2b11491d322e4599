"""A thin, read-only wrapper over libclang cursors, so rules never touch clang.cindex."""

from __future__ import annotations

import ctypes
import weakref
from collections.abc import Callable, Iterator
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
    """One AST node. Attributes are computed on first use and kept: most nodes are never looked at closely.

    The index walk builds every node of the project's own code once, with its children (`UnitIndex`), so walks over
    a function body are plain Python; a node reached another way (`referenced`, `arguments()`) reads its children
    from libclang on first use and keeps them too. Children lists are shared: never mutate one.
    """

    __slots__ = (
        "__weakref__",
        "_children",
        "_cursor",
        "_end",
        "_hash",
        "_location",
        "_macro",
        "_offsets",
        "_operator",
        "_path",
        "_referenced",
        "_spelling",
        "_tu",
        "_type_kind",
        "_type_spelling",
        "kind",
        "top_index",
    )

    def __init__(
        self,
        cursor: cindex.Cursor,
        kind: str | None = None,
        path: str | None = None,
        children: list[Node] | None = None,
        top_index: int = -1,
        translation_unit: object = None,
    ) -> None:
        # The other slots stay unset until first asked for (an AttributeError the first time): the index walk makes
        # every node of the project, and each store here costs it.
        self._cursor = cursor
        # A plain attribute: rules ask every node they pass for its kind.
        self.kind = kind if kind is not None else kind_name(cindex.conf.lib.clang_getCursorKind(cursor))
        self._path = path  # the index walk knows it from the node's top-level declaration
        self._children = children
        # Which top-level declaration of its unit the node is in (its position in the index walk), -1 when the walk
        # did not build it: "is this node in that function" without locating either.
        self.top_index = top_index
        # Kept here, not on the cursor: an attribute on a ctypes object costs it a dict, for every node of the walk.
        # cindex's own methods read it from the cursor: `_bound()` puts it there for the few that need it.
        self._tu = translation_unit if translation_unit is not None else getattr(cursor, "_tu", None)

    def __eq__(self, other: object) -> bool:
        # clang_equalCursors tells apart copies of one node reached along different walks; hash + extent does not.
        if self is other:
            return True
        return isinstance(other, Node) and self._identity() == other._identity()

    def _identity(self) -> tuple[int, str, int, int]:
        start, end = self._load_offsets()
        return (hash(self), self.kind, start, end)

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:
            self._hash: int = cindex.conf.lib.clang_hashCursor(self._cursor)
            return self._hash

    def __repr__(self) -> str:
        return f"Node({self.kind} {self.spelling!r} {self.path}:{self.line}:{self.column})"

    @property
    def spelling(self) -> str:
        try:
            return self._spelling
        except AttributeError:
            self._spelling: str = cursor_spelling(self._cursor)
            return self._spelling

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
        try:
            return self._type_spelling
        except AttributeError:
            lib = cindex.conf.lib
            self._type_spelling: str = _text(
                lambda: cindex._CXString.from_result(lib.clang_getTypeSpelling(lib.clang_getCursorType(self._cursor)))
            )
            return self._type_spelling

    def _load_location(self) -> tuple[str, int, int]:
        try:
            return self._location
        except AttributeError:
            self._location: tuple[str, int, int] = expansion_location(self._cursor, self._tu)
            return self._location

    @property
    def path(self) -> str:
        if self._path is None:
            self._path = self._load_location()[0]
        return self._path

    @property
    def line(self) -> int:
        return self._load_location()[1]

    @property
    def column(self) -> int:
        return self._load_location()[2]

    def _load_end(self) -> tuple[int, int]:
        try:
            return self._end
        except AttributeError:
            self._end: tuple[int, int] = _extent_end(self._cursor)
            return self._end

    @property
    def end_line(self) -> int:
        return self._load_end()[0]

    @property
    def end_column(self) -> int:
        return self._load_end()[1]

    def _load_offsets(self) -> tuple[int, int]:
        try:
            return self._offsets
        except AttributeError:
            self._offsets: tuple[int, int] = _extent_offsets(self._cursor)
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
        if self._children is None:
            self._children = _children_of(self._cursor, self._tu)
        return self._children

    def walk(self) -> Iterator[Node]:
        """This node and all below it, depth first, in source order."""
        return iter(self.descendants(include_self=True))

    def descendants(self, include_self: bool = False) -> list[Node]:
        """The nodes below this one (and it, first, if asked), depth first, in source order, as one list: cheaper
        than a generator for the whole-body scans rules do."""
        found: list[Node] = [self] if include_self else []
        stack = list(reversed(self.children()))
        pop, push, append = stack.pop, stack.extend, found.append
        while stack:
            node = pop()
            append(node)
            children = node._children
            if children is None:
                children = node.children()
            if children:
                push(reversed(children))
        return found

    @property
    def referenced(self) -> Node | None:
        try:
            target = self._referenced()
        except AttributeError:
            target = None
        else:
            if target is not None or self._referenced is _none:
                return target
        # Not asked yet, or the target was a node of its own (a declaration the index walk did not build) that is
        # gone: looked up again, so what a node refers to never depends on which rule asked first.
        cursor = cindex.conf.lib.clang_getCursorReferenced(self._cursor)
        target = _node_for(cursor, self._tu)
        # Weakly: a node's target may be its own ancestor (a recursive call, a self-referential struct), and the
        # tree must stay free of cycles so that a finished run frees it without the cyclic collector.
        self._referenced: Callable[[], Node | None] = weakref.ref(target) if target is not None else _none
        return target

    @property
    def type_declaration(self) -> Node | None:
        """The declaration of this node's type, looking through pointers and typedefs (e.g. the struct of `kparams`)."""
        clang_type = self._bound().type.get_canonical()
        while clang_type.kind == cindex.TypeKind.POINTER:
            clang_type = clang_type.get_pointee().get_canonical()
        return _node_for(cindex.conf.lib.clang_getTypeDeclaration(clang_type), self._tu)

    @property
    def is_definition(self) -> bool:
        return self._cursor.is_definition()

    @property
    def is_static(self) -> bool:
        """A declaration with internal linkage (`static`): every use of it is in its translation unit."""
        return self._cursor.linkage == cindex.LinkageKind.INTERNAL

    def arguments(self) -> list[Node]:
        """The argument expressions of a CALL_EXPR, in order (empty for other nodes)."""
        if self.kind != "CALL_EXPR":
            return []
        return [Node(argument, translation_unit=self._tu) for argument in self._bound().get_arguments()]

    @property
    def binary_operator(self) -> str:
        """The operator of a BINARY_OPERATOR / COMPOUND_ASSIGNMENT_OPERATOR node ("=", "/", "+=", ...), else ""."""
        if self.kind not in ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR"):
            return ""
        try:
            return self._operator
        except AttributeError:
            pass
        try:
            # The raw enum value and a table: the enum wrapper costs more than the call on hot paths.
            spelling = _binary_spelling_by_value().get(cindex.conf.lib.clang_getCursorBinaryOperatorKind(self._cursor))
        except (AttributeError, ValueError):
            spelling = None
        self._operator: str = spelling if spelling is not None else self._operator_from_tokens()
        return self._operator

    def _operator_from_tokens(self) -> str:
        children = self.children()
        if len(children) != 2:
            return ""
        left_end = children[0].end_offset
        for token in self._bound().get_tokens():
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
        return [_text(lambda t=token: t.spelling) for token in self._bound().get_tokens()]

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
            return self._type_kind
        except AttributeError:
            lib = cindex.conf.lib
            kind_id = lib.clang_getCanonicalType(lib.clang_getCursorType(self._cursor))._kind_id
            self._type_kind: str = _type_kind_name(kind_id)
            return self._type_kind

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
        try:
            return self._macro
        except AttributeError:
            self._macro: bool = _spelling_differs(self._cursor)
            return self._macro

    @property
    def raw(self) -> cindex.Cursor:
        """Escape hatch for hexlint/c only."""
        return self._bound()

    def _bound(self) -> cindex.Cursor:
        """The cursor, carrying its TU for the cindex methods that read it (tokens, types, arguments)."""
        cursor = self._cursor
        if self._tu is not None:
            cursor._tu = self._tu
        return cursor


_NO_BYTES = bytes(8)


# CXCursor_FirstDecl..LastDecl and FirstExtraDecl..LastExtraDecl: what `referenced` leads to.
DECLARATION_KINDS = frozenset([*range(1, 40), *range(600, 700)])


def declaration_key(raw: bytes) -> bytes:
    """A declaration cursor's bytes as clang_equalCursors compares them: kind and data, without xdata and without the
    first-in-declaration-group flag (set when a walk reaches the declaration, never when a reference leads to it)."""
    return raw[:4] + raw[8:16] + _NO_BYTES + raw[24:]


class Declarations(dict):  # type: ignore[type-arg]
    """The declaration nodes the index walk built for one TU, by declaration_key: a reference leads back to them."""


# By id of the TU; weakly, as the index owns the map (a map kept on the TU object would close a cycle through the
# cursors' references to their TU).
_declarations: weakref.WeakValueDictionary[int, Declarations] = weakref.WeakValueDictionary()


def declarations_of(translation_unit: object) -> Declarations:
    """The TU's map, made empty on first use: whoever asks first (the index walk) must keep it."""
    found = _declarations.get(id(translation_unit))
    if found is None:
        found = _declarations[id(translation_unit)] = Declarations()
    return found


def _none() -> None:
    return None


def _node_for(cursor: cindex.Cursor, translation_unit: object) -> Node | None:
    """The node for a cursor libclang returned (a reference's target, a type's declaration): the index's own node
    when the walk built one, so what was learnt about it is kept; None for the null and invalid cursors."""
    kind_id = cursor._kind_id
    if kind_id == 0 or 70 <= kind_id <= 73:  # CXCursor_FirstInvalid..LastInvalid (the null cursor is one)
        return None
    if translation_unit is not None and kind_id in DECLARATION_KINDS:
        known = _declarations.get(id(translation_unit))
        node = known.get(declaration_key(bytes(cursor))) if known is not None else None
        if node is not None:
            return node
    return Node(cursor, kind_name(kind_id), translation_unit=translation_unit)


def _children_of(cursor: cindex.Cursor, translation_unit: object) -> list[Node]:
    children: list[Node] = []

    def visit(child: cindex.Cursor, _parent: cindex.Cursor, _data: object) -> int:
        children.append(Node(child, kind_name(child._kind_id), translation_unit=translation_unit))
        return 1  # CXChildVisit_Continue

    cindex.conf.lib.clang_visitChildren(cursor, cindex.cursor_visit_callback(visit), [])
    return children


class _String(ctypes.Structure):
    """CXString, without cindex's finaliser: disposed as soon as read."""

    _fields_ = [("data", ctypes.c_void_p), ("private_flags", ctypes.c_uint)]


_spelling_functions: tuple | None = None


def cursor_spelling(cursor: cindex.Cursor) -> str:
    """clang_getCursorSpelling as text ("" when not UTF-8), through private prototypes: cindex's string wrapper
    costs more than the three calls."""
    global _spelling_functions
    if _spelling_functions is None:
        lib = cindex.conf.lib
        spelling = lib._FuncPtr(("clang_getCursorSpelling", lib))
        spelling.argtypes = [cindex.Cursor]
        spelling.restype = _String
        text = lib._FuncPtr(("clang_getCString", lib))
        text.argtypes = [_String]
        text.restype = ctypes.c_char_p
        dispose = lib._FuncPtr(("clang_disposeString", lib))
        dispose.argtypes = [_String]
        dispose.restype = None
        _spelling_functions = (spelling, text, dispose)
    spelling, text, dispose = _spelling_functions
    value = spelling(cursor)
    try:
        raw = text(value)
    finally:
        dispose(value)
    if not raw:
        return ""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return ""


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


def expansion_location(cursor: cindex.Cursor, translation_unit: object) -> tuple[str, int, int]:
    """(file name, line, column) of a cursor's location, as cindex's `cursor.location` would give, only cheaper."""
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
    expansion_offset, spelling_offset = _offset_calls()
    start = cindex.conf.lib.clang_getRangeStart(cindex.conf.lib.clang_getCursorExtent(cursor))
    expanded, spelled = ctypes.c_uint(), ctypes.c_uint()
    expansion_offset(start, None, None, None, ctypes.byref(expanded))
    spelling_offset(start, None, None, None, ctypes.byref(spelled))
    return spelled.value != expanded.value


_offset_functions: tuple | None = None


def _offset_calls() -> tuple:
    """Private prototypes of the expansion and spelling location calls that take cindex's SourceLocation and NULL
    out-parameters: cindex's own `offset` builds a File object and three more integers for every question."""
    global _offset_functions
    if _offset_functions is None:
        lib = cindex.conf.lib
        functions = []
        for name in ("clang_getExpansionLocation", "clang_getSpellingLocation"):
            function = lib._FuncPtr((name, lib))
            function.argtypes = [cindex.SourceLocation, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
            function.argtypes += [ctypes.c_void_p]
            function.restype = None
            functions.append(function)
        _offset_functions = tuple(functions)
    return _offset_functions


def _extent_offsets(cursor: cindex.Cursor) -> tuple[int, int]:
    lib = cindex.conf.lib
    expansion_offset = _offset_calls()[0]
    extent = lib.clang_getCursorExtent(cursor)
    start, end = ctypes.c_uint(), ctypes.c_uint()
    expansion_offset(lib.clang_getRangeStart(extent), None, None, None, ctypes.byref(start))
    expansion_offset(lib.clang_getRangeEnd(extent), None, None, None, ctypes.byref(end))
    return (start.value, end.value)


def _extent_end(cursor: cindex.Cursor) -> tuple[int, int]:
    lib = cindex.conf.lib
    line, column = ctypes.c_uint(), ctypes.c_uint()
    end = lib.clang_getRangeEnd(lib.clang_getCursorExtent(cursor))
    _offset_calls()[0](end, None, ctypes.byref(line), ctypes.byref(column), None)
    return (line.value, column.value)


_TYPE_KIND_NAMES: dict[int, str] = {}


def _type_kind_name(kind_id: int) -> str:
    name = _TYPE_KIND_NAMES.get(kind_id)
    if name is None:
        try:
            name = cindex.TypeKind.from_id(kind_id).name
        except ValueError:
            name = "UNEXPOSED"
        _TYPE_KIND_NAMES[kind_id] = name
    return name


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
