"""One implementation each of call-graph reachability and glob matching, shared by the source rules."""

from __future__ import annotations

from hexlint.checks import _c_helpers, _kernel_params, _trace, hx106_trace_missing


def test_trace_uses_the_shared_reachability_and_glob_helpers() -> None:
    assert not hasattr(_trace, "_reachable")
    assert not hasattr(_trace, "matches")
    assert _trace.reachable is _kernel_params.reachable
    assert _trace.matches_any is _c_helpers.matches_any
    assert hx106_trace_missing.matches_any is _c_helpers.matches_any


def test_reachable_follows_cycles_and_includes_the_start() -> None:
    graph = {"entry": {"a", "b"}, "a": {"c"}, "c": {"a", "entry"}, "unrelated": {"entry"}}
    assert _kernel_params.reachable(graph, "entry") == {"entry", "a", "b", "c"}
    assert _kernel_params.reachable(graph, "leaf") == {"leaf"}


def test_matches_any_is_a_case_sensitive_glob() -> None:
    assert _c_helpers.matches_any("htp_op_matmul", ("htp_op_*",))
    assert not _c_helpers.matches_any("HTP_OP_MATMUL", ("htp_op_*",))
    assert not _c_helpers.matches_any("anything", ())
