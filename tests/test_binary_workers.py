"""Several libraries audited at once in worker processes: how a run with workers ends when it is cut short (Ctrl-C
again and again, the parent killed, a worker killed) and when no worker can be had. Each case once hung, left
processes or printed tracebacks."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import run_hexlint

ROOT = Path(__file__).resolve().parent.parent
CORE_LIBRARIES = sorted(path for path in (ROOT / "fixtures" / "htp-core" / "lib").glob("*.so"))

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux only")

# The CLI with Python's own Ctrl-C handler even where the test runner's shell ignores SIGINT (as CI's may).
CLI = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from hexlint.__main__ import run; sys.exit(run())"
)


@pytest.fixture(scope="module")
def many_libraries(tmp_path_factory) -> list[str]:
    """Enough copies of the core's libraries to keep two workers busy for a second or two."""
    folder = tmp_path_factory.mktemp("libraries")
    copies = []
    for number in range(40):
        for library in CORE_LIBRARIES:
            copy = folder / f"{number}-{library.name}"
            shutil.copyfile(library, copy)
            copies.append(str(copy))
    return copies


@pytest.fixture
def start_strict_run(many_libraries):
    """Starts `hexlint --jobs N --spills --strict` on many libraries; a run a failed test left going is killed."""
    runs: list[subprocess.Popen[str]] = []

    def start(jobs: str = "2") -> subprocess.Popen[str]:
        environment = {**os.environ, "PYTHONPATH": str(ROOT)}
        command = [sys.executable, "-c", CLI, "--jobs", jobs, "--spills", "--strict", *many_libraries]
        run = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=environment,
            cwd=ROOT,
            start_new_session=True,  # a process group of its own, as a terminal's Ctrl-C reaches it
        )
        runs.append(run)
        return run

    yield start
    for run in runs:
        if run.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(run.pid, signal.SIGKILL)
            run.communicate()


def living_children(pid: int) -> list[int]:
    """The processes whose parent is `pid` and that still run (a zombie has ended)."""
    children = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            state_and_parent = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        if int(state_and_parent[1]) == pid and state_and_parent[0] != "Z":
            children.append(int(entry))
    return children


def alive(pids: list[int]) -> list[int]:
    living = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            living.append(pid)
    return living


def wait_for(condition, seconds: float = 10.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.01)
    return condition()


def running_workers(run: subprocess.Popen[str]) -> list[int]:
    """Both workers of `run`, once each has set itself up (ignores Ctrl-C: SIGINT in SigIgn of its status)."""

    def set_up() -> list[int]:
        workers = living_children(run.pid)
        return workers if len(workers) == 2 and all(map(_ignores_ctrl_c, workers)) else []

    workers = wait_for(set_up)
    assert workers, "the two workers did not start"
    return workers


def _ignores_ctrl_c(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    ignored = next(line.split()[1] for line in status.splitlines() if line.startswith("SigIgn:"))
    return bool(int(ignored, 16) & 1 << (signal.SIGINT - 1))


def press_ctrl_c(run: subprocess.Popen[str], presses: int, gap: float) -> None:
    for _ in range(presses):
        os.killpg(run.pid, signal.SIGINT)  # the whole group, as a terminal does
        time.sleep(gap)


@pytest.mark.parametrize(("presses", "gap"), [(2, 0.05), (3, 0.005)])
def test_ctrl_c_again_and_again_ends_the_run_at_once_with_no_worker_left(start_strict_run, presses, gap):
    run = start_strict_run()
    workers = running_workers(run)
    press_ctrl_c(run, presses, gap)
    _, stderr = run.communicate(timeout=30)  # it hung here, waiting for workers that ignore Ctrl-C
    # the later presses land while the run ends: they are ignored, where they printed tracebacks
    assert (run.returncode, stderr) == (130, "hexlint: interrupted\n")
    assert wait_for(lambda: not alive(workers), 5), f"workers {alive(workers)} outlived the run"


def test_ctrl_c_again_and_again_without_workers(start_strict_run):
    run = start_strict_run("1")
    time.sleep(0.5)
    assert run.poll() is None, "the run ended before it could be interrupted"
    press_ctrl_c(run, 3, 0.005)
    _, stderr = run.communicate(timeout=30)
    assert (run.returncode, stderr) == (130, "hexlint: interrupted\n")


def test_workers_die_with_a_killed_parent(start_strict_run):
    run = start_strict_run()
    workers = running_workers(run)  # past the set-up's own check of its parent: only the kernel can end them now
    time.sleep(0.1)  # each is busy with a library
    run.kill()  # as an out-of-memory killer or a caller's timeout does: the parent alone
    run.communicate(timeout=30)
    assert wait_for(lambda: not alive(workers), 10), f"workers {alive(workers)} outlived their parent"


def test_a_killed_worker_is_a_one_line_error(start_strict_run):
    run = start_strict_run()
    workers = running_workers(run)
    os.kill(workers[0], signal.SIGKILL)
    _, stderr = run.communicate(timeout=30)
    assert run.returncode == 2
    assert stderr.count("\n") == 1 and "worker process" in stderr and "--jobs 1" in stderr
    assert wait_for(lambda: not alive(workers), 5)


@pytest.mark.parametrize("what_fails", ["semaphores", "fork"])
def test_without_workers_to_be_had_the_libraries_are_audited_one_after_another(monkeypatch, what_fails):
    libraries = [str(path) for path in CORE_LIBRARIES]
    one_after_another = run_hexlint("--jobs", "1", "--spills", "--strict", *libraries)

    def no_semaphores(*arguments, **keywords):
        raise PermissionError(13, "Permission denied")  # what a machine without /dev/shm says

    def no_fork():
        raise BlockingIOError(11, "Resource temporarily unavailable")  # too many processes

    if what_fails == "semaphores":
        monkeypatch.setattr("concurrent.futures.ProcessPoolExecutor", no_semaphores)
    else:
        monkeypatch.setattr(os, "fork", no_fork)
    monkeypatch.setattr("hexlint.binary.run.PARALLEL_MIN_BYTES", 0)
    at_once = run_hexlint("--jobs", "2", "--spills", "--strict", *libraries)
    assert one_after_another.stdout
    assert (at_once.status, at_once.stdout, at_once.stderr) == (
        one_after_another.status,
        one_after_another.stdout,
        one_after_another.stderr,
    )


def test_a_worker_ignores_ctrl_c_and_is_killed_with_its_parent():
    """What the worker set-up asks of the kernel, read back in a forked child: the parent's death signal (else a
    worker busy with a large library outlives a killed parent and holds the caller's pipes)."""
    import ctypes

    from hexlint.binary.run import _worker_setup

    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # the child reports through the pipe
        try:
            _worker_setup(os.getppid())
            death_signal = ctypes.c_int(0)
            ctypes.CDLL(None, use_errno=True).prctl(2, ctypes.byref(death_signal))  # PR_GET_PDEATHSIG
            ignores_ctrl_c = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            os.write(writer, f"{death_signal.value} {ignores_ctrl_c}".encode())
        finally:
            os._exit(0)
    os.close(writer)
    report = os.read(reader, 100).decode()
    os.close(reader)
    os.waitpid(child, 0)
    assert report == f"{int(signal.SIGKILL)} True"


def test_ctrl_c_while_the_pool_is_waited_on_is_raised_where_no_lock_is_held():
    from hexlint.binary.run import _DeferredInterrupt

    heard: list[int] = []

    def handler(number, _frame):
        heard.append(number)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, handler)
    try:
        with pytest.raises(KeyboardInterrupt), _DeferredInterrupt() as interrupt:
            os.kill(os.getpid(), signal.SIGINT)  # run at the next bytecode: noted, not raised mid-way
            assert wait_for(lambda: interrupt.pressed, 5) and heard == []
            interrupt.check()
        assert heard == [signal.SIGINT]  # the process's own handler hears of the press on the way out
        assert signal.getsignal(signal.SIGINT) is handler
    finally:
        signal.signal(signal.SIGINT, previous)


def test_an_ignored_ctrl_c_stays_ignored_while_the_pool_is_waited_on():
    from hexlint.binary.run import _DeferredInterrupt

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with _DeferredInterrupt() as interrupt:
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            interrupt.check()  # nothing was pressed that the process listens to
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
