"""The text searches and node groupings that stand in for slower ones give the same answers."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

from c_projects import kernel_project

from hexlint.backend.loops import macro_definition_end
from hexlint.backend.names import named_not_called


def _texts(alphabet: bytes, longest: int) -> list[bytes]:
    return [bytes(text) for length in range(longest + 1) for text in itertools.product(alphabet, repeat=length)]


def test_named_not_called_answers_as_the_word_regex() -> None:
    for data in _texts(b"ab1_( \n", 5):
        for name in ("a", "ab", "a1", "_b", "1a", ""):
            expected = re.search(rb"\b%s\b(?!\s*\()" % re.escape(name.encode()), data) is not None
            assert named_not_called(data, name) == expected, (data, name)


def test_macro_definition_end_is_the_first_newline_not_escaped() -> None:
    logical_line_end = re.compile(rb"(?<!\\)\n")
    for data in _texts(b"a\\\n", 6):
        for position in range(len(data) + 1):
            match = logical_line_end.search(data, position)
            expected = match.start() if match else len(data)
            assert macro_definition_end(data, position) == expected, (data, position)


def test_nodes_in_top_are_the_walked_subtree_of_that_kind(tmp_path: Path) -> None:
    project = kernel_project(
        tmp_path,
        "static int g = 1;\n"
        "int f(int *p, int n) { int s = 0; for (int i = 0; i < n; i++) { s += p[i]; if (s > g) s = g; } return s; }\n"
        "int h(int x) { int y = x; return f(&y, 1) + y; }\n",
    )
    (unit,) = project.units
    for function in unit.functions_all():
        assert unit.is_top(function)
        for kind in ("VAR_DECL", "DECL_REF_EXPR", "IF_STMT", "CALL_EXPR", "BINARY_OPERATOR"):
            walked = [node for node in function.descendants(include_self=True) if node.kind == kind]
            assert unit.nodes_in_top(kind, function) == walked, (function.spelling, kind)
            assert walked or kind in ("IF_STMT", "CALL_EXPR")
