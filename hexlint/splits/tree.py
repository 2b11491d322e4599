"""`--tree PATH`: a backend tree parsed the way a lint run parses it, as one project with its backend model."""

from __future__ import annotations

import os

from hexlint.runtime.logfile import LogError

# typing.TYPE_CHECKING without importing typing at start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from hexlint.backend.model import BackendModel


class TreeError(LogError):
    """A --tree that cannot be read (the message names it)."""


def load_model(tree: str, jobs: int = 0) -> BackendModel:
    from hexlint.backend.model import model_of
    from hexlint.c.index import build_project
    from hexlint.c.parse import InputError, ParseSettings, classify, on_deep_stacks, parse_unit
    from hexlint.discover import DiscoveryError, discover
    from hexlint.engine import is_translation_unit, usable_cores

    if not os.path.isdir(tree):
        raise TreeError(f"--tree: {tree}: not a directory")
    try:
        sources = [str(path) for path in discover([tree]).sources]
    except DiscoveryError as error:
        raise TreeError(f"--tree: {error}") from None
    units_to_parse = [path for path in sources if is_translation_unit(path)]
    if not units_to_parse:
        raise TreeError(f"--tree: {tree}: no C/C++ sources")
    settings = ParseSettings()

    def parse(path: str) -> object:
        try:
            return parse_unit(path, classify(path), settings)
        except InputError as error:
            raise TreeError(f"--tree: {error}") from None

    parsed = on_deep_stacks(parse, units_to_parse, jobs or usable_cores())
    return model_of(build_project(parsed, sources))
