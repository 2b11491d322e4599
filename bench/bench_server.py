#!/usr/bin/env python3
"""How long an editor waits for `hexlint server`: a real LSP session (pygls's client) on one file of a tree.

Usage:
    PYTHONPATH=. python bench/bench_server.py [--rounds N] FILE

FILE is opened in the editor's place (e.g. a kernel file of an upstream ggml-hexagon tree; set CPATH to its include
directories as for a CLI run). Each round starts a new server with an empty cache directory of its own, then times:

  start        spawning `python -m hexlint server` until it answers `initialize` (imports, pygls)
  open, cold   didOpen until the file's diagnostics arrive: the tree parsed as context, nothing in the cache
  change       a didChange (a comment appended) until the new diagnostics arrive, the debounce included: the buffer
               differs from every cached run, so the tree is parsed again
  open, warm   a new server on the same cache, didOpen of the file as it is on disk until its diagnostics arrive

The best round of each is shown, with the findings count and the server's peak memory (its ru_maxrss, read from
/proc while it runs).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parent.parent


class Timed:
    def __init__(self, cache_dir: str) -> None:
        self.client = LanguageClient("bench", "1")
        self.published: asyncio.Queue = asyncio.Queue()
        self.log: list[str] = []
        self.environment = {**os.environ, "PYTHONPATH": str(ROOT), "HEXLINT_CACHE_DIR": cache_dir}
        self.environment.pop("HEXLINT_NO_CACHE", None)

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams) -> None:
            self.published.put_nowait(params)

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def logged(params: types.LogMessageParams) -> None:
            self.log.append(params.message)

    async def start(self, cwd: str) -> float:
        began = time.perf_counter()
        await self.client.start_io(sys.executable, "-m", "hexlint", "server", env=self.environment, cwd=cwd)
        await self.client.initialize_async(
            types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=Path(cwd).as_uri())
        )
        self.client.initialized(types.InitializedParams())
        return time.perf_counter() - began

    async def until_published(self, send) -> tuple[float, int]:
        began = time.perf_counter()
        send()
        params = await asyncio.wait_for(self.published.get(), 600)
        return time.perf_counter() - began, len(params.diagnostics)

    def peak_kib(self) -> int:
        process = self.client._server  # the server's process, for its memory
        try:
            with open(f"/proc/{process.pid}/status") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return 0

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


async def one_round(path: Path) -> dict[str, tuple[float, int]]:
    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    uri = path.as_uri()
    cwd = str(path.parent)
    item = types.TextDocumentItem(uri=uri, language_id="c", version=1, text=text)
    times: dict[str, tuple[float, int]] = {}
    with tempfile.TemporaryDirectory(prefix="hexlint-bench-server-") as cache_dir:
        first = Timed(cache_dir)
        times["start"] = (await first.start(cwd), 0)
        times["open, cold"] = await first.until_published(
            lambda: first.client.text_document_did_open(types.DidOpenTextDocumentParams(item))
        )
        change = types.TextDocumentContentChangeWholeDocument(text=text + "\n// edited\n")
        times["change"] = await first.until_published(
            lambda: first.client.text_document_did_change(
                types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(version=2, uri=uri), [change])
            )
        )
        peak = first.peak_kib()
        await first.stop()
        second = Timed(cache_dir)
        await second.start(cwd)
        times["open, warm"] = await second.until_published(
            lambda: second.client.text_document_did_open(types.DidOpenTextDocumentParams(item))
        )
        await second.stop()
    times["peak MiB"] = (peak / 1024, 0)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    rounds = [asyncio.run(one_round(options.file.resolve())) for _ in range(options.rounds)]
    print(f"{options.file} ({options.rounds} rounds, best of each)")
    for name in rounds[0]:
        best = min(rounds, key=lambda times: times[name][0])[name]
        if name == "peak MiB":
            print(f"  {name:<12} {max(times[name][0] for times in rounds):8.0f}")
        else:
            print(f"  {name:<12} {best[0]:8.2f} s" + (f"  ({best[1]} findings)" if name != "start" else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
