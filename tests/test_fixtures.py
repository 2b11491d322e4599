"""The one fixture runner for every rule (docs/ARCHITECTURE.md, "Fixtures with inline expectations").

Cases: each `*.c` / `*.cpp` / `*.cc` file and each directory directly below `fixtures/rules/HXnnn/` is one run, with
HXnnn, every code its expectations mention and every rule its `hexlint: ignore[...]` comments name selected.
Expectations are `// expect: HX104` or `/* expect: HX104, HX108 */` on the line where the findings start (a code
listed twice means two findings), or `LINE CODE` pairs in a sidecar `NAME.expect` next to `NAME.c` where a comment
cannot stand. Strict both ways: a missing finding fails, an extra finding fails, a case without expectations must
be clean.

Roles: a single `.c` case is kernel code (as if it sat below `htp/`), a `.cpp`/`.cc` case host code; in a directory
case the usual classification applies (files below an `htp/` directory are kernel code) and a `hexlint.toml` in
the case directory is used as its configuration. Files named `*.fixed.*` and sidecars are never linted.
Fixes: where `NAME.fixed.EXT` sits next to `NAME.EXT`, the runner copies the case, runs with --fix semantics and
compares the fixed bytes with it.

And the audited core `fixtures/htp-core/` (its C/C++ sources) is clean under every rule.
"""

from __future__ import annotations

import re
import shutil
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from hexlint.config import Config, load_config, load_config_file
from hexlint.discover import SOURCE_SUFFIXES
from hexlint.engine import RunSettings, lint
from hexlint.registry import find_rule

RULE_FIXTURES = REPO_ROOT / "fixtures" / "rules"
CORE = REPO_ROOT / "fixtures" / "htp-core"
CASE_SUFFIXES = (".c", ".cpp", ".cc")
DIRECTIVE_CODES = re.compile(r"hexlint\s*:\s*ignore(?:-next-line)?\s*\[(?P<codes>[^\]]*)\]")
EXPECT_COMMENT = re.compile(r"(?://|/\*)\s*expect:\s*(?P<codes>HX\d{3}(?:\s*,\s*HX\d{3})*)")

Finding = tuple[str, int, str]  # (file relative to the case root, line, code)


@dataclass(frozen=True)
class Case:
    rule: str
    path: Path  # a file or a directory

    @property
    def id(self) -> str:
        return f"{self.rule}/{self.path.name}"

    @property
    def root(self) -> Path:
        return self.path if self.path.is_dir() else self.path.parent


def is_linted_file(path: Path) -> bool:
    return path.suffix in SOURCE_SUFFIXES and ".fixed." not in path.name


def case_files(case: Case) -> list[Path]:
    if case.path.is_file():
        return [case.path]
    return sorted(path for path in case.path.rglob("*") if path.is_file() and is_linted_file(path))


def discover_cases() -> list[Case]:
    cases = []
    for rule_dir in sorted(RULE_FIXTURES.glob("HX[0-9][0-9][0-9]")):
        for entry in sorted(rule_dir.iterdir()):
            if entry.is_dir() or (entry.suffix in CASE_SUFFIXES and ".fixed." not in entry.name):
                cases.append(Case(rule_dir.name, entry))
    return cases


def sidecar_for(path: Path) -> Path:
    return path.with_name(path.name.split(".")[0] + ".expect")


def expectations(case: Case) -> Counter[Finding]:
    expected: Counter[Finding] = Counter()
    for path in case_files(case):
        relative = path.relative_to(case.root).as_posix()
        text = path.read_bytes().decode("utf-8", "replace")
        for number, line in enumerate(text.splitlines(), start=1):
            for match in EXPECT_COMMENT.finditer(line):
                for code in match.group("codes").split(","):
                    expected[(relative, number, code.strip())] += 1
        sidecar = sidecar_for(path)
        if sidecar.is_file():
            for entry in sidecar.read_text(encoding="utf-8").splitlines():
                if entry.strip() and not entry.lstrip().startswith("#"):
                    line_text, code = entry.split()
                    expected[(relative, int(line_text), code)] += 1
    return expected


def directive_codes(case: Case) -> set[str]:
    """Rules named in the case's suppression comments: they run too, so a suppression can be used or unused."""
    codes = set()
    for path in case_files(case):
        for match in DIRECTIVE_CODES.finditer(path.read_bytes().decode("utf-8", "replace")):
            for selector in match.group("codes").split(","):
                rule = find_rule(selector.strip()) if selector.strip() else None
                if rule is not None:
                    codes.add(rule.code)
    return codes


def case_config(case: Case) -> Config:
    """The case directory's hexlint.toml, if any, with the fixed twins left out of the tree: they are expected
    outputs, not code the cross-file rules may see as context."""
    local = case.path / "hexlint.toml" if case.path.is_dir() else None
    config = load_config_file(local) if local is not None and local.is_file() else Config()
    return replace(config, exclude=(*config.exclude, "*.fixed.*"))


def case_settings(case: Case, codes: set[str], fix: bool = False, unsafe: bool = False) -> RunSettings:
    kernel_globs = ("*.c",) if case.path.is_file() and case.path.suffix == ".c" else ()
    return RunSettings(select=tuple(sorted(codes)), kernel_globs=kernel_globs, jobs=1, fix=fix, unsafe_fixes=unsafe)


def run_case(case: Case, files: list[Path], root: Path, fix: bool = False, unsafe: bool = False) -> Counter[Finding]:
    expected = expectations(case)
    codes = {case.rule, *(code for _, _, code in expected), *directive_codes(case)}
    result = lint([str(path) for path in files], case_config(case), case_settings(case, codes, fix, unsafe))
    actual: Counter[Finding] = Counter()
    for diagnostic in result.diagnostics:
        path = Path(diagnostic.span.path).resolve()
        try:
            relative = path.relative_to(root.resolve()).as_posix()
        except ValueError:
            relative = str(path)
        actual[(relative, diagnostic.span.line or 0, diagnostic.code)] += 1
    return actual


def describe(findings: Counter[Finding]) -> str:
    return "\n".join(
        f"  {path}:{line}: {code}" + (f" x{count}" if count > 1 else "")
        for (path, line, code), count in sorted(findings.items())
    )


CASES = discover_cases()


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_fixture_findings_match_expectations(case: Case) -> None:
    expected = expectations(case)
    actual = run_case(case, case_files(case), case.root)
    missing = expected - actual
    unexpected = actual - expected
    assert not missing and not unexpected, (
        f"{case.id}:\nmissing findings:\n{describe(missing) or '  none'}\nunexpected findings:\n"
        f"{describe(unexpected) or '  none'}"
    )


def fixed_twin(path: Path, kind: str = "fixed") -> Path | None:
    """NAME.fixed.EXT: the file after --fix; NAME.unsafe.fixed.EXT: after --fix --unsafe-fixes."""
    stem, _, suffix = path.name.partition(".")
    twin = path.with_name(f"{stem}.{kind}.{suffix}")
    return twin if twin.is_file() else None


FIX_CASES = [case for case in CASES if any(fixed_twin(path) for path in case_files(case))]
UNSAFE_FIX_CASES = [case for case in CASES if any(fixed_twin(path, "unsafe.fixed") for path in case_files(case))]


def copy_case(case: Case, tmp_path: Path) -> tuple[Path, list[Path]]:
    copy_root = tmp_path / case.root.name
    if case.path.is_dir():
        shutil.copytree(case.path, copy_root)
        return copy_root, [copy_root / path.relative_to(case.path) for path in case_files(case)]
    copy_root.mkdir()
    shutil.copy2(case.path, copy_root / case.path.name)
    return copy_root, [copy_root / case.path.name]


@pytest.mark.parametrize("case", UNSAFE_FIX_CASES, ids=[case.id for case in UNSAFE_FIX_CASES])
def test_fixture_unsafe_fixes_match_their_twin_parse_and_are_idempotent(case: Case, tmp_path: Path) -> None:
    copy_root, copied = copy_case(case, tmp_path)
    copied_case = Case(case.rule, copy_root if case.path.is_dir() else copied[0])
    run_case(copied_case, copied, copy_root, fix=True, unsafe=True)
    for original, fixed in zip(case_files(case), copied, strict=True):
        twin = fixed_twin(original, "unsafe.fixed") or fixed_twin(original) or original
        assert fixed.read_bytes() == twin.read_bytes(), f"{case.id}: {original.name} after the unsafe fixes"
    once = [path.read_bytes() for path in copied]
    left = run_case(copied_case, copied, copy_root, fix=True, unsafe=True)
    assert [path.read_bytes() for path in copied] == once, "fixing twice changed the files again"
    assert not [finding for finding in left if finding[2] == "HX002"], "the fixed files do not parse"


@pytest.mark.parametrize("case", FIX_CASES, ids=[case.id for case in FIX_CASES])
def test_fixture_fixes_match_fixed_twin(case: Case, tmp_path: Path) -> None:
    copy_root, copied = copy_case(case, tmp_path)
    run_case(Case(case.rule, copy_root if case.path.is_dir() else copied[0]), copied, copy_root, fix=True)
    for original, fixed in zip(case_files(case), copied, strict=True):
        twin = fixed_twin(original)
        expected = twin.read_bytes() if twin is not None else original.read_bytes()
        assert fixed.read_bytes() == expected, f"{case.id}: {original.name} after --fix differs from {twin or original}"


def test_every_rule_fixture_dir_has_cases() -> None:
    for rule_dir in sorted(RULE_FIXTURES.glob("HX*")):
        rule = find_rule(rule_dir.name)
        if rule is not None and rule.kind == "runtime":
            continue  # trace logs, run by tests/test_runtime_fixtures.py
        assert any(case.rule == rule_dir.name for case in CASES), f"{rule_dir} holds no fixture case"


def test_audited_core_is_clean_under_every_rule() -> None:
    """Sources only: the binary rules' verdict on the core's libraries is tested with the binary audit."""
    if not CORE.is_dir():
        pytest.skip("fixtures/htp-core is not there yet")
    # The core is linted like a real project: as a directory, with its own configuration if it has one.
    result = lint([str(CORE)], load_config(None, CORE), RunSettings(ignore=("HX2",), jobs=1))
    assert result.files_checked > 10
    assert not result.diagnostics, "the core must be clean:\n" + "\n".join(
        f"  {d.span.path}:{d.span.line}: {d.code} {d.message}" for d in result.diagnostics
    )
