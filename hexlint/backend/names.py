"""Codebase names: the backend's facts are found by name patterns that rule options and configuration supply."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from typing import Any


def matches_any(name: str, patterns: Iterable[str]) -> bool:
    """Whether `name` matches one of the fnmatch patterns (case-sensitive, as C identifiers are)."""
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def string_list(options: Mapping[str, Any], key: str) -> tuple[str, ...]:
    """A list-of-strings option (a lone string is a one-item list), tolerant of a missing key."""
    value = options.get(key, ())
    if isinstance(value, str):
        return (value,)
    return tuple(str(item) for item in value or ())
