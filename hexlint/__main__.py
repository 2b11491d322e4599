"""The process entry point: the `hexlint` console script and `python -m hexlint` both run `run()`."""

import gc
import signal
import sys


def run() -> int:
    """hexlint.cli.main in a process of its own, tuned for a short life.

    A lint run allocates mostly long-lived or acyclic data, so the cyclic collector runs rarely (as mypy does), and
    what the imports built is frozen: neither the collections during the run nor the one at exit walk it again.
    Together ~3 ms of a ~26 ms pre-commit run. Done here, not in hexlint.cli, so that importing hexlint leaves the
    host process's collector alone. So is Ctrl-C: the first press interrupts the run, the later ones are ignored
    while it ends (stopping workers, saying `hexlint: interrupted`), where they would print tracebacks.
    """
    gc.set_threshold(50_000, 20, 20)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # left alone where it is ignored (nohup, &)
        signal.signal(signal.SIGINT, _interrupt_once)
    from hexlint.cli import main

    gc.freeze()
    return main()


def _interrupt_once(signal_number: int, frame: object) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(run())
