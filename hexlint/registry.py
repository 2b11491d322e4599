"""Rules = documents in rules/ (identity, docs, codebase names) joined with check functions in hexlint/checks/."""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from hexlint.checks import CHECKS
from hexlint.core import Diagnostic, Rule, RuleDoc, Severity, Span

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# A rule document is read in three parts: its identity (the keys before the first table) when the rules are loaded,
# its [options] when a run first asks for them, its [docs] texts when they are shown. A lint run reads the identities
# and the options of the rules it runs, written in a subset of TOML read without tomllib (whose import alone cost
# more than reading every document); anything outside that subset is left to tomllib.
_DOCS_TABLE = re.compile(r"^\[docs\][ \t]*(?:#[^\n]*)?$", re.MULTILINE)
# A table header after `[docs]` that belongs to another table: the split would lose it, so such a document is
# parsed whole (a false alarm, e.g. a docs line that starts with `[`, only costs that parse).
_OTHER_TABLE = re.compile(r"^[ \t]*\[(?!docs[\].])", re.MULTILINE)
_FIRST_TABLE = re.compile(r"^[ \t]*\[", re.MULTILINE)
_BARE_KEY = r"[A-Za-z0-9_-]+"
_SIMPLE_HEADER = re.compile(rf"\[[ \t]*({_BARE_KEY}(?:\.{_BARE_KEY})*)[ \t]*\][ \t]*(?:#.*)?")
_SIMPLE_KEY = re.compile(rf"({_BARE_KEY}|\"[^\"\\\x00-\x1f\x7f]*\")[ \t]*=[ \t]*")
# Outside strings nothing but tabs may be a control character; strings with escapes go to tomllib.
_UNSUPPORTED_TEXT = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_AFTER_VALUE = re.compile(r"[ \t]*(?:#.*)?")
# One scalar or the `[` of an array; the float spelling is JSON's, a subset of TOML's that reads alike in both.
_SIMPLE_SCALAR = re.compile(
    r'[ \t]*(?:("[^"\\]*")|(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)(?![0-9A-Za-z_.:+-])'
    r"|(true|false)(?![0-9A-Za-z_-])|(\[))"
)
_ARRAY_END = re.compile(r"[ \t]*\]")
_ARRAY_SEPARATOR = re.compile(r"[ \t]*([,\]])")


def _toml(text: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib.loads(text)


def rule_documents_dir() -> str:
    """rules/ ships inside the wheel as hexlint/_rules; a source checkout has it at the top level."""
    package = os.path.dirname(os.path.abspath(__file__))
    packaged = os.path.join(package, "_rules")
    return packaged if os.path.isdir(packaged) else os.path.join(os.path.dirname(package), "rules")


class RegistryError(Exception):
    pass


@dataclass(frozen=True)
class LazyCheck:
    """A rule's check, looked up in CHECKS when called: listing or documenting rules imports no rule module."""

    code: str

    def __call__(self, *arguments: Any, **keywords: Any) -> Iterator[Diagnostic]:
        return CHECKS[self.code](*arguments, **keywords)


def _simple_value(line: str, position: int) -> tuple[Any, int]:
    """The value at `position`: a string without escapes, an integer, a float, true/false or a one-line array of
    them (a trailing comma allowed, as TOML does); raises ValueError for anything else."""
    scalar = _SIMPLE_SCALAR.match(line, position)
    if scalar is None:
        raise ValueError(line[position:])
    string, number, boolean, opening = scalar.groups()
    if string is not None:
        return string[1:-1], scalar.end()
    if number is not None:
        is_float = any(mark in number for mark in ".eE")
        return (float(number) if is_float else int(number)), scalar.end()
    if boolean is not None:
        return boolean == "true", scalar.end()
    assert opening is not None
    items: list[Any] = []
    position = scalar.end()
    while True:
        closing = _ARRAY_END.match(line, position)
        if closing is not None:
            return items, closing.end()
        item, position = _simple_value(line, position)
        items.append(item)
        separator = _ARRAY_SEPARATOR.match(line, position)
        if separator is None:
            raise ValueError(line[position:])
        position = separator.end()
        if separator.group(1) == "]":
            return items, position  # else a comma: the next item, or the `]` after a trailing comma


def parse_simple_toml(text: str) -> dict[str, Any] | None:
    """The TOML the rule documents' identities and options are written in, or None for anything else.

    The subset: comments, `[table.sub]` headers of bare keys (each table once), and one-line `key = value` with a
    bare or "quoted" key and a value that is a string without escapes, an integer or float in JSON's spelling (TOML
    reads those alike), true/false, or a one-line array of them. None means "use tomllib": it never guesses.
    """
    if _UNSUPPORTED_TEXT.search(text):
        return None  # control characters (a CR too): tomllib decides what they mean
    document: dict[str, Any] = {}
    table = document
    defined: set[tuple[str, ...]] = set()
    for line in text.split("\n"):
        stripped = line.strip(" \t")
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("["):
            header = _SIMPLE_HEADER.fullmatch(stripped)
            if header is None:
                return None
            names = tuple(header.group(1).split("."))
            if names in defined:
                return None  # a table defined twice is an error tomllib names
            table = document
            for name in names:
                table = table.setdefault(name, {})
                if not isinstance(table, dict):
                    return None  # a key and a table of one name: tomllib's error too
            defined.add(names)
            continue
        key_match = _SIMPLE_KEY.match(stripped)
        if key_match is None:
            return None
        key = key_match.group(1).strip('"')
        try:
            value, end = _simple_value(stripped, key_match.end())
        except (ValueError, RecursionError):
            return None
        if key in table or not _AFTER_VALUE.fullmatch(stripped, end):
            return None
        table[key] = value
    return document


def _parse(text: str) -> dict[str, Any]:
    simple = parse_simple_toml(text)
    return simple if simple is not None else _toml(text)


@dataclass(frozen=True)
class LazyDocs:
    """A rule's docs: the `[docs]` part of its document, parsed on first use (`rule.doc`)."""

    text: str  # the document from its `[docs]` line on

    def __call__(self) -> RuleDoc:
        return _docs_from(self.text)


@functools.cache
def _docs_from(text: str) -> RuleDoc:
    return rule_doc(_toml(text).get("docs", {}))


class LazyOptions(Mapping):  # Mapping[str, Any]
    """A rule's [options], parsed from its part of the document on first look-up."""

    def __init__(self, text: str) -> None:
        self.text = text  # the document from its first table to `[docs]`

    def _options(self) -> Mapping[str, Any]:
        return _options_from(self.text)

    def __getitem__(self, name: str) -> Any:
        return self._options()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._options())

    def __len__(self) -> int:
        return len(self._options())

    def __repr__(self) -> str:
        return repr(self._options())


@functools.cache
def _options_from(text: str) -> dict[str, Any]:
    return _parse(text).get("options", {})


def rule_doc(docs: Mapping[str, Any]) -> RuleDoc:
    return RuleDoc(
        what=docs.get("what", ""),
        why=docs.get("why", ""),
        example=docs.get("example", ""),
        use_instead=docs.get("use_instead", ""),
        fix_safety=docs.get("fix_safety", ""),
    )


def split_document(text: str) -> tuple[str, str]:
    """(head, docs): the document before its `[docs]` table and from it on; docs is "" when it cannot be split
    safely (no such table, or another table after it), and then the head is the whole document."""
    match = _DOCS_TABLE.search(text)
    if match is None or _OTHER_TABLE.search(text, match.end()):
        return text, ""
    return text[: match.start()], text[match.start() :]


def _identity_and_tables(head: str) -> tuple[dict[str, Any], Mapping[str, Any]] | None:
    """The top-level keys of a document's head and its lazily read options, when the identity is simple TOML."""
    first_table = _FIRST_TABLE.search(head)
    identity_text = head[: first_table.start()] if first_table else head
    identity = parse_simple_toml(identity_text)
    if identity is None or any(isinstance(value, dict) for value in identity.values()):
        return None
    return identity, LazyOptions(head[first_table.start() :]) if first_table else {}


def load_rule(path: str | os.PathLike[str]) -> Rule:
    with open(path, encoding="utf-8") as handle:
        head, docs_text = split_document(handle.read())
    parts = _identity_and_tables(head)
    if parts is None:  # e.g. a multi-line summary: read the head whole
        try:
            data = _toml(head)
        except ValueError:  # a `[docs]` line inside a multi-line string of the head: parse the document whole
            head, docs_text = head + docs_text, ""
            data = _toml(head)
        parts = data, data.get("options", {})
    data, options = parts
    code = data["code"]
    return Rule(
        code=code,
        name=data["name"],
        severity=Severity(data["severity"]),
        kind=data["kind"],
        summary=data["summary"],
        docs=LazyDocs(docs_text) if docs_text else rule_doc(data.get("docs", {})),
        options=options,
        check=LazyCheck(code) if code in CHECKS else None,
        scope=data.get("scope", "file"),
    )


@dataclass(frozen=True)
class RuleKey:
    """What selecting a rule needs, read from its document's file name `HXnnn-name.toml` without opening it."""

    code: str
    name: str
    path: str


@functools.cache
def rule_keys() -> tuple[RuleKey, ...]:
    """Every rule's key, sorted by code. A run reads the documents of the rules it selects, not all of them."""
    directory = rule_documents_dir()
    keys = []
    for file_name in os.listdir(directory):
        if file_name.startswith("HX") and file_name.endswith(".toml"):
            code, _, name = file_name.removesuffix(".toml").partition("-")
            keys.append(RuleKey(code, name, os.path.join(directory, file_name)))
    return tuple(sorted(keys, key=lambda key: key.code))


@functools.cache
def rule_at(path: str | os.PathLike[str]) -> Rule:
    rule = load_rule(path)
    if os.path.basename(path) != f"{rule.code}-{rule.name}.toml":
        # Selectors are matched on file names: a document must be named after the rule it defines.
        raise RegistryError(f"{path}: a rule document must be named {rule.code}-{rule.name}.toml")
    return rule


def all_rules() -> tuple[Rule, ...]:
    """Every rule, sorted by code."""
    return tuple(rule_at(key.path) for key in rule_keys())


def forget_rules() -> None:
    """Read the documents and the check table afresh (tests that swap a check)."""
    rule_keys.cache_clear()
    rule_at.cache_clear()
    _keys_by_code_and_name.cache_clear()


@functools.cache
def _keys_by_code_and_name() -> dict[str, RuleKey]:
    by_key: dict[str, RuleKey] = {}
    for key in rule_keys():
        by_key.setdefault(key.code.lower(), key)
        by_key.setdefault(key.name, key)
    return by_key


def find_rule(code_or_name: str) -> Rule | None:
    key = _keys_by_code_and_name().get(code_or_name.strip().lower())  # codes in any case; names are lower-case
    return rule_at(key.path) if key is not None else None


def diagnostic(code: str, message: str, span: Span, **details: Any) -> Diagnostic:
    """A finding of rule `code`: its name and severity come from the rule's document, never from the check."""
    rule = rule_at(_keys_by_code_and_name()[code.lower()].path)
    return Diagnostic(code=rule.code, name=rule.name, severity=rule.severity, message=message, span=span, **details)


def matches_selector(rule: Rule | RuleKey, selector: str) -> bool:
    """A selector is a code ("HX104"), a code prefix ("HX1", "ALL") or a rule name ("defensive-null-check")."""
    selector = selector.strip()
    if selector.upper() == "ALL":
        return True
    return rule.code.upper().startswith(selector.upper()) or rule.name == selector.lower()


def is_known_selector(selector: str) -> bool:
    return any(matches_selector(key, selector) for key in rule_keys())
