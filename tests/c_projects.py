"""Small C projects for the tests: files written below tmp_path, parsed as the engine parses them, one Project."""

from __future__ import annotations

import textwrap
from pathlib import Path

from hexlint.c.index import Project, build_project
from hexlint.c.parse import ParseSettings, classify, parse_unit


def project_of(tmp_path: Path, files: dict[str, str]) -> Project:
    """Each file written (dedented) at its relative path; the sources parsed by their role, and none may have errors."""
    paths = []
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        paths.append(str(path))
    sources = [path for path in paths if not path.endswith(".h")]
    units = [parse_unit(path, classify(path), ParseSettings()) for path in sources]
    for unit in units:
        assert not unit.diagnostics, [diagnostic.message for diagnostic in unit.diagnostics]
    return build_project(units, paths)


def kernel_project(tmp_path: Path, text: str, name: str = "htp/k.c") -> Project:
    """One kernel file's project."""
    return project_of(tmp_path, {name: text})
