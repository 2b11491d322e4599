"""The persistent cache: sealed entries that a bad, foreign or planted cache cannot turn into wrong results, runs
that give the same findings with and without it, and units re-parsed only when what they read changed."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
from pathlib import Path

import pytest

from hexlint import cache
from hexlint.cache import FileDigests, Store, key_of
from tests.conftest import REPO_ROOT, run_hexlint

CORE = REPO_ROOT / "fixtures" / "htp-core"

HEADER = """\
#ifndef SHARED_H
#define SHARED_H
#include <stdint.h>
#include <stddef.h>
struct htp_ops_context { void * ctx; uint32_t n; };
static inline uint32_t shared_rows(uint32_t n) { return n; }
#endif
"""

USES_HEADER = """\
#include "shared.h"
int op_{name}(struct htp_ops_context * octx, uint32_t d) {{
    uint32_t total = 0;
    for (uint32_t i = 0; i < shared_rows(octx->n); i++) {{
        total += i;
    }}
    return (int) total;
}}
"""

ALONE = """\
#include <stdint.h>
int op_alone(uint32_t n) { return (int) n; }
"""

DIVISION = """\
    for (uint32_t j = 0; j < octx->n; j++) {
        total += j / d;
    }
"""


@pytest.fixture
def cache_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The cache turned back on (the suite turns it off), with a secret of this test's own."""
    monkeypatch.delenv("HEXLINT_NO_CACHE", raising=False)
    monkeypatch.delenv("HEXLINT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    return tmp_path / "cache"


def make_tree(root: Path) -> Path:
    htp = root / "backend" / "htp"
    htp.mkdir(parents=True)
    (htp / "shared.h").write_text(HEADER)
    for name in ("one", "two"):
        (htp / f"{name}-ops.c").write_text(USES_HEADER.format(name=name))
    (htp / "alone-ops.c").write_text(ALONE)
    return root / "backend"


def lint_json(*arguments: str) -> tuple[dict, str]:
    run = run_hexlint("--format", "json", "--exit-zero", "-v", *arguments)
    assert run.status == 0, run.stderr
    if "--cache-dir" in arguments:
        saved(arguments[arguments.index("--cache-dir") + 1])
    return json.loads(run.stdout), run.stderr


def saved(cache_directory: str | Path) -> None:
    """Wait for the detached process that saves a run's units (the next run would; a test that edits the cache
    directory itself must)."""
    from hexlint.c.unit_cache import wait_for_saver

    wait_for_saver(str(cache_directory))


def cache_line(stderr: str) -> str:
    return stderr[stderr.index("cache: ") :].split(")")[0]


def no_cache(*arguments: str) -> dict:
    return lint_json("--no-cache", *arguments)[0]


# ---------------------------------------------------------------- the store


def test_an_entry_reads_back_only_whole_sealed_and_under_its_own_key(tmp_path: Path) -> None:
    store = Store(str(tmp_path), b"s" * 32)
    store.put("ns", "a" * 64, {"findings": [1, 2]})
    assert store.get("ns", "a" * 64) == {"findings": [1, 2]}
    path = tmp_path / "ns" / "aa" / ("a" * 64 + ".json")
    good = path.read_bytes()

    path.write_bytes(good[: len(good) // 2])  # truncated
    assert store.get("ns", "a" * 64) is None
    path.write_bytes(good.replace(b"[1,2]", b"[1,3]"))  # the payload changed, the seal did not
    assert store.get("ns", "a" * 64) is None
    path.write_bytes(b"\xff\xfe not json")
    assert store.get("ns", "a" * 64) is None
    path.write_bytes(b"[]")  # JSON of another shape
    assert store.get("ns", "a" * 64) is None
    path.write_bytes(good.replace(b'"format":1', b'"format":99'))
    assert store.get("ns", "a" * 64) is None
    # A whole entry copied under another key does not hold that key.
    other = tmp_path / "ns" / "bb" / ("b" * 64 + ".json")
    other.parent.mkdir()
    other.write_bytes(good)
    assert store.get("ns", "b" * 64) is None
    # Sealed under another user's secret: refused.
    path.write_bytes(good)
    assert Store(str(tmp_path), b"t" * 32).get("ns", "a" * 64) is None
    assert store.get("ns", "a" * 64) == {"findings": [1, 2]}
    assert store.refused == 6
    assert (tmp_path / ".gitignore").read_text().splitlines()[-1] == "*"


def test_pruning_keeps_the_newest_entries(tmp_path: Path) -> None:
    store = Store(str(tmp_path), b"s" * 32)
    keys = [key_of(number) for number in range(5)]
    for age, key in enumerate(keys):
        store.put("ns", key, age)
        entry = tmp_path / "ns" / key[:2] / (key + ".json")
        os.utime(entry, ns=(age * 10**9, age * 10**9))
    store.prune("ns", 2)
    assert [store.get("ns", key) for key in keys] == [None, None, None, 3, 4]


def _writer(directory: str, secret: bytes, value: int) -> None:
    store = Store(directory, secret)
    for round_number in range(60):
        store.put("ns", "c" * 64, {"writer": value, "round": round_number, "pad": "x" * 20000})


def test_two_processes_writing_one_entry_never_leave_half_of_one(tmp_path: Path) -> None:
    secret = b"k" * 32
    context = multiprocessing.get_context("fork")
    writers = [context.Process(target=_writer, args=(str(tmp_path), secret, value)) for value in (1, 2)]
    for writer in writers:
        writer.start()
    reader = Store(str(tmp_path), secret)
    seen = []
    while any(writer.is_alive() for writer in writers):
        payload = reader.get("ns", "c" * 64)
        if payload is not None:
            seen.append(payload["writer"])
    for writer in writers:
        writer.join()
    assert reader.refused == 0  # every read saw a whole entry or none
    assert reader.get("ns", "c" * 64)["writer"] in (1, 2)
    assert not [name for name in os.listdir(tmp_path / "ns" / "cc") if name.startswith(".tmp-")]


def test_the_user_secret_is_made_once_and_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = cache.user_secret()
    assert first is not None and len(first) == 32
    assert cache.user_secret() == first
    assert (tmp_path / "hexlint" / "seal-key").stat().st_mode & 0o077 == 0


def test_keys_and_digests_follow_content_not_spelling(tmp_path: Path) -> None:
    assert key_of("a", [1, {"b": 2}]) == key_of("a", [1, {"b": 2}])
    assert key_of("a", 1) != key_of("a", 2)
    (tmp_path / "f.h").write_text("int x;\n")
    digests = FileDigests(overrides={str(tmp_path / "g.h"): b"int x;\n"})
    assert digests.of(str(tmp_path / "f.h")) == digests.of(str(tmp_path / "g.h"))  # stdin text counts as content
    assert digests.of(str(tmp_path / "missing.h")) == "missing"
    listing = digests.of("dir:" + str(tmp_path))
    (tmp_path / "new.h").write_text("")
    assert FileDigests().of("dir:" + str(tmp_path)) != listing


# ---------------------------------------------------------------- runs


def test_a_warm_run_parses_nothing_and_reports_the_same(tmp_path: Path, cache_on: Path) -> None:
    tree = make_tree(tmp_path)
    with open(tree / "htp" / "two-ops.c", "a") as handle:
        handle.write("int op_more(struct htp_ops_context * octx, uint32_t d) {\n    uint32_t total = 0;\n")
        handle.write(DIVISION + "    return (int) total;\n}\n")
    expected = no_cache(str(tree))
    assert [item["code"] for item in expected["diagnostics"]].count("HX108") == 1
    cold, cold_err = lint_json("--cache-dir", str(cache_on), str(tree))
    warm, warm_err = lint_json("--cache-dir", str(cache_on), str(tree))
    assert cold == expected and warm == expected
    assert cache_line(cold_err) == "cache: miss, 3 of 3 units parsed"
    assert cache_line(warm_err) == "cache: hit, 0 of 3 units parsed"
    # One file of the tree is answered by the whole tree's run.
    one, one_err = lint_json("--cache-dir", str(cache_on), str(tree / "htp" / "two-ops.c"))
    assert one == no_cache(str(tree / "htp" / "two-ops.c"))
    assert cache_line(one_err).startswith("cache: hit from the whole tree's run")


def test_an_entry_answers_runs_from_any_directory_and_buffers_equal_to_the_disk(
    tmp_path: Path, cache_on: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = make_tree(tmp_path)
    kernel = tree / "htp" / "one-ops.c"
    kernel.write_text(kernel.read_text().replace("        total += i;\n", "        total += i;\n" + DIVISION))
    monkeypatch.chdir(tmp_path)
    expected, _ = lint_json("--cache-dir", str(cache_on), "backend/htp/one-ops.c")
    assert expected["diagnostics"][0]["path"] == "backend/htp/one-ops.c"
    monkeypatch.chdir(tree / "htp")
    elsewhere, stderr = lint_json("--cache-dir", str(cache_on), "one-ops.c")
    assert cache_line(stderr).startswith("cache: hit,")
    assert elsewhere == no_cache("one-ops.c")
    assert elsewhere["diagnostics"][0]["path"] == "one-ops.c"
    import io
    import sys

    old_stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(kernel.read_bytes()))
    try:
        buffer, stderr = lint_json("--cache-dir", str(cache_on), "--stdin-filename", "one-ops.c", "-")
    finally:
        sys.stdin = old_stdin
    assert cache_line(stderr).startswith("cache: hit,") and buffer == elsewhere


def test_an_edit_re_parses_only_the_units_that_read_the_changed_file(tmp_path: Path, cache_on: Path) -> None:
    tree = make_tree(tmp_path)
    lint_json("--cache-dir", str(cache_on), str(tree))
    with open(tree / "htp" / "alone-ops.c", "a") as handle:
        handle.write("int op_extra(void) { return 1; }\n")
    result, stderr = lint_json("--cache-dir", str(cache_on), str(tree))
    assert cache_line(stderr) == "cache: miss, 1 of 3 units parsed"
    assert result == no_cache(str(tree))
    # The shared header: both units that include it, not the one that does not.
    header = tree / "htp" / "shared.h"
    header.write_text(HEADER.replace("return n;", "return n + 0;"))
    result, stderr = lint_json("--cache-dir", str(cache_on), str(tree))
    assert cache_line(stderr) == "cache: miss, 2 of 3 units parsed"
    assert result == no_cache(str(tree))
    # A new modification time alone: the findings are keyed by content, so the run is still answered whole.
    os.utime(tree / "htp" / "alone-ops.c", (1, 1))
    assert cache_line(lint_json("--cache-dir", str(cache_on), str(tree))[1]) == "cache: hit, 0 of 3 units parsed"


def test_a_finding_introduced_and_fixed_shows_through_the_cache(tmp_path: Path, cache_on: Path) -> None:
    tree = make_tree(tmp_path)
    kernel = tree / "htp" / "one-ops.c"
    clean = kernel.read_text()
    for text in (clean.replace("        total += i;\n", "        total += i;\n" + DIVISION), clean):
        kernel.write_text(text)
        cached, _ = lint_json("--cache-dir", str(cache_on), str(tree))
        assert cached == no_cache(str(tree))
    assert cached["diagnostics"] == []


def test_a_missing_header_that_appears_invalidates_the_entry(tmp_path: Path, cache_on: Path) -> None:
    tree = make_tree(tmp_path)
    (tree / "htp" / "alone-ops.c").write_text('#include "later.h"\n' + ALONE)
    before, _ = lint_json("--cache-dir", str(cache_on), str(tree))
    assert [item["code"] for item in before["diagnostics"]] == ["HX002"]
    (tree / "htp" / "later.h").write_text("#define LATER 1\n")
    after, stderr = lint_json("--cache-dir", str(cache_on), str(tree))
    assert after == no_cache(str(tree)) and after["diagnostics"] == []
    assert "cache: miss" in stderr


def test_corrupted_entries_and_asts_are_rebuilt_not_trusted(tmp_path: Path, cache_on: Path) -> None:
    tree = make_tree(tmp_path)
    (tree / "htp" / "one-ops.c").write_text(
        USES_HEADER.format(name="one").replace("        total += i;\n", "        total += i;\n" + DIVISION)
    )
    expected, _ = lint_json("--cache-dir", str(cache_on), str(tree))
    for entry in cache_on.rglob("*.json"):
        entry.write_bytes(entry.read_bytes()[:-40])
    for ast in cache_on.rglob("*.ast"):
        data = bytearray(ast.read_bytes())
        data[len(data) // 2] ^= 0xFF
        ast.write_bytes(bytes(data))
    rebuilt, stderr = lint_json("--cache-dir", str(cache_on), str(tree))
    assert rebuilt == expected
    assert cache_line(stderr) == "cache: miss, 3 of 3 units parsed"
    # The swapped AST files fail their sealed digests, so the next edit still re-parses only its unit.
    with open(tree / "htp" / "alone-ops.c", "a") as handle:
        handle.write("\n")
    _, stderr = lint_json("--cache-dir", str(cache_on), str(tree))
    assert cache_line(stderr) == "cache: miss, 1 of 3 units parsed"


def _reseal_without_findings(directory: Path, secret: bytes) -> int:
    """What an attacker who knows their own secret can do to a cache: empty every entry's findings, sealed again."""
    changed = 0
    store = Store(str(directory), secret)
    for path in directory.rglob("*.json"):
        entry = json.loads(path.read_text())
        if entry.get("namespace") != "source-runs":
            continue
        payload = json.loads(entry["payload"])
        payload["findings"] = []
        store.put(entry["namespace"], entry["key"], payload)
        changed += 1
    return changed


def test_a_planted_cache_does_not_hide_findings(
    tmp_path: Path, cache_on: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = make_tree(tmp_path)
    (tree / "htp" / "one-ops.c").write_text(
        USES_HEADER.format(name="one").replace("        total += i;\n", "        total += i;\n" + DIVISION)
    )
    # The attacker builds the cache for the very tree that arrives with it, under their own secret...
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "attacker"))
    lint_json("--cache-dir", str(cache_on), str(tree))
    attacker_secret = cache.user_secret()
    assert _reseal_without_findings(cache_on, attacker_secret) == 1
    hidden, _ = lint_json("--cache-dir", str(cache_on), str(tree))
    assert hidden["diagnostics"] == []  # for the attacker the forged entry holds: the test can tell
    # ...and the victim, with a secret of their own, never trusts it.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "victim"))
    found, stderr = lint_json("--cache-dir", str(cache_on), str(tree))
    assert [item["code"] for item in found["diagnostics"]] == ["HX108"]
    assert cache_line(stderr) == "cache: miss, 3 of 3 units parsed"


def test_stdin_text_is_linted_as_given_and_its_unit_not_kept(tmp_path: Path, cache_on: Path) -> None:
    tree = make_tree(tmp_path)
    kernel = tree / "htp" / "one-ops.c"
    lint_json("--cache-dir", str(cache_on), str(tree))
    edited = USES_HEADER.format(name="one").replace("        total += i;\n", "        total += i;\n" + DIVISION)
    import io
    import sys

    for cached in (True, False):
        old_stdin = sys.stdin
        sys.stdin = io.TextIOWrapper(io.BytesIO(edited.encode()))
        try:
            options = ("--cache-dir", str(cache_on)) if cached else ("--no-cache",)
            result, _ = lint_json(*options, "--stdin-filename", str(kernel), "-")
        finally:
            sys.stdin = old_stdin
        assert [item["code"] for item in result["diagnostics"]] == ["HX108"]
    # The disk's text is still what the cache answers for.
    assert lint_json("--cache-dir", str(cache_on), str(tree))[0] == no_cache(str(tree))


def test_the_cache_goes_where_the_project_is_and_can_be_turned_off(
    tmp_path: Path, cache_on: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".git").mkdir()
    tree = make_tree(checkout)
    monkeypatch.chdir(tmp_path)
    run_hexlint("-q", str(tree))
    assert (checkout / ".hexlint_cache" / ".gitignore").is_file()
    saved(checkout / ".hexlint_cache")
    shutil.rmtree(checkout / ".hexlint_cache")
    run_hexlint("-q", "--no-cache", str(tree))
    monkeypatch.setenv("HEXLINT_NO_CACHE", "1")
    run_hexlint("-q", str(tree))
    assert not (checkout / ".hexlint_cache").exists()
    monkeypatch.delenv("HEXLINT_NO_CACHE")
    monkeypatch.setenv("HEXLINT_CACHE_DIR", str(tmp_path / "from-env"))
    run_hexlint("-q", str(tree))
    assert (tmp_path / "from-env" / "source-runs").is_dir()
    monkeypatch.delenv("HEXLINT_CACHE_DIR")
    (checkout / "hexlint.toml").write_text('cache-dir = "build/lint-cache"\n')
    run_hexlint("-q", str(tree))
    assert (checkout / "build" / "lint-cache" / "source-runs").is_dir()
    shown = json.loads(run_hexlint("--show-settings", "--format", "json", str(tree)).stdout)["settings"]["cache-dir"]
    assert shown == {"value": str(checkout / "build" / "lint-cache"), "source": str(checkout / "hexlint.toml")}


def test_a_cache_that_cannot_be_written_is_no_error_and_said_once(
    tmp_path: Path, cache_on: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = make_tree(tmp_path)
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    result, stderr = lint_json("--cache-dir", str(blocker), str(tree))
    assert result == no_cache(str(tree))
    # ... and the run says so, once, or every run would be a cold one without anyone knowing why.
    warning = f"hexlint: warning: cannot write the cache in {blocker}: Not a directory; nothing of this run is kept"
    assert stderr.splitlines().count(warning) == 1
    # No secret can be made (the user's cache directory is a file): nothing is cached, and -v says why.
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    result, stderr = lint_json("--cache-dir", str(cache_on), str(tree))
    assert result == no_cache(str(tree)) and "cache: off (no secret" in stderr
    assert not cache_on.exists()


@pytest.mark.slow
def test_the_core_and_trees_made_from_it_lint_alike_with_and_without_the_cache(tmp_path: Path, cache_on: Path) -> None:
    """The audited core, then the core with rule fixtures dropped into it and edited step by step."""
    tree = tmp_path / "core"
    shutil.copytree(CORE, tree, ignore=shutil.ignore_patterns("lib", "qemu", "emu", "*.sh", "*.md"))
    fixtures = REPO_ROOT / "fixtures" / "rules"
    steps = [
        lambda: None,
        lambda: shutil.copy(fixtures / "HX104" / "kernel_defensive_checks.c", tree / "htp" / "defensive-ops.c"),
        lambda: shutil.copy(fixtures / "HX109" / "in_flight.c", tree / "htp" / "in-flight-ops.c"),
        lambda: (tree / "htp" / "htp-ctx.h").write_text((tree / "htp" / "htp-ctx.h").read_text() + "\n// edited\n"),
        lambda: (tree / "htp" / "defensive-ops.c").unlink(),
    ]
    for step in steps:
        step()
        expected = no_cache(str(tree))
        cold, _ = lint_json("--cache-dir", str(cache_on), str(tree))
        warm, stderr = lint_json("--cache-dir", str(cache_on), str(tree))
        assert cold == expected and warm == expected
        assert cache_line(stderr).startswith("cache: hit, 0 of")
    assert {item["code"] for item in expected["diagnostics"]} >= {"HX109"}
