"""`hexlint server`: byte places to LSP positions, linting a buffer, and real LSP sessions with pygls's client driving
`python -m hexlint server` over stdio (open a kernel file, get its findings, apply the quick fix, get none)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hexlint.server.buffers import fixed_buffer, lint_buffer, minimal_edit, own_fix
from hexlint.server.positions import UTF8, UTF16, UTF32, LineIndex, span_range

ROOT = Path(__file__).resolve().parent.parent
SESSION_TIMEOUT = 30

# A kernel file (under htp/) with a misaligned macro (HX110, a safe fix; a text rule) and a defensive NULL check
# (HX104, an unsafe fix; a source rule: libclang's findings arrive too). The comment before the check holds
# characters of 2, 3 and 4 UTF-8 bytes: its column in bytes, code points and UTF-16 units all differ.
KERNEL = """\
#include <stddef.h>
#include <stdint.h>

struct htp_ops_context;

#define HTP_ROW_PREAMBLE(t)            \\
    const uint32_t ne0 = (t)->ne[0];  \\
    const uint32_t ne1 = (t)->ne[1];     \\
    const size_t   nb1 = (t)->nb[1];

int op_entry(struct htp_ops_context *octx) {
    /* é€😀 */ if (octx == NULL) {
        return -1;
    }
    return 0;
}
"""
NULL_CHECK_LINE = 11  # 0-based
NULL_CHECK_PREFIX = "    /* é€😀 */ if ("


def kernel_tree(root: Path) -> Path:
    (root / "htp").mkdir(parents=True)
    path = root / "htp" / "kernel.c"
    path.write_text(KERNEL, encoding="utf-8")
    return path


# ---------------------------------------------------------------- positions


def test_a_column_after_multibyte_characters_is_counted_in_the_agreed_encoding() -> None:
    data = KERNEL.encode("utf-8")
    byte_column = len(NULL_CHECK_PREFIX.encode("utf-8"))
    expected = {
        UTF8: byte_column,
        UTF32: len(NULL_CHECK_PREFIX),
        UTF16: len(NULL_CHECK_PREFIX.encode("utf-16-le")) // 2,
    }
    assert len(set(expected.values())) == 3  # the fixture tells the three apart
    for encoding, character in expected.items():
        assert LineIndex(data, encoding).position(NULL_CHECK_LINE, byte_column) == (NULL_CHECK_LINE, character)


def test_offsets_and_line_ends_ignore_the_carriage_return_of_crlf() -> None:
    index = LineIndex(b"ab\r\ncd\r\n")
    assert index.line_end(0) == (0, 2)
    assert index.offset_position(3) == (0, 2)  # between \r and \n: the end of the line
    assert index.offset_position(4) == (1, 0)
    assert index.end() == (2, 0)


def test_places_outside_the_buffer_are_clamped_into_it() -> None:
    index = LineIndex(b"one\ntwo")
    assert index.position(0, 99) == (0, 3)
    assert index.position(7, 0) == (1, 3)
    assert index.offset_position(99) == (1, 3)
    assert index.position(-1, 5) == (0, 0)


def test_span_ranges_end_at_the_end_column_or_at_the_end_of_the_line() -> None:
    index = LineIndex(b"int x;\nint yy;\n")
    assert span_range(index, 2, 5, 2, 7) == ((1, 4), (1, 6))  # the end column is exclusive, as libclang's
    assert span_range(index, 2, 5, None, None) == ((1, 4), (1, 7))
    assert span_range(index, 1, 1, 2, None) == ((0, 0), (1, 7))
    assert span_range(index, None, None, None, None) == ((0, 0), (0, 0))


def test_an_undecodable_byte_counts_as_one_character() -> None:
    assert LineIndex(b"\xff\xfex = 1;").position(0, 3) == (0, 3)


@given(st.text(max_size=30), st.text(max_size=30))
def test_the_minimal_edit_turns_the_old_text_into_the_new_on_character_boundaries(old: str, new: str) -> None:
    old_bytes, new_bytes = old.encode("utf-8", "surrogatepass"), new.encode("utf-8", "surrogatepass")
    edit = minimal_edit(old_bytes, new_bytes)
    if old_bytes == new_bytes:
        assert edit is None
        return
    assert edit is not None
    assert old_bytes[: edit.start] + edit.replacement + old_bytes[edit.end :] == new_bytes
    for part in (old_bytes[: edit.start], old_bytes[edit.end :], edit.replacement):
        part.decode("utf-8", "surrogatepass")  # whole characters: the ends convert to exact positions


# ---------------------------------------------------------------- one buffer, in process


def test_the_buffer_is_linted_not_the_file_on_disk(tmp_path: Path) -> None:
    path = kernel_tree(tmp_path)
    on_disk = lint_buffer(str(path), path.read_bytes())
    assert on_disk.error is None
    assert sorted(diagnostic.code for diagnostic in on_disk.diagnostics) == ["HX104", "HX110"]
    fixes = [fix for fix in (own_fix(diagnostic, str(path)) for diagnostic in on_disk.diagnostics) if fix]
    assert [fix.safe for fix in fixes] == [True]  # HX104's fix is unsafe: not offered
    fixed = lint_buffer(str(path), fixed_buffer(on_disk.data, fixes))
    assert [diagnostic.code for diagnostic in fixed.diagnostics] == ["HX104"]
    assert path.read_text(encoding="utf-8") == KERNEL


def test_a_run_gives_back_its_syntax_trees_once_released(tmp_path: Path) -> None:
    """A long-lived server must not keep each run's trees (the engine freezes them out of the cyclic collector)."""
    import gc

    from clang import cindex

    from hexlint.engine import release_run_memory

    path = kernel_tree(tmp_path)
    for _ in range(2):
        assert lint_buffer(str(path), path.read_bytes()).diagnostics
    release_run_memory()
    assert gc.get_freeze_count() == 0
    assert not [item for item in gc.get_objects() if isinstance(item, cindex.TranslationUnit)]


def test_a_bad_configuration_is_returned_as_an_error_not_raised(tmp_path: Path) -> None:
    path = kernel_tree(tmp_path)
    (tmp_path / "hexlint.toml").write_text("select = [\n", encoding="utf-8")
    linted = lint_buffer(str(path), path.read_bytes())
    assert linted.error is not None and "hexlint.toml" in linted.error
    assert linted.diagnostics == ()


def test_buffers_are_linted_through_the_persistent_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HEXLINT_NO_CACHE", raising=False)
    monkeypatch.setenv("HEXLINT_CACHE_DIR", str(tmp_path / "cache"))
    path = kernel_tree(tmp_path / "tree")
    first, second = (lint_buffer(str(path), KERNEL.encode("utf-8")) for _ in range(2))
    assert (first.cache_outcome, first.parsed_units) == ("miss", 1)
    assert (second.cache_outcome, second.parsed_units) == ("hit", 0)
    assert second.diagnostics == first.diagnostics
    edited = lint_buffer(str(path), KERNEL.replace("octx == NULL", "0").encode("utf-8"))
    assert edited.cache_outcome == "miss"  # keyed by the buffer's text, not the file's
    assert [diagnostic.code for diagnostic in edited.diagnostics] == ["HX110"]


def test_without_pygls_the_server_says_what_to_install_in_one_line() -> None:
    code = "import sys; sys.modules['pygls'] = None; from hexlint.cli import main; sys.exit(main(['server']))"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60
    )
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("hexlint: error: ")
    assert "hexlint[server]" in lines[0]


# ---------------------------------------------------------------- LSP sessions

try:
    from lsprotocol import types as lsp_types
    from pygls.lsp.client import LanguageClient
except ImportError:  # pragma: no cover - the dev extra has pygls
    lsp_types = LanguageClient = None
needs_pygls = pytest.mark.skipif(LanguageClient is None, reason="pygls is not installed (the dev extra has it)")


@needs_pygls
def test_code_action_kinds_asked_for_are_matched_by_value_and_by_parent() -> None:
    from hexlint.server.lsp import FIX_ALL_KIND, _wanted

    quick_fix, fix_all = lsp_types.CodeActionKind.QuickFix, lsp_types.CodeActionKind.SourceFixAll
    assert _wanted(quick_fix, None) and _wanted(FIX_ALL_KIND, [])
    assert _wanted(quick_fix, ["quickfix"]) and _wanted(quick_fix, [quick_fix])
    assert _wanted(FIX_ALL_KIND, [fix_all]) and _wanted(FIX_ALL_KIND, ["source"])
    assert not _wanted(quick_fix, ["source.fixAll"]) and not _wanted(FIX_ALL_KIND, [quick_fix])


class Session:
    """A pygls client talking to `python -m hexlint server`, with what the server sent it."""

    def __init__(self, environment: dict[str, str], cwd: Path) -> None:
        self.client = LanguageClient("hexlint-tests", "1")
        self.environment = environment
        self.cwd = cwd
        self.published: asyncio.Queue = asyncio.Queue()
        self.published_uris: list[str] = []
        self.messages: list[tuple[str, str]] = []  # (method, text) of showMessage and logMessage

        @self.client.feature(lsp_types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: lsp_types.PublishDiagnosticsParams) -> None:
            self.published_uris.append(params.uri)
            self.published.put_nowait(params)

        @self.client.feature(lsp_types.WINDOW_SHOW_MESSAGE)
        def shown(params: lsp_types.ShowMessageParams) -> None:
            self.messages.append(("show", params.message))

        @self.client.feature(lsp_types.WINDOW_LOG_MESSAGE)
        def logged(params: lsp_types.LogMessageParams) -> None:
            self.messages.append(("log", params.message))

    async def start(self) -> None:
        await self.client.start_io(
            sys.executable, "-m", "hexlint", "server", "--stdio", env=self.environment, cwd=str(self.cwd)
        )
        await self.client.initialize_async(
            lsp_types.InitializeParams(
                capabilities=lsp_types.ClientCapabilities(), root_uri=self.cwd.as_uri(), process_id=os.getpid()
            )
        )
        self.client.initialized(lsp_types.InitializedParams())

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()

    async def publication(self, uri: str) -> lsp_types.PublishDiagnosticsParams:
        while True:
            params = await asyncio.wait_for(self.published.get(), SESSION_TIMEOUT)
            if params.uri == uri:
                return params

    async def diagnostics(self, uri: str) -> list:
        return list((await self.publication(uri)).diagnostics)

    def change(self, uri: str, version: int, changes: list) -> None:
        self.client.text_document_did_change(
            lsp_types.DidChangeTextDocumentParams(
                text_document=lsp_types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=changes,
            )
        )

    def open(self, path: Path, text: str) -> str:
        uri = path.as_uri()
        self.client.text_document_did_open(
            lsp_types.DidOpenTextDocumentParams(
                lsp_types.TextDocumentItem(uri=uri, language_id="c", version=1, text=text)
            )
        )
        return uri

    async def actions(self, uri: str, at: lsp_types.Range, only: list[str] | None = None) -> list:
        params = lsp_types.CodeActionParams(
            text_document=lsp_types.TextDocumentIdentifier(uri=uri),
            range=at,
            context=lsp_types.CodeActionContext(diagnostics=[], only=only),
        )
        return list(await self.client.text_document_code_action_async(params) or [])


def server_environment(cache_dir: Path | None = None) -> dict[str, str]:
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    if cache_dir is not None:
        environment.pop("HEXLINT_NO_CACHE", None)
        environment["HEXLINT_CACHE_DIR"] = str(cache_dir)
    return environment


def apply_edits(text: str, edits: list) -> str:
    """TextEdits of one document (UTF-16 positions) applied as an editor does: all against the same text."""
    lines = text.splitlines(keepends=True)

    def offset(position: lsp_types.Position) -> int:
        before = "".join(lines[: position.line])
        line = lines[position.line] if position.line < len(lines) else ""
        units, characters = 0, 0
        while units < position.character and characters < len(line):
            units += 2 if ord(line[characters]) > 0xFFFF else 1
            characters += 1
        return len(before) + characters

    for edit in sorted(edits, key=lambda item: (item.range.start.line, item.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
        lines = text.splitlines(keepends=True)
    return text


def run_session(test, environment: dict[str, str], cwd: Path) -> None:
    async def main() -> None:
        session = Session(environment, cwd)
        await session.start()
        try:
            await test(session)
        finally:
            await session.stop()

    asyncio.run(main())


@needs_pygls
def test_a_session_publishes_findings_offers_the_safe_fix_and_clears_once_applied(tmp_path: Path) -> None:
    path = kernel_tree(tmp_path / "a tree")  # a space: quoted in the URI, which the server must see through
    cache_dir = tmp_path / "cache"

    async def session_test(session: Session) -> None:
        uri = session.open(path, KERNEL)
        found = {diagnostic.code: diagnostic for diagnostic in await session.diagnostics(uri)}
        assert sorted(found) == ["HX104", "HX110"]
        assert {diagnostic.source for diagnostic in found.values()} == {"hexlint"}
        null_check = found["HX104"]
        utf16_column = len(NULL_CHECK_PREFIX.encode("utf-16-le")) // 2
        assert (null_check.range.start.line, null_check.range.start.character) == (NULL_CHECK_LINE, utf16_column)
        assert null_check.range.end.character == utf16_column + len("octx")
        macro = found["HX110"]
        assert macro.range.start.line == 5 and macro.range.end.line == 8
        assert [item.location.range.start.line for item in macro.related_information] == [5, 6]
        assert all(item.location.uri == uri for item in macro.related_information)

        everywhere = lsp_types.Range(lsp_types.Position(0, 0), lsp_types.Position(20, 0))
        actions = await session.actions(uri, everywhere)
        quick_fixes = [action for action in actions if action.kind == lsp_types.CodeActionKind.QuickFix]
        assert [action.diagnostics[0].code for action in quick_fixes] == ["HX110"]  # HX104's unsafe fix is not offered
        assert [action.kind for action in actions if action not in quick_fixes] == ["source.fixAll.hexlint"]
        assert await session.actions(uri, null_check.range) == [actions[-1]]  # only fix-all reaches that line
        only_fix_all = await session.actions(uri, everywhere, only=["source.fixAll"])  # as an editor's fix on save
        assert [action.kind for action in only_fix_all] == ["source.fixAll.hexlint"]

        fixed = apply_edits(KERNEL, quick_fixes[0].edit.changes[uri])
        backslashes = {line.index("\\") for line in fixed.splitlines() if line.endswith("\\")}
        assert len(backslashes) == 1
        assert apply_edits(KERNEL, actions[-1].edit.changes[uri]) == fixed  # fix-all: the one safe fix, as one edit
        # The edits as incremental changes, bottom up so each range still means the text it was computed on.
        edits = sorted(
            quick_fixes[0].edit.changes[uri], key=lambda edit: (edit.range.start.line, edit.range.start.character)
        )
        session.change(
            uri,
            2,
            [
                lsp_types.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text)
                for edit in reversed(edits)
            ],
        )
        assert [diagnostic.code for diagnostic in await session.diagnostics(uri)] == ["HX104"]
        assert path.read_text(encoding="utf-8") == KERNEL  # the buffer was linted, the file is untouched
        assert [action.kind for action in await session.actions(uri, everywhere)] == []

        # A burst of changes is linted once, as the last one left the buffer: the misaligned macro back, then gone.
        session.change(uri, 3, [lsp_types.TextDocumentContentChangeWholeDocument(text=KERNEL)])
        session.change(uri, 4, [lsp_types.TextDocumentContentChangeWholeDocument(text=fixed)])
        published = await session.publication(uri)
        assert published.version == 4
        assert [diagnostic.code for diagnostic in published.diagnostics] == ["HX104"]

        session.client.text_document_did_close(
            lsp_types.DidCloseTextDocumentParams(text_document=lsp_types.TextDocumentIdentifier(uri=uri))
        )
        assert await session.diagnostics(uri) == []
        # The persistent cache holds the runs; the log says what it did.
        assert list(cache_dir.rglob("*.json"))
        assert any("cache miss" in text for method, text in session.messages if method == "log")

    run_session(session_test, server_environment(cache_dir), tmp_path)


@needs_pygls
def test_a_bad_configuration_is_shown_to_the_user_and_the_server_goes_on(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    path = kernel_tree(tree)
    (tree / "hexlint.toml").write_text("select = [\n", encoding="utf-8")
    other = tmp_path / "notes.txt"
    other.write_text("not C\n", encoding="utf-8")

    async def session_test(session: Session) -> None:
        session.open(other, "not C\n")  # not a C/C++ file: left alone
        uri = session.open(path, KERNEL)
        assert await session.diagnostics(uri) == []  # nothing to show but why
        shown = [text for method, text in session.messages if method == "show"]
        assert len(shown) == 1 and "hexlint.toml" in shown[0], session.messages
        assert shown[0].startswith("hexlint: ")
        session.change(uri, 2, [lsp_types.TextDocumentContentChangeWholeDocument(text=KERNEL + "\n")])
        assert await session.diagnostics(uri) == []
        assert len([method for method, _ in session.messages if method == "show"]) == 1  # the same error, not again
        (tree / "hexlint.toml").write_text('select = ["HX110"]\n', encoding="utf-8")
        session.client.text_document_did_save(
            lsp_types.DidSaveTextDocumentParams(text_document=lsp_types.TextDocumentIdentifier(uri=uri))
        )
        assert [diagnostic.code for diagnostic in await session.diagnostics(uri)] == ["HX110"]
        assert other.as_uri() not in session.published_uris

    run_session(session_test, server_environment(), tmp_path)


@needs_pygls
def test_the_server_answers_initialize_with_its_capabilities_and_nothing_else_on_stdout(tmp_path: Path) -> None:
    """An initialize request by hand: every byte on stdout belongs to a framed JSON-RPC message."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    exit_body = json.dumps({"jsonrpc": "2.0", "method": "exit"})
    framed = "".join(f"Content-Length: {len(text)}\r\n\r\n{text}" for text in (body, exit_body))
    result = subprocess.run(
        [sys.executable, "-m", "hexlint", "server"],
        input=framed.encode(),
        capture_output=True,
        cwd=tmp_path,
        env=server_environment(),
        timeout=60,
    )
    headers, _, rest = result.stdout.partition(b"\r\n\r\n")
    fields = dict(line.split(b": ", 1) for line in headers.split(b"\r\n"))
    length = int(fields[b"Content-Length"])
    reply = json.loads(rest[:length])
    assert rest[length:] == b""  # nothing after the one reply
    assert reply["result"]["serverInfo"]["name"] == "hexlint"
    assert reply["result"]["capabilities"]["codeActionProvider"]["codeActionKinds"] == [
        "quickfix",
        "source.fixAll.hexlint",
    ]
