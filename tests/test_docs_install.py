"""Every install line and every command the README and docs/*.md show, run as written against a clone of this repo.

A fresh clone of HEAD, a fresh venv, each `pip install` line (`/path/to/hexlint` is the docs' name for the clone,
`./hexlint` a clone beside the tree), then each `hexlint` command of the code blocks in the order shown, by the shell,
in a scratch tree where `ggml/src/ggml-hexagon` and `src/` are copies of the audited C core, `libggml-htp-vNN.so`
its built libraries and `llama.log` / `profile.log` fixture logs of fixtures/splits. Each pre-commit configuration
shown is run by pre-commit on a staged file. pip's cache is reused; the only network is PyPI (for the dependencies),
so HEXLINT_SKIP_NETWORK_TESTS=1 skips it.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT, as_from_a_terminal, require_tool

pytestmark = pytest.mark.slow

DOCS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
CLONE_NAME = "/path/to/hexlint"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
CORE_STANDS_FOR = ("ggml/src/ggml-hexagon", "src")
UPSTREAM_ONLY = re.compile(r"^hexlint: (error: )?--(func|disasm): .*(matches no function|no function)", re.IGNORECASE)


def code_blocks() -> list[tuple[str, str, str]]:
    """(document name, language, text) of every fenced code block."""
    return [(doc.name, match.group(1), match.group(2)) for doc in DOCS for match in FENCE.finditer(doc.read_text())]


def shown_commands() -> tuple[list[str], list[str]]:
    """The pip install lines and the hexlint command lines of the shell and workflow blocks, comments dropped."""
    installs, commands = [], []
    for _, language, text in code_blocks():
        if language not in ("sh", "yaml", ""):
            continue
        for raw in text.splitlines():
            line = raw.strip()
            line = line.removeprefix("- run: ").strip()
            line = re.sub(r"\s+#\s.*$", "", line)
            if "|" in line:
                line = line.split("|")[-1].strip()  # `adb logcat | hexlint ...`: hexlint's part
            if line.startswith("pip install "):
                installs.append(line)
            elif line.startswith("hexlint ") and "[OPTIONS]" not in line and "CODE-OR-NAME" not in line:
                commands.append(line)
    return installs, commands


def precommit_configs() -> list[str]:
    return [text for _, language, text in code_blocks() if language == "yaml" and "repos:" in text]


def test_the_docs_show_installs_commands_and_precommit_configs() -> None:
    installs, commands = shown_commands()
    assert any(line == "pip install ." for line in installs)
    assert not [line for line in installs if "pip install hexlint" in line], "hexlint is on no package index"
    assert len(commands) >= 15
    assert precommit_configs()
    for text in precommit_configs():
        assert "<you>" not in text and "github.com" not in text


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(scratch directory holding the clone as ./hexlint, venv) after every install line shown has run."""
    if os.environ.get("HEXLINT_SKIP_NETWORK_TESTS"):
        pytest.skip("HEXLINT_SKIP_NETWORK_TESTS is set; installing hexlint needs its dependencies from PyPI")
    require_tool("git")
    scratch = tmp_path_factory.mktemp("docs-install")
    clone = scratch / "hexlint"
    subprocess.run(["git", "clone", "--quiet", str(REPO_ROOT), str(clone)], check=True, capture_output=True)
    venv = scratch / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    installs, _ = shown_commands()
    for line in dict.fromkeys(installs):
        # `/path/to/hexlint[watch]`: the clone, with an extra; `.[server]`: the clone's extra, inside it.
        words = [
            str(clone) + word.removeprefix(CLONE_NAME) if word.startswith(CLONE_NAME) else word
            for word in shlex.split(line)
        ]
        cwd = clone if words[-1] == "." or words[-1].startswith(".[") else scratch
        completed = subprocess.run(
            [str(venv / "bin" / "python"), "-m", *words, "--quiet", "--disable-pip-version-check"],
            cwd=cwd,
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )
        assert completed.returncode == 0, (line, completed.stderr[-3000:])
    return scratch, venv


def test_every_install_line_gives_a_working_hexlint(installed: tuple[Path, Path]) -> None:
    scratch, venv = installed
    completed = subprocess.run(
        [str(venv / "bin" / "hexlint"), "--version"], capture_output=True, text=True, cwd=scratch
    )
    assert completed.returncode == 0 and completed.stdout.startswith("hexlint "), completed


def scratch_tree(root: Path) -> Path:
    """The paths the docs name: the C core's sources as ggml/src/ggml-hexagon and src/, its built libraries (of the
    same architectures) as libggml-htp-vNN.so, also in build/ and base/, and a -g build beside them."""
    core = REPO_ROOT / "fixtures" / "htp-core"
    for stand_in in CORE_STANDS_FOR:
        shutil.copytree(core, root / stand_in, ignore=shutil.ignore_patterns("lib"))
    for library in (core / "lib").glob("libhtp-core-v[0-9][0-9].so"):
        arch = library.stem.rsplit("-", 1)[-1]
        for directory in (root, root / "build", root / "base"):
            directory.mkdir(exist_ok=True)
            shutil.copy(library, directory / f"libggml-htp-{arch}.so")
    # The -g build a `--debug-file` example names (the core's own differs in code, which hexlint says and goes on).
    shutil.copy(core / "lib" / "libhtp-core-v73-g.so", root / "libggml-htp-v79-g.so")
    # The device logs `hexlint splits` and `hexlint trace` examples read: a scheduler dump, an op trace.
    logs = REPO_ROOT / "fixtures" / "splits"
    shutil.copy(logs / "transformer-layer.log", root / "llama.log")
    shutil.copy(logs / "trace-clean.log", root / "profile.log")
    return root


def test_every_command_shown_runs_as_written(installed: tuple[Path, Path]) -> None:
    """Run by the shell as shown (globs and all), with the installed hexlint; a crash log for `adb logcat |`."""
    scratch, venv = installed
    tree = scratch_tree(scratch / "tree")
    environment = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    _, commands = shown_commands()
    for line in commands:
        if "--watch" in shlex.split(line):
            run_watch_until_ready(line, tree, environment)
            continue
        completed = subprocess.run(
            ["bash", "-c", line],
            cwd=tree,
            env=environment,
            input="F DEBUG: #00 pc 0000000000001000 /vendor/lib/rfsa/adsp/libggml-htp-v79.so\n",
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        if completed.returncode == 2 and UPSTREAM_ONLY.search(completed.stderr):
            continue  # a function name of upstream's libraries, which the core's do not have: the options were fine
        assert completed.returncode in (0, 1), (line, completed.stderr)
        assert "error" not in completed.stderr, (line, completed.stderr)


def run_watch_until_ready(line: str, cwd: Path, environment: dict[str, str]) -> None:
    """A `hexlint --watch` command runs until Ctrl-C: it must print its report, say it watches, and end with exit 0
    on SIGINT without an error."""
    import queue
    import signal
    import threading

    process = subprocess.Popen(
        shlex.split(line),
        cwd=cwd,
        env={**environment, "PYTHONFAULTHANDLER": "1"},  # a hang can be asked where it is (SIGABRT below)
        preexec_fn=as_from_a_terminal,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(text) for text in process.stderr], daemon=True)
    reader.start()
    seen: list[str] = []
    try:
        while not (seen and seen[-1].startswith("hexlint: watching")):
            seen.append(lines.get(timeout=300))
        process.send_signal(signal.SIGINT)
        try:
            status = process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGABRT)  # faulthandler prints every thread's stack on stderr
            process.wait(timeout=30)
            reader.join(10)
            stacks = []
            while not lines.empty():
                stacks.append(lines.get_nowait())
            pytest.fail(f"{line}: did not end on SIGINT; its threads:\n{''.join(stacks)[-6000:]}")
    finally:
        if process.poll() is None:
            process.kill()
    reader.join(10)
    while not lines.empty():
        seen.append(lines.get_nowait())
    assert status == 0, (line, seen)
    assert not [text for text in seen if "error" in text or "Traceback" in text], (line, seen)


def test_every_precommit_config_shown_runs(installed: tuple[Path, Path], tmp_path: Path) -> None:
    yaml = pytest.importorskip("yaml")
    scratch, _ = installed
    if shutil.which("pre-commit") is None and not (Path(sys.executable).parent / "pre-commit").exists():
        pytest.skip("pre-commit is not installed")
    configs = {yaml.safe_dump(yaml.safe_load(text)): text for text in precommit_configs()}
    for index, text in enumerate(configs.values()):
        project = tmp_path / f"project-{index}"
        project.mkdir()
        subprocess.run(["git", "init", "--quiet"], cwd=project, check=True)
        (project / ".pre-commit-config.yaml").write_text(text.replace(CLONE_NAME, str(scratch / "hexlint")))
        (project / "bad.c").write_text("int a;  // hexlint: ignore[HX110]\n")  # HX001: no reason given
        subprocess.run(["git", "add", "."], cwd=project, check=True)
        completed = subprocess.run(
            [sys.executable, "-m", "pre_commit", "run", "--files", "bad.c"],
            cwd=project,
            env={**os.environ, "PRE_COMMIT_HOME": str(scratch / "pre-commit-home")},
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )
        assert completed.returncode == 1, completed.stdout + completed.stderr
        assert "bad.c:1:" in completed.stdout and "HX001" in completed.stdout, completed.stdout
