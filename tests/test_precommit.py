"""The pre-commit hooks: the manifest validates, and `pre-commit try-repo` runs hexlint from a clean clone of HEAD.

The end-to-end test builds the hook's venv from the clone with pip, so it needs the package index (PyPI);
set HEXLINT_SKIP_NETWORK_TESTS=1 to skip it offline. Both tests skip when pre-commit is not installed.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT, require_tool

MANIFEST = REPO_ROOT / ".pre-commit-hooks.yaml"


def pre_commit_command() -> list[str]:
    if importlib.util.find_spec("pre_commit") is None:
        pytest.skip("pre-commit is not installed")
    return [sys.executable, "-m", "pre_commit"]


def git(*arguments: str, cwd: Path) -> None:
    environment = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    subprocess.run(["git", *arguments], cwd=cwd, check=True, capture_output=True, env=environment)


def test_manifest_validates() -> None:
    completed = subprocess.run(
        [*pre_commit_command(), "validate-manifest", str(MANIFEST)], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_manifest_declares_both_hooks_for_c_and_cxx() -> None:
    yaml = pytest.importorskip("yaml")
    hooks = {hook["id"]: hook for hook in yaml.safe_load(MANIFEST.read_text())}
    assert set(hooks) == {"hexlint", "hexlint-fix"}
    for hook in hooks.values():
        assert hook["types_or"] == ["c", "c++"]
        assert hook["language"] == "python"
        # The staged files are the run (hexlint reports on them only; the rest of the tree is context), in one process.
        assert hook.get("pass_filenames", True) is True
        assert hook["require_serial"] is True
    assert hooks["hexlint"]["entry"] == "hexlint"
    assert hooks["hexlint-fix"]["entry"].split() == ["hexlint", "--fix"]


def test_try_repo_end_to_end(tmp_path: Path) -> None:
    command = pre_commit_command()
    if os.environ.get("HEXLINT_SKIP_NETWORK_TESTS"):
        pytest.skip("HEXLINT_SKIP_NETWORK_TESTS is set; try-repo installs hexlint's dependencies from PyPI")
    require_tool("git")
    clone = tmp_path / "hexlint-clone"
    subprocess.run(["git", "clone", "--quiet", str(REPO_ROOT), str(clone)], check=True, capture_output=True)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    git("init", "--quiet", cwd=scratch)
    (scratch / "bad.c").write_text("int a;  // hexlint: ignore[HX110]\n")  # HX001: a suppression without a reason
    (scratch / "good.c").write_text("int b;\n")
    git("add", "bad.c", "good.c", cwd=scratch)
    environment = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}

    def try_repo(*files: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*command, "try-repo", str(clone), "hexlint", "--files", *files],
            cwd=scratch,
            env=environment,
            capture_output=True,
            text=True,
            check=False,
            timeout=900,
        )

    failing = try_repo("bad.c", "good.c")
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "bad.c:1:" in failing.stdout and "HX001" in failing.stdout
    assert not any(line.startswith("good.c:") for line in failing.stdout.splitlines())
    passing = try_repo("good.c")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert (scratch / "bad.c").read_text() == "int a;  // hexlint: ignore[HX110]\n"

    # A backend tree where only the host file is staged: the kernels are parsed as context, so the host write that no
    # kernel reads is found, and nothing is reported for the kernels that were not passed.
    from test_engine_context import HOST_UNREAD, KPARAMS_TREE, write_tree

    write_tree(scratch / "backend", KPARAMS_TREE)
    git("add", "backend", cwd=scratch)
    host_only = try_repo("backend/host/ggml-host.cpp")
    assert host_only.returncode == 1, host_only.stdout + host_only.stderr
    reported = [line for line in host_only.stdout.splitlines() if ": HX" in line]
    assert [line.split(" [")[0] for line in reported] == [f"backend/{HOST_UNREAD[0]}:{HOST_UNREAD[1]}:14: HX101"]
