"""The binary audit's entries in the persistent cache (hexlint/cache.py): one per library, so an unchanged library
(by content) is not decoded again.

The key holds everything a LibraryResult depends on: hexlint's build, the library's bytes, its path as given (the
findings and the table name it), every binary option of the command line (binary/options.py, and -v, which adds the
per-loop records to the table), the rules' merged options, the codes audited, and the bytes of each --debug-file
and of each -g build beside the library (the missing-DWARF note names one when it has the same code). The payload is
the result as data: findings through cache.diagnostic_data, the table as JSON text (its key order is the report's,
which the store's sorted payload would lose), the LibraryFacts.
"""

from __future__ import annotations

import json

from hexlint.cache import diagnostic_data, diagnostic_from

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping, Sequence
    from typing import Any

    from hexlint.binary.run import LibraryResult
    from hexlint.cache import Store

NAMESPACE = "binary-audits"
_FORMAT = 1

_option_names: tuple[str, ...] | None = None


def binary_option_names() -> tuple[str, ...]:
    """The attributes add_binary_arguments defines, plus `verbose` (the table's per-loop records)."""
    global _option_names
    if _option_names is None:
        import argparse

        from hexlint.binary.options import add_binary_arguments

        parser = argparse.ArgumentParser(add_help=False)
        add_binary_arguments(parser)
        names = {action.dest for action in parser._actions if action.dest != argparse.SUPPRESS}
        _option_names = tuple(sorted(names | {"verbose"}))
    return _option_names


def library_key(
    path: str,
    args: argparse.Namespace,
    options: Mapping[str, Mapping[str, Any]],
    codes: Sequence[str],
) -> str | None:
    """The entry's key, or None when the library cannot be read (its error comes from the audit itself)."""
    from hexlint.binary.sources import debug_builds_beside
    from hexlint.cache import FileDigests, build_id, key_of

    digests = FileDigests()  # content digests; "missing" for a file that cannot be read (the audit says why)
    library = digests.of(path)
    if library == "missing":
        return None
    arguments = {name: getattr(args, name, None) for name in binary_option_names()}
    debug_files = [[name, digests.of(name)] for name in getattr(args, "debug_file", None) or ()]
    beside = [[name, digests.of(name)] for name in debug_builds_beside(path)]
    return key_of(_FORMAT, build_id(), path, library, arguments, options, list(codes), debug_files, beside)


def result_data(result: LibraryResult) -> dict[str, Any]:
    facts = result.facts
    return {
        "path": result.path,
        "functions": result.functions,
        "diagnostics": [diagnostic_data(diagnostic) for diagnostic in result.diagnostics],
        "notes": list(result.notes),
        "table": None if result.table is None else json.dumps(result.table),
        "facts": None
        if facts is None
        else {"path": facts.path, "spilling": sorted(facts.functions_spilling_vectors_in_loops)},
    }


def result_from(data: Mapping[str, Any]) -> LibraryResult:
    """The LibraryResult of an entry's payload; raises (KeyError, TypeError, ValueError) on one of another shape."""
    from hexlint.binary.run import LibraryFacts, LibraryResult

    facts = data["facts"]
    table = data["table"]
    return LibraryResult(
        path=str(data["path"]),
        functions=int(data["functions"]),
        diagnostics=tuple(diagnostic_from(item) for item in data["diagnostics"]),
        notes=tuple(str(note) for note in data["notes"]),
        table=None if table is None else json.loads(table),
        facts=None if facts is None else LibraryFacts(str(facts["path"]), frozenset(facts["spilling"])),
    )


def cached_result(store: Store, key: str) -> LibraryResult | None:
    payload = store.get(NAMESPACE, key)
    if payload is None:
        return None
    try:
        return result_from(payload)
    except (KeyError, TypeError, ValueError, AttributeError):  # sealed by this user, but by an older shape
        return None


def store_result(store: Store, key: str, result: LibraryResult) -> None:
    store.put(NAMESPACE, key, result_data(result))
