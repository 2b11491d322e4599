"""Records: the house's small data classes, made without importing dataclasses.

`dataclasses` imports `inspect` (and with it ast, dis and tokenize) and compiles five methods per class: about 7 ms
plus 0.3 ms a class, paid by every run and so by every pre-commit hook. A record is the part of a dataclass hexlint
uses: __init__ with defaults and default factories, repr, eq, hash, immutability (frozen, the default), replace()
and fields(). __init__, __eq__ and __hash__ are compiled in one exec per class, __repr__ is a shared closure.
"""

from __future__ import annotations

# typing.TYPE_CHECKING without importing typing at start-up (see hexlint.core).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar, dataclass_transform

    _T = TypeVar("_T")
else:

    def dataclass_transform(**_kwargs):
        return lambda decorator: decorator


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class FrozenInstanceError(AttributeError):
    """Assignment to, or deletion of, a field of a frozen record."""


class Field:
    """One field of a record: its name, default or default factory, and whether repr and eq/hash see it."""

    __slots__ = ("compare", "default", "default_factory", "name", "repr")

    def __init__(self, default: Any, default_factory: Any, repr: bool, compare: bool) -> None:
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.repr = repr
        self.compare = compare

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, default={self.default!r}, default_factory={self.default_factory!r})"


def field(
    *,
    default: Any = MISSING,
    default_factory: Callable[[], Any] | Any = MISSING,
    repr: bool = True,
    compare: bool = True,
) -> Any:
    """A field with a default factory (for mutable defaults), or left out of repr or of eq/hash."""
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return Field(default, default_factory, repr, compare)


def fields(record_or_class: Any) -> tuple[Field, ...]:
    return record_or_class.__record_fields__


def replace(record_value: _T, /, **changes: Any) -> _T:
    """A copy of a record with some fields changed (dataclasses.replace)."""
    values = {item.name: getattr(record_value, item.name) for item in record_value.__record_fields__}
    values.update(changes)
    return type(record_value)(**values)


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(cls: type[_T] | None = None, /, *, frozen: bool = True) -> Any:
    """Make `cls` a record: its annotated class attributes are its fields, in order (like @dataclass(frozen=True))."""
    if cls is None:
        return lambda undecorated: _make_record(undecorated, frozen)
    return _make_record(cls, frozen)


def _make_record(cls: type[_T], frozen: bool) -> type[_T]:
    own = _own_fields(cls)
    inherited = [item for base in reversed(cls.__mro__[1:]) for item in getattr(base, "__record_fields__", ())]
    by_name = {item.name: item for item in (*inherited, *own)}
    all_fields = tuple(by_name.values())
    cls.__record_fields__ = all_fields
    cls.__match_args__ = tuple(by_name)
    compared = [item.name for item in all_fields if item.compare]
    methods = _compile_methods(cls, all_fields, compared, frozen)
    _set_if_absent(cls, "__init__", methods["__init__"])
    _set_if_absent(cls, "__repr__", _repr_method(tuple(item.name for item in all_fields if item.repr)))
    _set_if_absent(cls, "__eq__", methods["__eq__"])
    if "__hash__" not in cls.__dict__:
        # As a dataclass: eq makes a mutable record unhashable; a frozen one hashes its compared fields.
        cls.__hash__ = methods["__hash__"] if frozen else None
    if frozen:
        cls.__setattr__ = _refuse_setattr
        cls.__delattr__ = _refuse_delattr
    return cls


def _own_fields(cls: type) -> list[Field]:
    own = []
    # Not inspect.get_annotations: importing inspect is the cost records exist to avoid.
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063
        if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
            continue
        value = cls.__dict__.get(name, MISSING)
        if isinstance(value, _SLOT):  # a field kept in a __slots__ slot: the descriptor is not a default
            value = MISSING
        item = value if isinstance(value, Field) else Field(value, MISSING, True, True)
        item.name = name
        # As a dataclass: a default stays a plain class attribute, a field() without one leaves none behind.
        if item.default is MISSING:
            if isinstance(cls.__dict__.get(name), Field):
                delattr(cls, name)
        else:
            setattr(cls, name, item.default)
        own.append(item)
    return own


_SLOT = type(Field.__dict__["name"])  # types.MemberDescriptorType without importing types


def _set_if_absent(cls: type, name: str, method: Any) -> None:
    if name not in cls.__dict__:
        method.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, method)


def _compile_methods(cls: type, all_fields: tuple[Field, ...], compared: list[str], frozen: bool) -> dict[str, Any]:
    """__init__, __eq__ and __hash__ compiled in one go: eq and hash are hot in the decoder's caches."""
    parameters, body, namespace = [], [], {"MISSING": MISSING}
    seen_default = False
    for index, item in enumerate(all_fields):
        name = item.name
        if item.default_factory is not MISSING:
            namespace[f"factory_{index}"] = item.default_factory
            parameters.append(f"{name}=MISSING")
            value = f"factory_{index}() if {name} is MISSING else {name}"
            seen_default = True
        elif item.default is not MISSING:
            namespace[f"default_{index}"] = item.default
            parameters.append(f"{name}=default_{index}")
            value = name
            seen_default = True
        elif seen_default:
            raise TypeError(f"{cls.__qualname__}: non-default field {name!r} follows a field with a default")
        else:
            parameters.append(name)
            value = name
        # A frozen record refuses __setattr__; object's keeps the values inline, where attribute reads are fastest.
        body.append(f"    set_field(self, {name!r}, {value})" if frozen else f"    self.{name} = {value}")
    prologue = ["    set_field = object.__setattr__"] if frozen and all_fields else ["    pass"]
    mine = "".join(f"self.{name}, " for name in compared)
    theirs = "".join(f"other.{name}, " for name in compared)
    source = "\n".join(
        [
            f"def __init__({', '.join(['self', *parameters])}):",
            *prologue,
            *body,
            "def __eq__(self, other):",
            "    if other.__class__ is self.__class__:",
            f"        return ({mine}) == ({theirs})",
            "    return NotImplemented",
            "def __hash__(self):",
            f"    return hash(({mine}))",
        ]
    )
    exec(source, namespace)
    return namespace


def _repr_method(shown: tuple[str, ...]) -> Any:
    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{type(self).__qualname__}({inner})"

    return __repr__


def _refuse_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _refuse_delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")
