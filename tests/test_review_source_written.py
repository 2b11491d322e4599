"""The textual "is it written in the loop" helpers: binary `&`/`&&` and member stores are not writes to the name."""

from __future__ import annotations

import pytest

from hexlint.backend.loops import assignment_count, written_in


@pytest.mark.parametrize(
    "text",
    [
        b"s += x[i] / d; s ^= (i & d);",
        b"s ^= i&d;",
        b"s ^= x[i] & d;",
        b"s ^= (i) & d;",
        b"i < n && d;",
        b"i < n &&d;",
        b"p->d = i;",
        b"q.d = i;",
        b"p->d++;",
        b"++p->d;",
        b"dd = 1; d_max = 2; if (d == 3) {}",
    ],
)
def test_lookalikes_are_not_writes(text: bytes) -> None:
    assert not written_in(text, "d")


@pytest.mark.parametrize(
    "text",
    [
        b"d = i;",
        b"d += 2;",
        b"d <<= 1;",
        b"d++;",
        b"--d;",
        b"f(&d);",
        b"f(x, & d);",
        b"int *q = &d;",
        b"return &d;",
        b"s += (d = 3);",
    ],
)
def test_real_writes_are_writes(text: bytes) -> None:
    assert written_in(text, "d")


def test_assignment_count_skips_members_comparisons_and_compound_assignment() -> None:
    text = b"int *p = a; p = b; ctx->p = c; s.p = d; if (p == e) {} p += 1; pp = f;"
    assert assignment_count(text, "p") == 2
