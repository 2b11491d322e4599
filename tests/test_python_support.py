"""hexlint claims Python 3.10+ (pyproject's requires-python) while the suite runs on one interpreter. The regular
expression syntax Python 3.11 added (possessive quantifiers, atomic groups) compiles on 3.11 and raises re.error on
import on 3.10: every binary command once crashed so. These tests hold every literal pattern of the package to 3.10's
syntax. They read `re.<function>(literal)` calls only: a pattern built at run time (f-strings, TOML options) is not
seen, so running the suite on 3.10 stays the sound check."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
_RE_FUNCTIONS = {"compile", "match", "search", "fullmatch", "sub", "subn", "findall", "finditer", "split"}


def syntax_newer_than_310(pattern: str | bytes) -> str | None:
    """What in `pattern` Python 3.10's re rejects: a possessive quantifier (`a++`, `a{0,3}+`) or an atomic group
    (`(?>...)`); None if nothing."""
    text = pattern.decode("latin-1") if isinstance(pattern, bytes) else pattern
    in_class = False
    previous_was_quantifier = False
    position = 0
    while position < len(text):
        character = text[position]
        if character == "\\":
            position += 2
            previous_was_quantifier = False
            continue
        if in_class:
            in_class = character != "]"
            position += 1
            continue
        if character == "[":
            in_class = True
            position += 2 if text.startswith("[^", position) else 1
            if text.startswith("]", position):
                position += 1  # `[]...]`, `[^]...]`: a first `]` is a member
            previous_was_quantifier = False
            continue
        if text.startswith("(?>", position):
            return "atomic group `(?>...)`"
        if character == "+" and previous_was_quantifier:
            return f"possessive quantifier at {position}"
        if character in "*+?":
            # `a+?` is lazy, not a quantifier on a quantifier: after it a `+` would be a syntax error anyway
            previous_was_quantifier = not (character == "?" and previous_was_quantifier)
        elif character == "{":
            end = text.find("}", position)
            is_quantifier = end > 0 and re.fullmatch(r"\d*(?:,\d*)?", text[position + 1 : end]) is not None
            if is_quantifier:
                position = end
            previous_was_quantifier = is_quantifier
        else:
            previous_was_quantifier = False
        position += 1
    return None


def _literal_patterns() -> list[tuple[str, int, str | bytes]]:
    """(file, line, pattern) of every `re.<function>(literal, ...)` in the package."""
    found = []
    for path in sorted((ROOT / "hexlint").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "re"
                and node.func.attr in _RE_FUNCTIONS
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str | bytes)
            ):
                found.append((str(path.relative_to(ROOT)), node.lineno, node.args[0].value))
    return found


def test_the_oldest_python_claimed_is_310() -> None:
    """If requires-python moves, this file's rules move with it."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["requires-python"] == ">=3.10"


def test_no_pattern_uses_regex_syntax_newer_than_310() -> None:
    patterns = _literal_patterns()
    assert len(patterns) > 20  # the scan finds the package's patterns (55 literal ones today)
    newer = [(file, line, reason) for file, line, pattern in patterns if (reason := syntax_newer_than_310(pattern))]
    assert newer == []


@pytest.mark.parametrize(
    ("pattern", "is_newer"),
    [
        (rb"(?:.[\x40-\xbf]..){0,3}+.", True),
        ("a++", True),
        ("a*+", True),
        ("a?+", True),
        ("(?>ab)", True),
        (rb"(?:.[\x40-\xbf]..){0,3}.", False),
        ("a+?", False),
        ("a*?b", False),
        (r"\++", False),
        ("[+*]+", False),
        ("[]+]+", False),
        ("[^]+]+", False),
        ("[]]++", True),
        ("[^]]++", True),
        ("x{2}y", False),
        ("x{a}+", False),  # `{a}` is literal text, not a quantifier
        ("(?:ab)+", False),
    ],
)
def test_the_detector(pattern: str | bytes, is_newer: bool) -> None:
    assert (syntax_newer_than_310(pattern) is not None) == is_newer
