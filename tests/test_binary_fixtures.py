"""Every binary twin in fixtures/binary against its sidecar (strict both ways), and the core's builds are clean.

A twin is audited as the CI gate runs it: `--spills --promotions --division` (HX202 at its default threshold, 0, as
`--max-inloop-sspills 0` spells out). The sidecar format is fixtures/binary/README.md.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import pytest

from hexlint.binary.audit import settings_from_options
from hexlint.binary.options import add_binary_arguments
from hexlint.binary.run import audit_library, audit_paths, rule_options

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
TWINS = ROOT / "fixtures" / "binary"
CORE_LIB = ROOT / "fixtures" / "htp-core" / "lib"
BINARY_CODES = {"HX201", "HX202", "HX203", "HX204", "HX205"}
SIDECARS = sorted(TWINS.glob("*.expect.toml"))
CORE_BUILDS = sorted(path for path in CORE_LIB.glob("libhtp-core-v*.so") if not path.name.endswith("-g.so"))


def arguments(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="*")
    parser.add_argument("-v", "--verbose", action="store_true")
    add_binary_arguments(parser)
    return parser.parse_args(list(argv))


def strict_audit(library: Path):
    args = arguments("--spills", "--promotions", "--division", "--strict", "--max-inloop-sspills", "0", str(library))
    diagnostics, report = audit_paths([str(library)], args, {})
    return diagnostics, report, args


def test_every_twin_library_has_a_sidecar():
    covered = {tomllib.loads(path.read_text())["library"] for path in SIDECARS}
    assert {library.name for library in TWINS.glob("*.so")} == covered


def test_there_are_twins_for_every_binary_rule():
    codes = {expect["code"] for path in SIDECARS for expect in tomllib.loads(path.read_text()).get("expect", [])}
    assert codes >= BINARY_CODES, f"no twin for {sorted(BINARY_CODES - codes)}"


@pytest.mark.parametrize("sidecar", SIDECARS, ids=lambda path: path.name.removesuffix(".expect.toml"))
def test_twin_matches_its_sidecar(sidecar: Path):
    spec = tomllib.loads(sidecar.read_text())
    library = TWINS / spec["library"]
    diagnostics, report, args = strict_audit(library)
    audit = audit_library(str(library), settings_from_options(rule_options({}, args)))
    found = Counter((diagnostic.span.symbol, diagnostic.code) for diagnostic in diagnostics)
    problems = []
    expected_codes: dict[str, set[str]] = {}
    for expect in spec.get("expect", []):
        function, code = expect["function"], expect["code"]
        expected_codes.setdefault(function, set()).add(code)
        if audit.function(function) is None:
            problems.append(f"{function}: not a function of {library.name}")
            continue
        if found[(function, code)] < expect.get("min_count", 1):
            problems.append(f"{function}: expected {code} x{expect.get('min_count', 1)}, got {found[(function, code)]}")
        if "in_loop" in expect:
            places = [d for d in diagnostics if d.span.symbol == function and d.code == code]
            cfg = audit.function(function).cfg
            for place in places:
                if (cfg.loop_at(place.span.address) is not None) != expect["in_loop"]:
                    problems.append(
                        f"{function}: {code} at {place.span.address:#x}, in_loop should be {expect['in_loop']}"
                    )
    clean = {entry["function"] for entry in spec.get("clean", [])}
    for name in clean:
        if audit.function(name) is None:
            problems.append(f"{name}: not a function of {library.name}")
    strict = spec.get("strict", True)
    for diagnostic in diagnostics:
        function, code = diagnostic.span.symbol, diagnostic.code
        if function in clean:
            problems.append(f"{function}: listed clean but {code}: {diagnostic.message}")
        elif function in expected_codes and strict and code not in expected_codes[function]:
            problems.append(f"{function}: unexpected {code}: {diagnostic.message}")
        elif function not in expected_codes and strict:
            problems.append(f"{function}: not in the sidecar but {code}: {diagnostic.message}")
    assert not problems, "\n".join(problems) + "\n" + report


@pytest.mark.parametrize("library", CORE_BUILDS, ids=lambda path: path.name)
def test_core_build_is_clean_under_the_strict_gate(library: Path):
    args = arguments("--spills", "--promotions", "--division", "--strict", str(library))
    diagnostics, report = audit_paths([str(library)], args, {})
    assert not diagnostics, "\n".join(diagnostic.message for diagnostic in diagnostics)
    assert "functions audited" in report


def test_there_are_four_core_builds():
    assert {path.name for path in CORE_BUILDS} >= {f"libhtp-core-v{v}.so" for v in (73, 75, 79, 81)}


@pytest.mark.parametrize("library", CORE_BUILDS, ids=lambda path: path.name)
def test_core_build_is_clean_in_lint_mode(library: Path):
    diagnostics, report = audit_paths([str(library)], arguments(str(library)), {})
    assert not diagnostics and report == ""


def test_the_stack_buffer_twin_is_clean_because_its_stack_traffic_is_recognised():
    # without the predicated-store and call-argument rules these in-loop accesses would count as spills
    audit = audit_library(str(TWINS / "stack_buffers.so"), settings_from_options(rule_options({}, arguments())))
    reasons = {
        function.name: Counter(access.buffer_reason for access in function.stack_accesses if access.loop is not None)
        for function in audit.functions
    }
    assert reasons["legal_masked_reduction"]["predicated store"] >= 2
    assert set(reasons["legal_masked_reduction"]) == {"predicated store"}
    assert reasons["legal_log_in_loop"]["call argument"] >= 2
    assert set(reasons["legal_log_in_loop"]) == {"call argument"}
