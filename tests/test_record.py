"""hexlint.record behaves as the frozen dataclasses it replaces: each test holds a record next to its dataclass twin."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from hexlint import record
from hexlint.core import Diagnostic, Severity, Span


@record.record
class Point:
    path: str
    line: int | None = None
    tags: tuple[str, ...] = record.field(default_factory=tuple)
    note: str = record.field(default="", compare=False, repr=False)


@dataclasses.dataclass(frozen=True)
class PointTwin:
    path: str
    line: int | None = None
    tags: tuple[str, ...] = dataclasses.field(default_factory=tuple)
    note: str = dataclasses.field(default="", compare=False, repr=False)


@record.record(frozen=False)
class Tally:
    name: str
    seen: list[int] = record.field(default_factory=list)


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [(("a.c",), {}), (("a.c", 3), {}), ((), {"path": "b.c", "tags": ("x",)}), (("a.c",), {"note": "n", "line": 1})],
)
def test_a_record_is_built_compared_hashed_and_shown_as_its_dataclass_twin(args: tuple, kwargs: dict) -> None:
    built, twin = Point(*args, **kwargs), PointTwin(*args, **kwargs)
    assert repr(built) == repr(twin).replace("PointTwin", "Point")
    assert [getattr(built, name) for name in ("path", "line", "tags", "note")] == [
        getattr(twin, name) for name in ("path", "line", "tags", "note")
    ]
    assert built == Point(*args, **kwargs) and hash(built) == hash(Point(*args, **kwargs))
    assert built != twin  # another class is never equal, as between two dataclasses


def test_fields_left_out_of_compare_do_not_change_equality_or_hash() -> None:
    assert Point("a.c", note="one") == Point("a.c", note="two")
    assert hash(Point("a.c", note="one")) == hash(Point("a.c", note="two"))
    assert Point("a.c", 1) != Point("a.c", 2)


def test_a_frozen_record_refuses_assignment_and_deletion() -> None:
    point = Point("a.c")
    with pytest.raises(record.FrozenInstanceError):
        point.line = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del point.path  # type: ignore[misc]
    assert point.line is None


@pytest.mark.parametrize("base", [Point, PointTwin], ids=["record", "dataclass"])
def test_a_plain_subclass_of_a_frozen_record_takes_new_attributes_but_keeps_its_fields(base: type) -> None:
    class Labelled(base):  # type: ignore[misc, valid-type]
        pass

    point = Labelled("a.c")
    point.label = "kept"
    assert point.label == "kept"
    del point.label
    assert not hasattr(point, "label")
    with pytest.raises(dataclasses.FrozenInstanceError if base is PointTwin else record.FrozenInstanceError):
        point.line = 2
    with pytest.raises(AttributeError):
        del point.path
    with pytest.raises(AttributeError):  # an instance of the record itself takes no new attribute either
        base("a.c").label = "refused"


def test_a_mutable_record_is_assignable_and_unhashable_and_its_factory_is_called_per_instance() -> None:
    first, second = Tally("x"), Tally("x")
    first.seen.append(1)
    assert second.seen == [] and first != second
    first.name = "y"
    assert first == Tally("y", [1])
    with pytest.raises(TypeError):
        hash(first)


def test_replace_copies_with_changes_and_rejects_unknown_fields() -> None:
    point = Point("a.c", 1, ("t",), "n")
    assert record.replace(point, line=2) == Point("a.c", 2, ("t",), "n")
    assert record.replace(point, line=2).note == "n"
    with pytest.raises(TypeError):
        record.replace(point, column=3)


def test_defaults_stay_class_attributes_and_fields_lists_them_in_order() -> None:
    assert [item.name for item in record.fields(Point)] == ["path", "line", "tags", "note"]
    assert Point.line is None and Point.note == ""
    assert not hasattr(Point, "tags")  # a factory leaves nothing behind, as field(default_factory=...) does
    assert Point.__match_args__ == ("path", "line", "tags", "note")


def test_init_signature_errors_are_the_usual_type_errors() -> None:
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point("a.c", 1, (), "n", "extra")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="non-default field 'line' follows"):

        @record.record
        class Broken:
            path: str = ""
            line: int


def test_methods_a_class_writes_itself_are_kept() -> None:
    @record.record
    class Named:
        name: str

        def __repr__(self) -> str:
            return f"<{self.name}>"

        def __hash__(self) -> int:
            return 7

    assert repr(Named("n")) == "<n>" and hash(Named("n")) == 7 and Named("n") == Named("n")


def test_a_slot_field_has_no_default() -> None:
    @record.record
    class Slotted:
        __slots__ = ("__dict__", "address")
        address: int
        size: int = 4

    value = Slotted(8)
    assert (value.address, value.size) == (8, 4)
    assert record.fields(Slotted)[0].default is record.MISSING


def test_records_copy_and_pickle_like_dataclasses() -> None:
    diagnostic = Diagnostic("HX104", "defensive-null-check", Severity.ERROR, "m", Span("a.c", 1, 2))
    assert pickle.loads(pickle.dumps(diagnostic)) == diagnostic
    assert copy.deepcopy(diagnostic) == diagnostic and copy.copy(diagnostic) == diagnostic


def fresh_class() -> type:
    @record.record
    class Fresh:
        path: str
        line: int = 0
        tags: tuple = record.field(default_factory=tuple)

    return Fresh


def compiled(cls: type) -> bool:
    return "path" in cls.__init__.__code__.co_varnames


def test_methods_are_interpreted_until_the_class_is_busy_then_compiled_with_the_same_results() -> None:
    cls = fresh_class()
    early = cls("a.c", 2)
    early_hash = hash(early)
    assert not compiled(cls)
    for _ in range(record.CALLS_BEFORE_COMPILING):
        late = cls("a.c", 2)
    assert compiled(cls)
    assert late == early and hash(late) == early_hash == hash(early)  # a set built before the switch still works
    assert late != cls("a.c", 3) and late.tags == ()


@pytest.mark.parametrize("busy", [False, True], ids=["interpreted", "compiled"])
def test_both_forms_build_compare_and_refuse_alike(busy: bool) -> None:
    cls = fresh_class()
    if busy:
        for _ in range(record.CALLS_BEFORE_COMPILING):
            cls("warm-up")
    assert compiled(cls) is busy
    assert vars(cls("a.c", tags=("t",))) == {"path": "a.c", "line": 0, "tags": ("t",)}
    assert list(vars(cls(line=1, path="b.c"))) == ["path", "line", "tags"]  # field order, whatever the call order
    assert cls("a.c").tags is not None and cls("a.c") == cls(path="a.c", line=0)
    assert cls("a.c").__eq__(object()) is NotImplemented
    for bad_call in (lambda: cls(), lambda: cls("a", 1, (), 4), lambda: cls("a", path="b"), lambda: cls("a", x=1)):
        with pytest.raises(TypeError):
            bad_call()


def test_an_eq_false_record_compares_and_hashes_by_identity() -> None:
    @record.record(eq=False)
    class Shared:
        data: bytes

    first = Shared(b"x")
    assert first == first and first != Shared(b"x") and hash(first) == object.__hash__(first)
    with pytest.raises(record.FrozenInstanceError):
        first.data = b"y"  # type: ignore[misc]


@pytest.mark.parametrize("busy", [False, True], ids=["interpreted", "compiled"])
def test_fields_named_like_the_generated_code_s_own_names_work(busy: bool) -> None:
    @record.record
    class Odd:
        self: int
        object: int = 2
        other: int = 3

    if busy:
        for _ in range(record.CALLS_BEFORE_COMPILING):
            Odd(0)
    odd = Odd(1, object=5)
    assert (odd.self, odd.object, odd.other) == (1, 5, 3) and odd == Odd(1, 5) and hash(odd) == hash(Odd(1, 5))
