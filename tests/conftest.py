"""Shared test helpers: the repository root, running the CLI in-process, and skipping when a tool is missing."""

from __future__ import annotations

import io
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

# The suite gates every commit: the property tests check the same examples on every run (a gate that fails at random
# lands nothing). HEXLINT_HYPOTHESIS=explore draws new examples each run, to hunt for bugs; pin what it finds with
# @hypothesis.example.
settings.register_profile("deterministic", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile("explore" if os.environ.get("HEXLINT_HYPOTHESIS") == "explore" else "deterministic")

# The suite's runs read and write no persistent cache (each test would otherwise see the last one's entries in the
# checkout's .hexlint_cache); the cache's own tests turn it back on with a directory of their own.
# HEXLINT_SUITE_CACHE=DIR runs every test through one cache in DIR instead: twice in a row, the second run is
# answered from it, which checks that no test's outcome depends on whether the cache was used.
if os.environ.get("HEXLINT_SUITE_CACHE"):
    os.environ.pop("HEXLINT_NO_CACHE", None)
    os.environ["HEXLINT_CACHE_DIR"] = os.environ["HEXLINT_SUITE_CACHE"]
else:
    os.environ["HEXLINT_NO_CACHE"] = "1"


@dataclass(frozen=True)
class CliRun:
    status: int
    stdout: str
    stderr: str


def run_hexlint(*arguments: str) -> CliRun:
    """Run `hexlint ARGUMENTS` in-process (same behaviour as the console script) and capture its output."""
    from hexlint.cli import main

    stdout, stderr = io.StringIO(), io.StringIO()
    status = main(list(arguments), stdout=stdout, stderr=stderr)
    return CliRun(status, stdout.getvalue(), stderr.getvalue())


@pytest.fixture
def hexlint_cli():
    return run_hexlint


def require_tool(name: str) -> str:
    """The tool's path, or skip the test with a reason when it is not installed."""
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed")
    return path


def as_from_a_terminal() -> None:
    """A `preexec_fn` for a child that is to be stopped with Ctrl-C (SIGINT): SIGINT handled as a terminal gives it,
    whatever signal state the test runner's thread has (a runner started in the background ignores SIGINT, and a
    blocked SIGINT is inherited across exec)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
