"""Baselines: fingerprints survive unrelated edits above a finding; a change of the offending line makes it new."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from hexlint.baseline import BaselineError, entries_for, filter_baseline, load_baseline, render_baseline, write_baseline
from hexlint.core import Diagnostic, Severity, Span


def finding(line: int, text: str, path: str = "src/k.c", code: str = "HX110") -> Diagnostic:
    return Diagnostic(code, "n", Severity.ERROR, "m", Span(path, line, 1), fingerprint_text=text)


def fingerprint_of(diagnostic: Diagnostic, base: Path) -> str:
    ((_, entry),) = entries_for([diagnostic], base)
    return entry.fingerprint


def test_fingerprint_ignores_line_numbers_and_whitespace_but_not_text(tmp_path: Path) -> None:
    original = fingerprint_of(finding(10, "if (!ctx) {"), tmp_path)
    assert fingerprint_of(finding(42, "if (!ctx) {"), tmp_path) == original
    assert fingerprint_of(finding(10, "if  (!ctx)   {"), tmp_path) == original
    assert fingerprint_of(finding(10, "if (!octx) {"), tmp_path) != original
    assert fingerprint_of(finding(10, "if (!ctx) {", code="HX111"), tmp_path) != original
    assert fingerprint_of(finding(10, "if (!ctx) {", path="src/other.c"), tmp_path) != original


def test_identical_lines_are_told_apart_by_occurrence(tmp_path: Path) -> None:
    first, second = finding(3, "x = a / b;"), finding(9, "x = a / b;")
    prints = [entry.fingerprint for _, entry in entries_for([second, first], tmp_path)]
    assert len(set(prints)) == 2
    recorded = frozenset((e.code, e.path, e.fingerprint) for _, e in entries_for([first], tmp_path))
    new, hidden = filter_baseline([first, second], recorded, tmp_path)
    assert hidden == [first]
    assert new == [second]


def test_paths_are_stored_relative_to_the_baseline_directory(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    document = json.loads(render_baseline([finding(1, "t", path=str(tmp_path / "src" / "k.c"))], tmp_path))
    assert document["version"] == 1
    assert document["findings"][0]["path"] == "src/k.c"
    assert set(document["findings"][0]) == {"code", "path", "fingerprint", "message"}


def test_round_trip_hides_exactly_the_recorded_findings(tmp_path: Path) -> None:
    old = [finding(1, "a"), finding(2, "b")]
    baseline_file = tmp_path / "baseline.json"
    baseline_file.write_text(render_baseline(old, tmp_path))
    recorded = load_baseline(baseline_file)
    moved = [replace(diagnostic, span=replace(diagnostic.span, line=diagnostic.span.line + 5)) for diagnostic in old]
    new, hidden = filter_baseline([*moved, finding(3, "c")], recorded, tmp_path)
    assert [diagnostic.fingerprint_text for diagnostic in new] == ["c"]
    assert len(hidden) == 2


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("not json", "not valid JSON"),
        ('{"version": 7, "findings": []}', "not a hexlint baseline"),
        ('{"version": 1}', "findings"),
    ],
)
def test_bad_baseline_files_are_one_line_errors(tmp_path: Path, content: str, reason: str) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(content)
    with pytest.raises(BaselineError, match=reason):
        load_baseline(path)


BAD_DIRECTIVE = "int b;  // hexlint: ignore[HX110]\n"  # no reason: HX001, a finding the engine itself makes


def test_cli_write_then_use_baseline_across_edits(tmp_path: Path, monkeypatch, hexlint_cli) -> None:
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "src" / "k.c"
    source.parent.mkdir()
    source.write_text("int a;\n" + BAD_DIRECTIVE)
    (tmp_path / "ci").mkdir()

    written = hexlint_cli("--select", "HX001", "--write-baseline", "ci/baseline.json", "src")
    assert written.status == 0
    assert "Wrote 1 finding to ci/baseline.json" in written.stderr
    assert json.loads((tmp_path / "ci" / "baseline.json").read_text())["findings"][0]["path"] == "../src/k.c"

    assert hexlint_cli("--select", "HX001", "src").status == 1
    clean = hexlint_cli("--select", "HX001", "--baseline", "ci/baseline.json", "src")
    assert (clean.status, clean.stdout) == (0, "")
    assert "1 hidden by the baseline" in clean.stderr
    # Spelled with a trailing slash it is still that file, and its directory is still ci/ (as pathlib reads it).
    assert hexlint_cli("--select", "HX001", "--baseline", "ci/baseline.json/", "src").status == 0

    # An unrelated edit above the finding moves it; it stays matched.
    source.write_text("/* a new header comment */\n#include <stdint.h>\n\nint a;\n" + BAD_DIRECTIVE)
    assert hexlint_cli("--select", "HX001", "--baseline", "ci/baseline.json", "src").status == 0

    # From another working directory the baseline still matches (paths are relative to the baseline file).
    monkeypatch.chdir(tmp_path / "ci")
    assert hexlint_cli("--select", "HX001", "--baseline", "baseline.json", "../src").status == 0
    monkeypatch.chdir(tmp_path)

    # A second identical finding is new; the first stays hidden.
    source.write_text("int a;\n" + BAD_DIRECTIVE + BAD_DIRECTIVE)
    second = hexlint_cli("--select", "HX001", "--baseline", "ci/baseline.json", "src")
    assert second.status == 1
    assert [line.split(":")[1] for line in second.stdout.splitlines()] == ["3"]

    # Changing the offending line makes the finding new.
    source.write_text("int a;\nint b;  // hexlint: ignore[HX111]\n")
    changed = hexlint_cli("--select", "HX001", "--baseline", "ci/baseline.json", "src")
    assert changed.status == 1
    assert changed.stdout.startswith("src/k.c:2:")


def test_cli_missing_baseline_is_an_error_naming_it(tmp_path: Path, monkeypatch, hexlint_cli) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.c").write_text("int a;\n")
    run = hexlint_cli("--baseline", "nope.json", "k.c")
    assert run.status == 2
    assert run.stderr.count("\n") == 1
    assert "nope.json" in run.stderr


# write_baseline counts what it rendered instead of parsing its own output back.


@pytest.mark.parametrize("count", [0, 1, 4])
def test_count_matches_the_file_unparsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count: int) -> None:
    findings = [finding(line, "x = a / b;", str(tmp_path / "k.c")) for line in range(1, count + 1)]
    target = tmp_path / "baseline.json"

    def no_parsing(*_arguments, **_keywords):
        raise AssertionError("write_baseline parsed JSON")

    with monkeypatch.context() as patched:
        patched.setattr(json, "loads", no_parsing)
        recorded = write_baseline(target, findings)
    assert recorded == count
    assert len(json.loads(target.read_text(encoding="utf-8"))["findings"]) == count
    assert len(load_baseline(target)) == count


def test_a_macro_that_gains_a_misaligned_line_escapes_the_baseline(tmp_path: Path, monkeypatch, hexlint_cli) -> None:
    monkeypatch.chdir(tmp_path)
    lines = ["#define F(x)       \\", "    (x) +          \\", "    (x) -     \\", "    (x) *          \\", "    1", ""]
    Path("m.c").write_text("\n".join(lines))
    assert hexlint_cli("--select", "HX110", "--write-baseline", "baseline.json", "m.c").status == 0
    Path("m.c").write_text("int moved_down;\n" + "\n".join(lines))  # an unrelated edit above: still hidden
    assert hexlint_cli("--select", "HX110", "--baseline", "baseline.json", "m.c").status == 0
    lines[3] = "    (x) *    \\"  # a second line out of the macro's column
    Path("m.c").write_text("int moved_down;\n" + "\n".join(lines))
    worse = hexlint_cli("--select", "HX110", "--baseline", "baseline.json", "m.c")
    assert worse.status == 1 and "(lines 4, 5 out of the common column 20)" in worse.stdout
