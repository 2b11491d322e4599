"""Parsing C and C++ with libclang: flags, include dirs, stand-in headers, and clang's errors turned into HX002.

Only hexlint/c/ imports clang.cindex.
"""

from __future__ import annotations

import functools
import json
import os
import shlex
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import clang.cindex as cindex

from hexlint.c.idl import generated_include_dir

# The settings and roles of a parse live in a module of their own, without libclang: a run the cache answers never
# loads it. Re-exported here for the front end's users.
from hexlint.c.settings import (  # noqa: F401
    ARCHES,
    C_SUFFIXES,
    CXX_SUFFIXES,
    HOST,
    KERNEL,
    KERNEL_DIR_NAMES,
    ParseSettings,
    classify,
    is_cxx,
)
from hexlint.core import Diagnostic, Related, Span

# Let libclang continue after a missing header so rules still see the rest of the file.
_KEEP_GOING = 0x200

# clang's parser recurses once per nesting level (parentheses, unary operators, `if` chains ...), a few KiB a level.
# libclang parses on a thread of its own with an 8 MiB stack, which ~1,250 nested parentheses overflow (SIGSEGV, no
# message). LIBCLANG_NOTHREADS makes it parse on the calling thread, and hexlint parses on threads with this stack
# (address space only: the pages a parse never touches are never allocated).
PARSE_STACK_BYTES = 512 << 20
os.environ.setdefault("LIBCLANG_NOTHREADS", "1")
# Measured (libclang 22): a level of parentheses takes ~6.5 KiB of stack, but clang stops at 2,048 of them
# (-fbracket-depth, an error: HX002), ~14 MiB; unbracketed chains take less a level and have no limit: ~1.6 KiB a
# unary `-`, ~1.2 KiB an `if (x)`, so a 512 MiB stack holds ~300,000 levels. A file with a stretch of code holding
# none of `;` `,` `{` `}` (which end an expression's or a statement's recursion) longer than this (a tenth of
# that) is first parsed in a child process: if libclang crashes there, the file is an HX002 and the run goes on.
DEEP_STRETCH_BYTES = 32 << 10
_STUBS_DIR = Path(__file__).parent / "stubs"
_SDK_INCLUDE_SUBDIRS = (
    "incs",
    "incs/stddef",
    "ipc/fastrpc/incs",
    "ipc/fastrpc/rpcmem/inc",
    "ipc/fastrpc/remote/ship/hexagon_toolv87_v73",
    "rtos/qurt/computev73/include/qurt",
    "rtos/qurt/computev73/include/posix",
    "utils/examples",
)


class InputError(Exception):
    """A file hexlint cannot read at all; the CLI prints it as one line and exits 2."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass
class ParsedUnit:
    path: str
    role: str
    translation_unit: cindex.TranslationUnit | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    arguments: tuple[str, ...] = ()
    unsaved: tuple[tuple[str, bytes], ...] = ()  # the text libclang read instead of the disk (stdin), by file name

    @property
    def usable(self) -> bool:
        return self.translation_unit is not None


def builtin_include_dir() -> Path:
    """clang's builtin headers (stdint.h, hexagon_types.h, hvx_hexagon_protos.h ...) shipped by libclang-ng."""
    return Path(cindex.__file__).parent / "native" / "resource" / "include"


def stubs_dir() -> Path:
    return _STUBS_DIR


def tree_include_dirs(path: str | os.PathLike[str], max_levels: int = 6) -> list[str]:
    """Include dirs a ggml tree's build adds: the file's dir, an `htp` dir beside it, `include/` and `src/` above."""
    start = Path(path).resolve().parent
    found: list[Path] = [start]
    for name in KERNEL_DIR_NAMES:
        if (start / name).is_dir():
            found.append(start / name)
    for level, directory in enumerate([start, *start.parents]):
        if level > max_levels:
            break
        if (directory / "include").is_dir():
            found.append(directory / "include")
        if directory.name == "src":
            found.append(directory)
        if (directory / ".git").exists():
            break
    unique: list[str] = []
    for directory in found:
        if str(directory) not in unique:
            unique.append(str(directory))
    return unique


@functools.lru_cache(maxsize=256)
def interface_header_dirs(directories: tuple[str, ...]) -> tuple[str, ...]:
    """Cache dirs with the qaic-style header of each FastRPC `.idl` in these dirs whose header the tree lacks."""
    found = []
    for directory in directories:
        for idl_path in sorted(Path(directory).glob("*.idl")):
            header = idl_path.stem + ".h"
            if any((Path(other) / header).is_file() for other in directories):
                continue
            generated = generated_include_dir(idl_path)
            if generated is not None and generated not in found:
                found.append(generated)
    return tuple(found)


def sdk_include_dirs(sdk_root: str) -> list[str]:
    root = Path(sdk_root)
    return [str(root / sub) for sub in _SDK_INCLUDE_SUBDIRS if (root / sub).is_dir()]


def compile_command_arguments(compile_commands: str, path: str) -> list[str] | None:
    """The -I/-D/-include/-std flags recorded for `path` in a compile_commands.json, or None when it has no entry."""
    try:
        modified = os.stat(compile_commands).st_mtime_ns
    except OSError as error:
        raise InputError(compile_commands, f"cannot read compile commands: {error.strerror or error}") from error
    flags = _compile_flags_by_file(compile_commands, modified).get(os.path.realpath(path))
    return list(flags) if flags is not None else None


@functools.lru_cache(maxsize=8)
def _compile_flags_by_file(compile_commands: str, modified: int) -> dict[str, tuple[str, ...]]:
    """{real path of each entry's file: its useful flags}; keyed by mtime so an edited database is re-read."""
    try:
        entries = json.loads(Path(compile_commands).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise InputError(compile_commands, f"cannot read compile commands: {error}") from error
    if not isinstance(entries, list):
        raise InputError(compile_commands, "cannot read compile commands: not a JSON list of entries")
    flags: dict[str, tuple[str, ...]] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        directory = entry.get("directory", ".")
        source = os.path.realpath(os.path.join(directory, entry.get("file", "")))
        words = entry.get("arguments") or shlex.split(entry.get("command", ""))
        # The first entry for a file wins, as the linear search did.
        flags.setdefault(source, tuple(_useful_compile_flags(words[1:], directory)))
    return flags


def _useful_compile_flags(words: list[str], directory: str) -> list[str]:
    kept: list[str] = []
    takes_value = {"-I", "-D", "-U", "-include", "-isystem", "-iquote"}
    index = 0
    while index < len(words):
        word = words[index]
        if word in takes_value and index + 1 < len(words):
            value = words[index + 1]
            if word in {"-I", "-isystem", "-iquote"} and not os.path.isabs(value):
                value = os.path.join(directory, value)
            kept += [word, value]
            index += 2
            continue
        if word.startswith(("-I", "-isystem")) and len(word) > 2:
            flag = "-I" if word.startswith("-I") else "-isystem"
            value = word[len(flag) :]
            kept.append(flag + (value if os.path.isabs(value) else os.path.join(directory, value)))
        elif word.startswith(("-D", "-U", "-std=")):
            kept.append(word)
        index += 1
    return kept


def arguments_for(path: str, role: str, settings: ParseSettings) -> list[str]:
    """The clang arguments for one file (see toolchain-notes.md for why each one is there)."""
    language = ["-x", "c++", "-std=c++17"] if is_cxx(path) else ["-x", "c", "-std=gnu11"]
    recorded = compile_command_arguments(settings.compile_commands, path) if settings.compile_commands else None
    tree_dirs = tree_include_dirs(path)
    includes = [f"-I{directory}" for directory in settings.include_dirs]
    if recorded is None:
        includes += [f"-I{directory}" for directory in tree_dirs]
    else:
        includes += recorded
    defines = [f"-D{define}" for define in (*(settings.build_defines if recorded is None else ()), *settings.defines)]
    sdk = sdk_include_dirs(settings.sdk_root) if settings.sdk_root else []
    # The stand-ins are searched after the tree's own dirs and the SDK's, so real headers always win.
    sdk_and_stubs = [flag for directory in sdk for flag in ("-isystem", directory)]
    for directory in interface_header_dirs(tuple(tree_dirs)):
        sdk_and_stubs += ["-isystem", directory]
    sdk_and_stubs += ["-isystem", str(stubs_dir() / "common")]
    builtin = ["-isystem", str(builtin_include_dir())]
    if role == KERNEL:
        arch = settings.arch if settings.arch in ARCHES else "v73"
        target = ["--target=hexagon", f"-mcpu=hexagon{arch}", "-mhvx", "-mhvx-length=128b"]
        target += ["-ffreestanding", "-nostdinc"]
        if int(arch[1:]) >= 79:
            # v79 and later have IEEE-float HVX (Q6_Vsf_*), which the SDK compiler enables by default for them.
            target.append("-mhvx-ieee-fp")
        # Kernel libc stand-ins precede clang's builtins: their stddef.h wraps clang's to give NULL the target's value.
        system = [*sdk_and_stubs, "-isystem", str(stubs_dir() / "kernel"), *builtin]
        # The SDK compiler knows its HMX intrinsics without any header; clang needs their declarations.
        prelude = ["-include", str(stubs_dir() / "kernel" / "hexlint_hmx_intrinsics.h")]
        return [*language, *target, *defines, *includes, *system, *prelude, *settings.extra_arguments]
    # The host keeps its real system headers (libstdc++); the -isystem also stops libclang-ng adding its libc++.
    return [*language, "-fsyntax-only", *defines, *includes, *builtin, *sdk_and_stubs, *settings.extra_arguments]


def on_deep_stacks(
    function: Callable[[str], object], items: Sequence[str], workers: int, stack_bytes: int | None = None
) -> list[object]:
    """`function` over `items` on `workers` threads with `stack_bytes` (PARSE_STACK_BYTES) stacks, results in order.

    Every libclang parse runs here, never on the main thread (whose stack is the 8 MiB of `ulimit -s`). An exception
    in `function` is raised here, for the first item that raised it.
    """
    return list(deep_stack_results(function, items, workers, stack_bytes))


def deep_stack_results(
    function: Callable[[str], object], items: Sequence[str], workers: int, stack_bytes: int | None = None
) -> Iterator[object]:
    """As `on_deep_stacks`, but each result is yielded, in order, as soon as it and those before it are done: the
    caller works on one file's AST (with the GIL) while the threads parse the next ones (libclang releases it). An
    exception is raised when its item's turn comes; a caller that stops early leaves the threads to finish their
    items and drop them."""
    import threading

    results: list[object] = [None] * len(items)
    errors: list[BaseException | None] = [None] * len(items)
    finished = [False] * len(items)
    next_item = iter(range(len(items)))
    lock = threading.Lock()
    done = threading.Condition(lock)

    def work() -> None:
        while True:
            with lock:
                index = next(next_item, None)
            if index is None:
                return
            result: object = None
            error: BaseException | None = None
            try:
                result = function(items[index])
            except BaseException as raised:  # carried to the calling thread, raised there
                error = raised
            with done:
                results[index], errors[index], finished[index] = result, error, True
                done.notify_all()

    if not items:
        return
    previous = threading.stack_size(stack_bytes or PARSE_STACK_BYTES)
    try:
        threads = [threading.Thread(target=work, daemon=True) for _ in range(max(1, min(workers, len(items))))]
        for thread in threads:
            thread.start()
    finally:
        threading.stack_size(previous)
    for index in range(len(items)):
        with done:
            done.wait_for(lambda index=index: finished[index])
            result, error = results[index], errors[index]
            results[index] = None  # the caller owns it now
        if error is not None:
            raise error
        yield result
    for thread in threads:
        thread.join()


def longest_unbroken_stretch(data: bytes) -> int:
    """The longest run of bytes holding none of `;` `,` `{` `}`: a bound on how deep one statement can nest."""
    import re

    longest = start = 0
    for match in re.finditer(rb"[;,{}]", data):
        longest = max(longest, match.start() - start)
        start = match.end()
    return max(longest, len(data) - start)


def may_overflow(path: str) -> bool:
    """Whether the file could nest deeper than PARSE_STACK_BYTES parse: a stretch over DEEP_STRETCH_BYTES."""
    try:
        if os.path.getsize(path) <= DEEP_STRETCH_BYTES:
            return False  # the common case, decided without reading: a file this small holds no such stretch
        with open(path, "rb") as handle:
            return longest_unbroken_stretch(handle.read()) > DEEP_STRETCH_BYTES
    except OSError:
        return False


_CHILD_PARSE = "import sys; from hexlint.c.parse import child_parse; child_parse(sys.argv[1:])"


def crashes_in_child(path: str, arguments: Sequence[str]) -> int | None:
    """Parse in a child process as parse_unit would; the signal that killed it, or None when it parsed."""
    import subprocess

    child = subprocess.run(
        [sys.executable, "-c", _CHILD_PARSE, str(PARSE_STACK_BYTES), path, *arguments],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return -child.returncode if child.returncode < 0 else None


def child_parse(argv: Sequence[str]) -> None:
    """The child of `crashes_in_child`: STACK_BYTES PATH ARGUMENTS..., parsed on a thread with that stack."""
    stack_bytes, path, *arguments = argv
    parse = cindex.Index.create().parse
    on_deep_stacks(lambda item: parse(item, args=arguments, options=_KEEP_GOING), [path], 1, int(stack_bytes))


def parse_unit(path: str, role: str, settings: ParseSettings) -> ParsedUnit:
    """Parse one file. Bad C becomes HX002 diagnostics; only an unreadable file raises InputError.

    Call it through `on_deep_stacks`: clang's parser needs more stack than a default thread has.
    """
    absolute = os.path.abspath(path)
    text = dict(settings.unsaved).get(absolute)
    unsaved = list(settings.unsaved)
    if text is None:
        _check_readable(path)
    arguments = arguments_for(path, role, settings)
    if may_overflow(path):
        signal_number = crashes_in_child(path, arguments)
        if signal_number is not None:
            failure = _parse_error(
                path,
                None,
                None,
                f"libclang crashed parsing this file (signal {signal_number}): its code nests too deep "
                f"(over {DEEP_STRETCH_BYTES // 1024} KiB without `;`, `,` or braces); split the expression",
            )
            return ParsedUnit(path, role, None, [failure], tuple(arguments))
    try:
        # By its absolute name, as a unit loaded from the cache (a saved AST) names it: every node of a run spells
        # its file alike, however it was reached (the report shows paths relative to the working directory).
        translation_unit = cindex.Index.create().parse(
            absolute, args=arguments, unsaved_files=unsaved or None, options=_KEEP_GOING
        )
    except cindex.TranslationUnitLoadError:
        failure = _parse_error(
            path, None, None, "libclang could not parse this file at all (unsupported target or flag?)"
        )
        return ParsedUnit(path, role, None, [failure], tuple(arguments))
    diagnostics = list(parse_errors(translation_unit, path))
    return ParsedUnit(path, role, translation_unit, diagnostics, tuple(arguments), tuple(unsaved))


def _check_readable(path: str) -> None:
    if not os.path.exists(path):
        raise InputError(path, "no such file")
    if os.path.isdir(path):
        raise InputError(path, "is a directory")
    try:
        with open(path, "rb") as handle:
            handle.read(1)
    except OSError as error:
        raise InputError(path, f"cannot read: {error.strerror or error}") from error


def parse_errors(translation_unit: cindex.TranslationUnit, path: str) -> Iterable[Diagnostic]:
    """One HX002 per missing header, and one naming the first other error (with the count of the rest)."""
    missing_headers: set[str] = set()
    other_errors = []
    include_sites = _IncludeSites(translation_unit, path)
    for diagnostic in translation_unit.diagnostics:
        if diagnostic.severity < cindex.Diagnostic.Error:
            continue
        spelling = _safe_text(lambda d=diagnostic: d.spelling)
        if spelling.endswith("file not found"):
            header = spelling.split("'")[1] if spelling.count("'") >= 2 else spelling
            if header not in missing_headers:
                missing_headers.add(header)
                message = f"header '{header}' not found; add its directory to include-dirs or --include-dir"
                yield _diagnostic_at(diagnostic, path, message, include_sites)
        else:
            other_errors.append(diagnostic)
    if other_errors:
        first = other_errors[0]
        more = f" (and {len(other_errors) - 1} more errors)" if len(other_errors) > 1 else ""
        message = _safe_text(lambda: first.spelling)
        yield _diagnostic_at(first, path, f"clang error: {message}{more}", include_sites)


class _IncludeSites:
    """Where the main file includes the header an error is in (directly, or through other headers): so an error
    in a header outside the run can be reported on the file of the run that reaches it."""

    def __init__(self, translation_unit: cindex.TranslationUnit, path: str) -> None:
        self.translation_unit = translation_unit
        self.path = path
        self.includer: dict[str, tuple[str, int, int]] | None = None

    def site(self, header: str) -> tuple[int, int] | None:
        if self.includer is None:
            self.includer = {}
            for inclusion in self.translation_unit.get_includes():
                if inclusion.source is None or inclusion.include is None:
                    continue  # a -include of the command line: no #include line to point at
                included = os.path.realpath(_safe_text(lambda i=inclusion: i.include.name))
                source = _safe_text(lambda i=inclusion: i.source.name)
                self.includer.setdefault(included, (source, inclusion.location.line, inclusion.location.column))
        main = os.path.realpath(self.path)
        current, seen = os.path.realpath(header), set()
        while current in self.includer and current not in seen:
            seen.add(current)
            source, line, column = self.includer[current]
            if os.path.realpath(source) == main:
                return line, column
            current = os.path.realpath(source)
        return None


def _diagnostic_at(
    diagnostic: cindex.Diagnostic, path: str, message: str, include_sites: _IncludeSites | None = None
) -> Diagnostic:
    location = diagnostic.location
    file_name = (_safe_text(lambda: location.file.name) if location.file else path) or path
    related: tuple[Related, ...] = ()
    if include_sites is not None and os.path.realpath(file_name) != os.path.realpath(path):
        site = include_sites.site(file_name)
        if site is not None:
            related = (Related(Span(path=path, line=site[0], column=site[1]), "included from here"),)
    return _parse_error(file_name, location.line or None, location.column or None, message, related)


def _parse_error(
    path: str, line: int | None, column: int | None, message: str, related: tuple[Related, ...] = ()
) -> Diagnostic:
    # Imported here: the registry imports the checks, which import this module.
    from hexlint.registry import diagnostic

    span = Span(path=path, line=line, column=column)
    return diagnostic("HX002", message, span, related=related, fingerprint_text=message)


def _safe_text(read) -> str:
    try:
        return read() or ""
    except UnicodeDecodeError:
        return "<text that is not UTF-8>"
