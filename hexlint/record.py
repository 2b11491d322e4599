"""Records: the house's small data classes, made without importing dataclasses.

`dataclasses` imports `inspect` (and with it ast, dis and tokenize) and compiles five methods per class: about 7 ms
plus 0.3 ms a class, paid by every run and so by every pre-commit hook. A record is the part of a dataclass hexlint
uses: __init__ with defaults and default factories, repr, eq, hash, immutability (frozen, the default), replace()
and fields(). __init__, __eq__ and __hash__ start as loops over the fields and are compiled (one exec per class)
once a class is busy; __repr__ is a closure.
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
def record(cls: type[_T] | None = None, /, *, frozen: bool = True, eq: bool = True) -> Any:
    """Make `cls` a record: its annotated class attributes are its fields, in order (like @dataclass(frozen=True)).
    With eq=False two records are equal only when they are the same object (a big, shared one)."""
    if cls is None:
        return lambda undecorated: _make_record(undecorated, frozen, eq)
    return _make_record(cls, frozen, eq)


def _make_record(cls: type[_T], frozen: bool, eq: bool) -> type[_T]:
    own = _own_fields(cls)
    inherited = [item for base in reversed(cls.__mro__[1:]) for item in getattr(base, "__record_fields__", ())]
    by_name = {item.name: item for item in (*inherited, *own)}
    all_fields = tuple(by_name.values())
    cls.__record_fields__ = all_fields
    cls.__match_args__ = tuple(by_name)
    compared = [item.name for item in all_fields if item.compare]
    _check_default_order(cls, all_fields)
    _set_if_absent(cls, "__repr__", _repr_method(tuple(item.name for item in all_fields if item.repr)))
    # eq makes a mutable record unhashable (as a dataclass); a frozen one hashes its compared fields.
    compiled = [name for name in ("__init__", "__eq__", "__hash__") if name not in cls.__dict__]
    if not eq:  # object's identity eq and hash, as @dataclass(eq=False)
        compiled = [name for name in compiled if name == "__init__"]
    elif not frozen and "__hash__" in compiled:
        compiled.remove("__hash__")
        cls.__hash__ = None

    def install() -> dict[str, Any]:
        methods = _compile_methods(all_fields, compared, frozen)
        for name in compiled:
            _set_method(cls, name, methods[name])
        return methods

    # Interpreted first, compiled once the class is busy: a lint run builds most of its records a few times, and
    # compiling them (~150 us each) cost more than all those calls; the decoder builds some a million times.
    interpreted = _interpreted_methods(cls.__qualname__, all_fields, compared, frozen)
    calls_left = [CALLS_BEFORE_COMPILING]
    for name in compiled:
        _set_method(cls, name, _interpret_then_compile(interpreted[name], install, calls_left, name))
    if frozen:
        cls.__setattr__, cls.__delattr__ = _frozen_attribute_methods(cls, {item.name for item in all_fields})
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
        _set_method(cls, name, method)


def _set_method(cls: type, name: str, method: Any) -> None:
    method.__qualname__ = f"{cls.__qualname__}.{name}"
    setattr(cls, name, method)


CALLS_BEFORE_COMPILING = 64


def _interpret_then_compile(
    interpreted: Callable[..., Any], install: Callable[[], dict[str, Any]], calls_left: list[int], name: str
) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls_left[0] -= 1
        if calls_left[0] <= 0:  # threads racing past zero compile twice, harmlessly
            return install()[name](self, *args, **kwargs)
        return interpreted(self, *args, **kwargs)

    return method


def _interpreted_methods(
    qualname: str, all_fields: tuple[Field, ...], compared: list[str], frozen: bool
) -> dict[str, Callable[..., Any]]:
    """__init__, __eq__ and __hash__ as loops over the fields: what _compile_methods compiles, same results."""
    names = tuple(item.name for item in all_fields)
    set_field = object.__setattr__ if frozen else setattr

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(names):
            raise TypeError(
                f"{qualname}.__init__() takes {len(names) + 1} positional arguments but {len(args) + 1} were given"
            )
        values = dict(zip(names, args, strict=False))  # fewer arguments than fields: the rest by keyword or default
        for name, value in kwargs.items():
            if name not in names:
                raise TypeError(f"{qualname}.__init__() got an unexpected keyword argument {name!r}")
            if name in values:
                raise TypeError(f"{qualname}.__init__() got multiple values for argument {name!r}")
            values[name] = value
        for item in all_fields:  # in field order, as the compiled __init__ sets them
            if item.name in values:
                value = values[item.name]
            elif item.default_factory is not MISSING:
                value = item.default_factory()
            elif item.default is not MISSING:
                value = item.default
            else:
                raise TypeError(f"{qualname}.__init__() missing required argument: {item.name!r}")
            set_field(self, item.name, value)

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is self.__class__:
            return tuple(getattr(self, name) for name in compared) == tuple(getattr(other, name) for name in compared)
        return NotImplemented

    def __hash__(self: Any) -> int:
        # The very tuple the compiled __hash__ hashes: a record hashed before the switch keeps its hash after it.
        return hash(tuple(getattr(self, name) for name in compared))

    return {"__init__": __init__, "__eq__": __eq__, "__hash__": __hash__}


def _check_default_order(cls: type, all_fields: tuple[Field, ...]) -> None:
    """The TypeError @dataclass raises when the class is made, not when it is first built."""
    seen_default = False
    for item in all_fields:
        if item.default is not MISSING or item.default_factory is not MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"{cls.__qualname__}: non-default field {item.name!r} follows a field with a default")


def _compile_methods(all_fields: tuple[Field, ...], compared: list[str], frozen: bool) -> dict[str, Any]:
    """__init__, __eq__ and __hash__ compiled in one go: eq and hash are hot in the decoder's caches."""
    # The generated code's own names are dunders, so no field name (`self`, `object`, `other`) can shadow them.
    parameters, body = [], []
    namespace: dict[str, Any] = {"__record_missing__": MISSING, "__record_set__": object.__setattr__}
    for index, item in enumerate(all_fields):
        name = item.name
        if item.default_factory is not MISSING:
            namespace[f"__record_factory_{index}__"] = item.default_factory
            parameters.append(f"{name}=__record_missing__")
            value = f"__record_factory_{index}__() if {name} is __record_missing__ else {name}"
        elif item.default is not MISSING:
            namespace[f"__record_default_{index}__"] = item.default
            parameters.append(f"{name}=__record_default_{index}__")
            value = name
        else:
            parameters.append(name)
            value = name
        # A frozen record refuses __setattr__; object's keeps the values inline, where attribute reads are fastest.
        body.append(
            f"    __record_set__(__record_self__, {name!r}, {value})"
            if frozen
            else f"    __record_self__.{name} = {value}"
        )
    mine = "".join(f"__record_self__.{name}, " for name in compared)
    theirs = "".join(f"__record_other__.{name}, " for name in compared)
    source = "\n".join(
        [
            f"def __init__({', '.join(['__record_self__', *parameters])}):",
            *(body or ["    pass"]),
            "def __eq__(__record_self__, __record_other__):",
            "    if __record_other__.__class__ is __record_self__.__class__:",
            f"        return ({mine}) == ({theirs})",
            "    return NotImplemented",
            "def __hash__(__record_self__):",
            f"    return hash(({mine}))",
        ]
    )
    exec(source, namespace)  # the text is built from the class's own field names, nothing from outside
    return namespace


def _repr_method(shown: tuple[str, ...]) -> Any:
    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{type(self).__qualname__}({inner})"

    return __repr__


def _frozen_attribute_methods(cls: type, names: set[str]) -> tuple[Callable[..., None], Callable[..., None]]:
    """__setattr__ and __delattr__ of a frozen record, as a frozen dataclass's: an instance of the record refuses
    both, an instance of a subclass that is no record only for the fields."""

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __setattr__, __delattr__
