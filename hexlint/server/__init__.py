"""`hexlint server`: a Language Server Protocol server over stdio, publishing hexlint's findings on the C/C++ files
an editor has open (hexlint/server/lsp.py). It needs pygls, the optional extra `server`; this module imports none of
it until the server starts, and no other run imports this package.
"""

from __future__ import annotations

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import TextIO

EXIT_ERROR = 2
SERVER_PACKAGES = ("pygls", "lsprotocol", "cattrs", "attrs", "attr")


def build_parser(parser_class: type[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    parser = parser_class(
        prog="hexlint server",
        description="A Language Server Protocol server for editors, over stdin/stdout: hexlint's findings on the "
        "C/C++ files the editor has open (as it types, on save), with quick fixes for the safe fixes. Start it from "
        "the editor, not by hand (see docs/editors.md). Needs hexlint[server]: pip install '.[server]' in the clone.",
    )
    # vscode-languageclient appends --stdio to the command it is given; stdio is the one transport.
    parser.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default, and the only way)")
    return parser


def run(arguments: Sequence[str], parser_class: type[argparse.ArgumentParser], stderr: TextIO) -> int:
    build_parser(parser_class).parse_args(arguments)
    try:
        from hexlint.server.lsp import serve
    except ImportError as error:
        missing = (getattr(error, "name", None) or "").split(".")[0]
        if missing not in SERVER_PACKAGES:
            raise
        stderr.write(
            f"hexlint: error: `hexlint server` needs the `server` extra (pygls; {missing} is missing): install "
            "hexlint[server] (pip install '.[server]' in hexlint's clone)\n"
        )
        return EXIT_ERROR
    return serve()
