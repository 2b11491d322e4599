"""The language server (pygls): hexlint's findings on the C/C++ files an editor has open, and their safe fixes.

- didOpen, didSave: lint now; didChange: lint once the edits pause (DEBOUNCE_SECONDS); didClose: clear.
- The text linted is the editor's buffer (hexlint/server/buffers.py); runs go one at a time to one worker thread, off
  the event loop, so the server keeps reading messages while libclang parses. A run's findings are published only
  if the buffer is still the one it linted (a later change has a run of its own coming).
- textDocument/codeAction: a quick fix per finding with a safe fix, and "fix all" (source.fixAll.hexlint), both
  as edits of the buffer the findings were computed on; none while that buffer has changed since.
- Every failure (a bad configuration, a bug) is told to the client (window/showMessage once, window/logMessage
  always); the server goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from hexlint import __version__
from hexlint.core import Diagnostic, Fix, Severity, Span
from hexlint.discover import is_source
from hexlint.engine import release_run_memory
from hexlint.server.buffers import (
    BufferLint,
    fixed_buffer,
    lint_buffer,
    minimal_edit,
    own_fix,
    same_file,
)
from hexlint.server.positions import UTF8, UTF16, UTF32, LineIndex, span_range

DEBOUNCE_SECONDS = 0.3
SOURCE = "hexlint"
FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.hexlint"

_SEVERITIES = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}
_ENCODINGS = {
    types.PositionEncodingKind.Utf8: UTF8,
    types.PositionEncodingKind.Utf16: UTF16,
    types.PositionEncodingKind.Utf32: UTF32,
}


@dataclass
class _Document:
    """What the server knows of one open document: its last run, and what it already told the user about it."""

    path: str
    linted: BufferLint | None = None
    # Each finding of the last run with the LSP diagnostic published for it (code actions name the same ones).
    published: list[tuple[Diagnostic, types.Diagnostic]] = field(default_factory=list)
    timer: asyncio.TimerHandle | None = None
    notes_told: set[str] = field(default_factory=set)  # each note is logged once per document
    error_shown: str | None = None  # the error last shown, so a run failing alike does not pop it up again


class HexlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("hexlint", __version__)
        self.documents: dict[str, _Document] = {}
        # One run at a time: the engine's per-run memos are per process, and two parses of the tree would only
        # compete for the same cores.
        self.runner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hexlint-lint")
        self.tasks: set[asyncio.Task[None]] = set()  # the runs under way (the loop keeps only weak references)

    # ------------------------------------------------------------ messages

    def log(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=f"hexlint: {message}"))

    def show_error(self, document: _Document, message: str) -> None:
        self.log(message, types.MessageType.Error)
        if message != document.error_shown:
            document.error_shown = message
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Error, message=f"hexlint: {message}")
            )

    # ------------------------------------------------------------ runs

    def schedule(self, uri: str, delay: float) -> None:
        document = self.documents.get(uri)
        if document is None:
            return
        if document.timer is not None:
            document.timer.cancel()
        loop = asyncio.get_running_loop()

        def start() -> None:
            task = loop.create_task(self.run_lint(uri))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

        document.timer = loop.call_later(delay, start)

    def buffer_bytes(self, uri: str) -> tuple[bytes, int | None] | None:
        text_document = self.workspace.text_documents.get(unquote(uri))  # pygls keeps them by the unquoted URI
        if text_document is None:
            return None
        return text_document.source.encode("utf-8", "surrogatepass"), text_document.version

    def workspace_root(self) -> str | None:
        root = self.workspace.root_path
        return root if root and os.path.isdir(root) else None

    async def run_lint(self, uri: str) -> None:
        document = self.documents.get(uri)
        buffer = self.buffer_bytes(uri)
        if document is None or buffer is None:
            return
        data, version = buffer
        loop = asyncio.get_running_loop()
        try:
            linted = await loop.run_in_executor(self.runner, lint_buffer, document.path, data, self.workspace_root())
        except RuntimeError:
            return  # shutting down: the runner takes no more work
        if self.documents.get(uri) is not document or self.buffer_bytes(uri) != buffer:
            self.release_memory()
            return  # closed, or changed while it ran: the change's own run publishes
        try:
            self.publish(uri, version, document, linted)
        except Exception as error:  # a bug in the conversion: told, and the next run tries again
            self.show_error(document, f"internal error: {type(error).__name__}: {error}")
        finally:
            self.release_memory()

    def release_memory(self) -> None:
        """Queued behind the run, after its findings are out: the editor does not wait for the collection."""
        with contextlib.suppress(RuntimeError):  # shutting down: the runner takes no more work
            self.runner.submit(release_run_memory)

    def publish(self, uri: str, version: int | None, document: _Document, linted: BufferLint) -> None:
        document.linted = linted
        document.published = []
        if linted.error is not None:
            # Findings of an earlier run would point into text that has changed since: cleared, and the reason shown.
            self.show_error(document, linted.error)
        else:
            document.error_shown = None
            for note in linted.notes:
                if note not in document.notes_told:
                    document.notes_told.add(note)
                    self.log(note)
            if linted.cache_outcome:
                self.log(f"{linted.path}: cache {linted.cache_outcome}, {linted.parsed_units} of {linted.units} parsed")
            converter = _Converter(linted, self.encoding())
            document.published = [(diagnostic, converter.diagnostic(diagnostic)) for diagnostic in linted.diagnostics]
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri, diagnostics=[published for _, published in document.published], version=version
            )
        )

    def encoding(self) -> str:
        return _ENCODINGS.get(self.workspace.position_encoding, UTF16)  # type: ignore[arg-type]

    # ------------------------------------------------------------ code actions

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        document = self.documents.get(uri)
        buffer = self.buffer_bytes(uri)
        if document is None or document.linted is None or buffer is None or buffer[0] != document.linted.data:
            return []  # not linted yet, or changed since: the offsets would land in the wrong place
        linted = document.linted
        index = LineIndex(linted.data, self.encoding())
        wanted = params.context.only
        actions: list[types.CodeAction] = []
        fixes: list[Fix] = []
        for diagnostic, published in document.published:
            fix = own_fix(diagnostic, linted.path)
            if fix is None:
                continue
            fixes.append(fix)
            if not _overlaps(published.range, params.range) or not _wanted(types.CodeActionKind.QuickFix, wanted):
                continue
            edits = [_text_edit(index, edit.start, edit.end, edit.replacement) for edit in fix.edits]
            actions.append(
                types.CodeAction(
                    title=f"{fix.title} ({diagnostic.code})",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[published],
                    is_preferred=True,
                    edit=types.WorkspaceEdit(changes={uri: edits}),
                )
            )
        edit = minimal_edit(linted.data, fixed_buffer(linted.data, fixes)) if fixes else None
        if edit is not None and _wanted(FIX_ALL_KIND, wanted):
            whole = _text_edit(index, edit.start, edit.end, edit.replacement)
            actions.append(
                types.CodeAction(
                    title="hexlint: fix all safely fixable findings",
                    kind=FIX_ALL_KIND,
                    edit=types.WorkspaceEdit(changes={uri: [whole]}),
                )
            )
        return actions


class _Converter:
    """hexlint's findings on one linted buffer as LSP diagnostics. Spans in the buffer's own file are counted in the
    buffer; spans elsewhere (a related host line) in that file on disk, which is what the cross-file rules read."""

    def __init__(self, linted: BufferLint, encoding: str) -> None:
        self.linted = linted
        self.encoding = encoding
        self.indexes: dict[str, LineIndex | None] = {}
        self.own = LineIndex(linted.data, encoding)

    def index_of(self, path: str) -> LineIndex | None:
        if same_file(path, self.linted.path):
            return self.own
        if path not in self.indexes:
            try:
                with open(path, "rb") as handle:
                    self.indexes[path] = LineIndex(handle.read(), self.encoding)
            except OSError:
                self.indexes[path] = None
        return self.indexes[path]

    def range(self, span: Span) -> types.Range:
        index = self.index_of(span.path)
        if index is None:  # a file that cannot be read: its byte columns are the best guess there is
            start = max((span.line or 1) - 1, 0), max((span.column or 1) - 1, 0)
            end = max((span.end_line or span.line or 1) - 1, 0), max((span.end_column or span.column or 1) - 1, 0)
            return _range(start, max(start, end))
        return _range(*span_range(index, span.line, span.column, span.end_line, span.end_column))

    def diagnostic(self, diagnostic: Diagnostic) -> types.Diagnostic:
        related = [
            types.DiagnosticRelatedInformation(
                location=types.Location(
                    uri=from_fs_path(os.path.abspath(item.span.path)) or "", range=self.range(item.span)
                ),
                message=item.message,
            )
            for item in diagnostic.related
            if item.span.line is not None
        ]
        return types.Diagnostic(
            range=self.range(diagnostic.span),
            message=diagnostic.message,
            severity=_SEVERITIES.get(diagnostic.severity, types.DiagnosticSeverity.Warning),
            code=diagnostic.code,
            source=SOURCE,
            related_information=related or None,
        )


def _text_edit(index: LineIndex, start: int, end: int, replacement: bytes) -> types.TextEdit:
    text = replacement.decode("utf-8", "surrogateescape")
    return types.TextEdit(range=_range(index.offset_position(start), index.offset_position(end)), new_text=text)


def _range(start: tuple[int, int], end: tuple[int, int]) -> types.Range:
    return types.Range(start=types.Position(*start), end=types.Position(*end))


def _overlaps(first: types.Range, second: types.Range) -> bool:
    """Whether two ranges share a place; an empty range (a cursor) touching the other counts."""

    def key(position: types.Position) -> tuple[int, int]:
        return position.line, position.character

    return key(first.start) <= key(second.end) and key(second.start) <= key(first.end)


def _wanted(kind: str, only: object) -> bool:
    """Whether the client asked for actions of `kind`: `only` lists kinds and their parents (source.fixAll)."""
    if not only:
        return True
    name = str(getattr(kind, "value", kind))  # an enum member or its plain string: compared by value
    asked = [str(getattr(item, "value", item)) for item in only]  # type: ignore[attr-defined]
    return any(name == item or name.startswith(f"{item}.") for item in asked)


def create_server() -> HexlintServer:
    server = HexlintServer()

    def track(uri: str) -> str | None:
        """The file an open document is, when it is a C/C++ file on disk; None for the others (left alone)."""
        path = to_fs_path(uri) if uri.startswith("file:") else None
        if path is None or not is_source(path):
            return None
        server.documents.setdefault(uri, _Document(path))
        return path

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        if track(params.text_document.uri) is not None:
            server.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        server.schedule(params.text_document.uri, DEBOUNCE_SECONDS)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        # Only the saved file: another open file's cross-file findings may change too, but relinting every open file
        # on each save would parse the tree once per file; each is linted again at its own next change.
        server.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        document = server.documents.pop(params.text_document.uri, None)
        if document is None:
            return
        if document.timer is not None:
            document.timer.cancel()
        server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[])
        )

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]),
    )
    def code_action(params: types.CodeActionParams) -> list[types.CodeAction]:
        try:
            return server.code_actions(params)
        except Exception as error:  # a bug: no actions, and the user is told
            server.log(f"internal error: {type(error).__name__}: {error}", types.MessageType.Error)
            return []

    @server.feature(types.SHUTDOWN)
    def shutdown(params: None) -> None:
        server.runner.shutdown(wait=False, cancel_futures=True)

    return server


def serve() -> int:
    """Serve over stdin/stdout until the client says exit. stdout carries the protocol: anything else that writes to
    it (a stray print) goes to stderr instead, which editors show as the server's log."""
    import sys

    protocol_out = sys.stdout.buffer
    sys.stdout = sys.stderr
    create_server().start_io(sys.stdin.buffer, protocol_out)
    return 0
