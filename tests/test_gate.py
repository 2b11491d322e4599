"""The build-to-build regression gate: only what grew since the OLD library fails."""

from __future__ import annotations

import pytest
from conftest import run_hexlint
from test_binary_support import build_library

from hexlint.binary.audit import audit_image
from hexlint.binary.gate import compare
from hexlint.elf import load_elf

HEADER = """
#include <hexagon_types.h>
#include <hvx_hexagon_protos.h>
"""

# kernel_backlog already divides in its loop in the OLD build: the gate must not fail on it.
BACKLOG = """
int kernel_backlog(const int *v, int n, int d) { int s = 0; for (int i = 0; i < n; i++) s += v[i] / d; return s; }
"""

OLD = (
    HEADER
    + BACKLOG
    + """
int kernel_changed(const int *v, int n, int d) { int s = 0; for (int i = 0; i < n; i++) s += v[i] * d; return s; }
void kernel_vectors(HVX_Vector *out, const HVX_Vector *in, int n) {
    for (int i = 0; i < n; i++) out[i] = Q6_Vw_vadd_VwVw(in[i], in[i + 1]);
}
"""
)

NEW = (
    HEADER
    + BACKLOG
    + """
int kernel_changed(const int *v, int n, int d) { int s = 0; for (int i = 0; i < n; i++) s += v[i] / d; return s; }
void kernel_vectors(HVX_Vector *out, const HVX_Vector *in, int rows) {
    HVX_Vector acc[40];
    for (int k = 0; k < 40; k++) acc[k] = in[k];
    for (int r = 0; r < rows; r++) {
#pragma unroll
        for (int k = 0; k < 40; k++) acc[k] = Q6_Vw_vadd_VwVw(acc[k], in[r * 40 + k]);
    }
    for (int k = 0; k < 40; k++) out[k] = acc[k];
}
float kernel_new(const float *v, int n) { float s = 0; for (int i = 0; i < n; i++) s += v[i] * 1.1; return s; }
"""
)


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    directory = tmp_path_factory.mktemp("gate")
    return build_library(directory, OLD, name="old"), build_library(directory, NEW, name="new")


def test_compare_reports_only_functions_that_grew(builds):
    old, new = (audit_image(load_elf(path)) for path in builds)
    regressions = compare(old, new, ["spills", "promotions", "division"])
    grown = {(regression.function, regression.metric.code) for regression in regressions}
    assert ("kernel_changed", "HX204") in grown
    assert ("kernel_vectors", "HX201") in grown
    assert ("kernel_new", "HX203") in grown
    assert not any(function == "kernel_backlog" for function, _ in grown)
    for regression in regressions:
        assert regression.new > regression.old


def test_families_select_the_metrics(builds):
    old, new = (audit_image(load_elf(path)) for path in builds)
    codes = {regression.metric.code for regression in compare(old, new, ["division"])}
    assert codes == {"HX204"}


def test_same_build_passes_the_gate(builds):
    old, _ = builds
    run = run_hexlint("--spills", "--promotions", "--division", "--baseline-lib", str(old), str(old))
    assert run.status == 0, run.stdout + run.stderr
    assert "no function grew" in run.stdout


def test_gate_fails_on_what_the_change_added(builds):
    old, new = builds
    run = run_hexlint("--spills", "--promotions", "--division", "--baseline-lib", str(old), str(new))
    assert run.status == 1
    assert "kernel_changed" in run.stdout and "kernel_vectors" in run.stdout and "kernel_new" in run.stdout
    assert "kernel_backlog" not in run.stdout
    assert "grew from" in run.stdout


def test_gate_going_backwards_is_clean(builds):
    old, new = builds
    run = run_hexlint("--spills", "--promotions", "--division", "--baseline-lib", str(new), str(old))
    assert run.status == 0, run.stdout


def test_unreadable_baseline_library_is_exit_2(builds, tmp_path):
    _, new = builds
    run = run_hexlint("--spills", "--baseline-lib", str(tmp_path / "missing.so"), str(new))
    assert run.status == 2 and "missing.so" in run.stderr and run.stderr.count("\n") == 1
