"""Meta-tests over every rule: registered, documented, with failing and clean fixtures, and docs that cannot rot.

The docs test lints each rule's `example` (exactly this rule fires, at least once) and `use_instead` (nothing
fires), with the rule, HX002 parse-error and any rule the snippet's suppressions name selected (as ruff does: a short
example need not satisfy every other rule). Kernel snippets are linted as `htp/example.c`, host snippets
(`docs.example_role = "host"`) as `example.cpp`; a snippet with `// ---- relative/path` lines is split into those
files and linted as one project (cross-file rules). Binary rules' snippets are compiled and linked with clang-22 /
ld.lld-22 for Hexagon (skipped when those are absent). Runtime rules' snippets are trace logs checked as `hexlint
trace` checks them, with the options of `docs.example_options` for the example (budgets are off by default).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT, require_tool

from hexlint.checks import CHECKS
from hexlint.config import Config
from hexlint.core import Rule
from hexlint.engine import RunSettings, lint
from hexlint.registry import all_rules, find_rule, rule_documents_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

RULES = all_rules()
RULE_IDS = [rule.code for rule in RULES]
KINDS = {"tool", "text", "source", "binary", "runtime"}
RULE_FIXTURES = REPO_ROOT / "fixtures" / "rules"
BINARY_FIXTURES = REPO_ROOT / "fixtures" / "binary"
EXPECT = re.compile(r"expect:\s*(HX\d{3}(?:\s*,\s*HX\d{3})*)")


def document(rule: Rule) -> dict:
    (path,) = Path(rule_documents_dir()).glob(f"{rule.code}-*.toml")
    return tomllib.loads(path.read_text(encoding="utf-8"))


def test_rule_documents_are_named_and_unique() -> None:
    paths = sorted(Path(rule_documents_dir()).glob("HX*.toml"))
    assert [path.name for path in paths] == [f"{rule.code}-{rule.name}.toml" for rule in RULES]
    assert len({rule.name for rule in RULES}) == len(RULES)
    for rule in RULES:
        assert re.fullmatch(r"HX\d{3}", rule.code)
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)
        assert rule.kind in KINDS
        group = {"0": "tool", "1": "text or source", "2": "binary", "3": "runtime"}[rule.code[2]]
        assert rule.kind in group, f"{rule.code} is a {rule.kind} rule in the {group} hundreds"


def test_every_check_has_a_document_and_every_rule_a_check() -> None:
    codes = {rule.code for rule in RULES}
    assert set(CHECKS) <= codes, f"checks without a rule document: {sorted(set(CHECKS) - codes)}"
    assert list(CHECKS) == sorted(CHECKS), "CHECKS is an explicit, sorted list"
    missing = [rule.code for rule in RULES if rule.kind != "tool" and rule.check is None]
    assert not missing, f"rules without a check in hexlint/checks/__init__.py: {missing}"
    assert all(rule.check is None for rule in RULES if rule.kind == "tool")


@pytest.mark.parametrize("rule", RULES, ids=RULE_IDS)
def test_rule_has_every_doc_section(rule: Rule) -> None:
    assert rule.summary.strip() and "\n" not in rule.summary.strip()
    for section in ("what", "why", "example", "use_instead"):
        assert getattr(rule.doc, section).strip(), f"{rule.code} lacks docs.{section}"
    assert rule.severity.value in ("error", "warning", "info")


def source_fixture_codes() -> dict[str, tuple[set[str], set[str]]]:
    """rule dir -> (codes expected somewhere, names of cases expecting nothing of the dir's rule)."""
    found: dict[str, tuple[set[str], set[str]]] = {}
    for rule_dir in sorted(RULE_FIXTURES.glob("HX*")):
        expected: set[str] = set()
        clean: set[str] = set()
        for case in sorted(rule_dir.iterdir()):
            if ".fixed." in case.name or case.suffix in (".expect", ".h", ".toml", ".md"):
                continue
            files = [case] if case.is_file() else [path for path in case.rglob("*") if path.is_file()]
            text = "\n".join(path.read_bytes().decode("utf-8", "replace") for path in files)
            sidecars = [path.with_name(path.name.split(".")[0] + ".expect") for path in files]
            text += "\n".join(
                "expect: " + line.split()[1] for sidecar in sidecars if sidecar.is_file()
                for line in sidecar.read_text().splitlines() if line.strip() and not line.startswith("#")
            )  # fmt: skip
            codes = {code.strip() for match in EXPECT.finditer(text) for code in match.group(1).split(",")}
            expected |= codes
            if rule_dir.name not in codes:
                clean.add(case.name)
        found[rule_dir.name] = (expected, clean)
    return found


def binary_fixture_codes() -> tuple[set[str], int]:
    """(codes some sidecar expects, number of [[clean]] functions) over fixtures/binary/*.expect.toml."""
    expected: set[str] = set()
    clean = 0
    for sidecar in sorted(BINARY_FIXTURES.glob("*.expect.toml")):
        data = tomllib.loads(sidecar.read_text(encoding="utf-8"))
        expected |= {entry["code"] for entry in data.get("expect", [])}
        clean += len(data.get("clean", []))
    return expected, clean


@pytest.mark.parametrize("rule", RULES, ids=RULE_IDS)
def test_rule_has_a_failing_and_a_clean_fixture(rule: Rule) -> None:
    if rule.kind == "binary":
        expected, clean = binary_fixture_codes()
        assert rule.code in expected, f"no fixtures/binary/*.expect.toml expects {rule.code}"
        assert clean, "no fixtures/binary sidecar lists a [[clean]] function"
        return
    fixtures = source_fixture_codes()
    assert rule.code in fixtures, f"fixtures/rules/{rule.code}/ is missing"
    expected, clean = fixtures[rule.code]
    assert rule.code in expected, f"no case in fixtures/rules/{rule.code}/ expects {rule.code}"
    assert clean, f"no clean (legal_*) case in fixtures/rules/{rule.code}/"


DIRECTIVE = re.compile(r"hexlint\s*:\s*ignore(?:-next-line)?\s*\[([^\],]*)")
FILE_MARKER = re.compile(r"^// ---- (?P<path>\S+)[ \t]*$", re.MULTILINE)


def snippet_files(rule: Rule, snippet: str) -> dict[str, str]:
    """A snippet is one file, or several marked by `// ---- relative/path` lines (cross-file rules need a project)."""
    markers = list(FILE_MARKER.finditer(snippet))
    if not markers:
        role = document(rule).get("docs", {}).get("example_role", "kernel")
        return {"example.cpp" if role == "host" else "htp/example.c": snippet}
    ends = [marker.start() for marker in markers[1:]] + [len(snippet)]
    return {
        marker.group("path"): snippet[marker.end() : end].lstrip("\n")
        for marker, end in zip(markers, ends, strict=True)
    }


def lint_snippet(rule: Rule, snippet: str, directory: Path) -> list[str]:
    for relative, text in snippet_files(rule, snippet).items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    # Like ruff's docs test: the rule itself, parse errors, and the rules the snippet's suppressions name.
    named = {match.group(1).strip() for match in DIRECTIVE.finditer(snippet)}
    select = tuple(sorted({rule.code, "HX002", *(name for name in named if find_rule(name))}))
    result = lint([str(directory)], Config(), RunSettings(select=select, jobs=1))
    return [diagnostic.code for diagnostic in result.diagnostics]


SOURCE_RULES = [rule for rule in RULES if rule.kind not in ("binary", "runtime")]


@pytest.mark.parametrize("rule", SOURCE_RULES, ids=[rule.code for rule in SOURCE_RULES])
def test_docs_example_fires_exactly_this_rule(rule: Rule, tmp_path: Path) -> None:
    codes = lint_snippet(rule, rule.doc.example, tmp_path / "example")
    assert codes and set(codes) == {rule.code}, f"{rule.code} example gave {codes}"


@pytest.mark.parametrize("rule", SOURCE_RULES, ids=[rule.code for rule in SOURCE_RULES])
def test_docs_use_instead_is_clean(rule: Rule, tmp_path: Path) -> None:
    codes = lint_snippet(rule, rule.doc.use_instead, tmp_path / "use_instead")
    assert codes == [], f"{rule.code} use_instead gave {codes}"


def build_hexagon_library(snippet: str, directory: Path) -> Path:
    clang = require_tool("clang-22")
    lld = require_tool("ld.lld-22")
    directory.mkdir(parents=True, exist_ok=True)
    source, obj, library = directory / "snippet.c", directory / "snippet.o", directory / "libsnippet.so"
    source.write_text(snippet, encoding="utf-8")
    flags = ["--target=hexagon-unknown-none-elf", "-mcpu=hexagonv73", "-mhvx", "-mhvx-length=128b", "-O3", "-fPIC"]
    subprocess.run([clang, *flags, "-ffreestanding", "-g", "-c", str(source), "-o", str(obj)], check=True)
    subprocess.run([lld, "-shared", str(obj), "-o", str(library)], check=True)
    return library


BINARY_RULES = [rule for rule in RULES if rule.kind == "binary"]


@pytest.mark.parametrize("rule", BINARY_RULES, ids=[rule.code for rule in BINARY_RULES])
def test_binary_docs_example_and_use_instead(rule: Rule, tmp_path: Path) -> None:
    select = RunSettings(select=("HX2",), jobs=1)
    example = build_hexagon_library(rule.doc.example, tmp_path / "example")
    fired = [diagnostic.code for diagnostic in lint([str(example)], Config(), select).diagnostics]
    assert fired and set(fired) == {rule.code}, f"{rule.code} example gave {fired}"
    clean = build_hexagon_library(rule.doc.use_instead, tmp_path / "use_instead")
    assert [diagnostic.code for diagnostic in lint([str(clean)], Config(), select).diagnostics] == []


RUNTIME_RULES = [rule for rule in RULES if rule.kind == "runtime"]


def check_trace_snippet(rule: Rule, snippet: str, path: Path, options: dict) -> list[str]:
    from types import MappingProxyType

    from hexlint.runtime.command import check_traces
    from hexlint.runtime.trace import read_trace

    path.write_text(snippet.lstrip("\n"), encoding="utf-8")
    merged = {rule.code: MappingProxyType({**rule.options, **options})}
    return [diagnostic.code for diagnostic in check_traces([read_trace(str(path))], [rule], merged)]


@pytest.mark.parametrize("rule", RUNTIME_RULES, ids=[rule.code for rule in RUNTIME_RULES])
def test_runtime_docs_example_and_use_instead(rule: Rule, tmp_path: Path) -> None:
    options = document(rule).get("docs", {}).get("example_options", {})
    fired = check_trace_snippet(rule, rule.doc.example, tmp_path / "example.log", options)
    assert fired and set(fired) == {rule.code}, f"{rule.code} example gave {fired}"
    assert check_trace_snippet(rule, rule.doc.use_instead, tmp_path / "use_instead.log", options) == []
