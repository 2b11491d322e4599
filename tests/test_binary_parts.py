"""A large library audited in parts side by side (forked workers, each a run of consecutive functions): the parts
cover every function once and in order, and the merged result is what one audit of the whole library reports."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import hexlint.binary.run as binary_run
from hexlint.binary.audit import function_part
from hexlint.elf.reader import FunctionSymbol
from hexlint.engine import binary_namespace

ROOT = Path(__file__).resolve().parent.parent
LIBRARIES = sorted(
    str(path)
    for path in [*(ROOT / "fixtures" / "htp-core" / "lib").glob("*.so"), *(ROOT / "fixtures" / "binary").glob("*.so")]
)


@given(sizes=st.lists(st.integers(0, 5000), max_size=40), parts=st.integers(1, 6))
def test_the_parts_hold_every_function_once_in_order(sizes: list[int], parts: int) -> None:
    symbols = [FunctionSymbol(f"f{number}", 0x1000 * number, size) for number, size in enumerate(sizes)]
    pieces = [function_part(symbols, number, parts) for number in range(parts)]
    assert [symbol for piece in pieces for symbol in piece] == symbols


def test_parts_share_out_the_bytes() -> None:
    symbols = [FunctionSymbol(f"f{number}", 0x100 * number, 0x100) for number in range(10)]
    assert [len(function_part(symbols, number, 2)) for number in range(2)] == [5, 5]


def _audit(paths: list[str], options: list[str], jobs: int) -> tuple:
    arguments = binary_namespace(None)
    for option in options:
        setattr(arguments, option, True)
    tables: list[dict[str, object]] = []
    facts: list[binary_run.LibraryFacts] = []
    diagnostics, report = binary_run.audit_paths(paths, arguments, {}, tables, jobs=jobs, facts=facts)
    return diagnostics, report, tables, facts


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux only")
@pytest.mark.parametrize("options", [[], ["spills", "verbose"], ["promotions", "division", "all_rows"]])
def test_a_library_audited_in_parts_reports_what_one_audit_does(
    options: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = {path: _audit([path], options, jobs=1) for path in LIBRARIES}
    pair = _audit(LIBRARIES[:2], options, jobs=1)
    monkeypatch.setattr(binary_run, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(binary_run, "PART_MIN_BYTES", 1)
    monkeypatch.setattr(binary_run, "_idle_cores", lambda: 8)
    split: list[int] = []
    monkeypatch.setattr(binary_run, "merged_result", _recording(binary_run.merged_result, split))
    for path in LIBRARIES:
        assert _audit([path], options, jobs=3) == whole[path], path
    assert split and all(parts == 3 for parts in split)  # each library was indeed audited in three parts
    # fewer libraries than workers: each in parts, the libraries in their order
    assert _audit(LIBRARIES[:2], options, jobs=5) == pair


def _recording(merge, calls: list[int]):
    def merged(parts, codes):
        calls.append(len(parts))
        return merge(parts, codes)

    return merged


def test_a_busy_machine_audits_a_library_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(binary_run, "PART_MIN_BYTES", 1)
    arguments = binary_namespace(None)
    monkeypatch.setattr(binary_run, "_idle_cores", lambda: 1)
    assert binary_run._parts_of(LIBRARIES[:1], 4, arguments) == [1]
    monkeypatch.setattr(binary_run, "_idle_cores", lambda: 4)
    assert binary_run._parts_of(LIBRARIES[:1], 4, arguments) == [4]
    assert binary_run._parts_of(LIBRARIES[:2], 4, arguments) == [2, 2]


def _loadavg_reads(monkeypatch: pytest.MonkeyPatch, texts: list[str]) -> None:
    """/proc/loadavg reads as `texts`, in turn; every other open as it is."""
    import builtins
    import io

    real_open = builtins.open
    reads = iter(texts)

    def fake_open(file, *args, **kwargs):
        if file == "/proc/loadavg":
            return io.StringIO(next(reads))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)


def test_idle_cores_count_the_fewest_other_runnable_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("hexlint.engine.usable_cores", lambda: 4)
    monkeypatch.setattr(os, "getloadavg", lambda: (4.0, 4.0, 4.0))  # a minute of benchmarks: not what runs now
    # this process, one task that stays and one gone by the second look: three cores idle
    _loadavg_reads(monkeypatch, ["4.00 3.00 2.00 3/300 99\n", "4.00 3.00 2.00 2/300 99\n", "4.0 3.0 2.0 3/300 9\n"])
    assert binary_run._idle_cores() == 3
    # three other tasks want the CPU at every look: one core idle
    _loadavg_reads(monkeypatch, ["0.1 0.1 0.1 4/300 99\n"] * 3)
    assert binary_run._idle_cores() == 1
    _loadavg_reads(monkeypatch, ["0.1 0.1 0.1 9/300 99\n"] * 3)
    assert binary_run._idle_cores() == 0


def test_idle_cores_fall_back_on_the_load_average(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("hexlint.engine.usable_cores", lambda: 4)
    monkeypatch.setattr(os, "getloadavg", lambda: (2.4, 1.0, 1.0))
    _loadavg_reads(monkeypatch, ["not a load average\n"] * 3)
    assert binary_run._idle_cores() == 2


def _failing_in_part(number: int, failure):
    whole = binary_run.library_result

    def library_result(path, args, options, codes=None, part=(0, 1)):
        if part[0] == number:
            failure()
        return whole(path, args, options, codes, part)

    return library_result


def _refuse() -> None:
    raise binary_run.BinaryInputError("lib.so: refused in its second part")


def _die() -> None:
    os._exit(9)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux only")
@pytest.mark.parametrize(
    ("failure", "error"), [(_refuse, binary_run.BinaryInputError), (_die, ChildProcessError)], ids=["error", "died"]
)
def test_a_part_that_fails_fails_the_run_and_leaves_no_process(failure, error, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(binary_run, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(binary_run, "PART_MIN_BYTES", 1)
    monkeypatch.setattr(binary_run, "_idle_cores", lambda: 8)
    monkeypatch.setattr(binary_run, "library_result", _failing_in_part(1, failure))
    with pytest.raises(error):
        _audit([LIBRARIES[0]], [], jobs=2)
    with pytest.raises(ChildProcessError):  # every child was reaped: none is left to wait for
        os.waitpid(-1, os.WNOHANG)
