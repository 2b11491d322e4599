"""The `hexlint` command: argument parsing, output and exit status. No rule logic lives here.

Exit status: 0 clean, 1 findings (or, with --diff, fixes to apply), 2 usage or input error. Every error is one
line on stderr naming the file or option; an internal error is one line too, with the traceback only under -v.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Sequence

from hexlint import __version__, registry
from hexlint.config import ARCHITECTURES, CONTEXT_MODES, Config, ConfigError, load_config
from hexlint.core import Rule
from hexlint.discover import DiscoveryError, is_binary, is_source, read_bytes_or_none, spelled
from hexlint.engine import (
    InputError,
    InternalError,
    LintResult,
    RunSettings,
    lint,
    unknown_selectors,
    write_baseline,
)
from hexlint.report import FORMATS, held_back_note, render_statistics, summary_line

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn, TextIO

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2
# --fail-on: the least severity that fails the run, most severe first.
FAIL_ON = ("error", "warning", "info")


class UsageError(Exception):
    """A bad option or option value; the message names it."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (and exit 2) instead of the usage block."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse makes a formatter per add_argument (to validate metavars), and each asks shutil for the terminal
        # size: shutil's import (zlib, bz2, lzma) was a tenth of a run's start-up. The width is the one shutil gives.
        return self.formatter_class(prog=self.prog, width=terminal_columns() - 2)


def terminal_columns() -> int:
    """shutil.get_terminal_size().columns: $COLUMNS, else the terminal of stdout, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns if sys.__stdout__ else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def _split_selectors(values: Sequence[str] | None) -> tuple[str, ...]:
    return tuple(item.strip() for value in values or () for item in value.split(",") if item.strip())


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="hexlint",
        description="Static analysis for the Hexagon NPU backend of llama.cpp / ggml: C/C++ sources and built HTP "
        "libraries. `hexlint rule CODE` prints a rule's documentation; `hexlint splits LOG` (graph splits) and "
        "`hexlint trace LOG` (runtime op traces) read device logs; `hexlint server` is a language server for editors.",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or directories to lint (default: .)")
    selection = parser.add_argument_group("rule selection")
    selection.add_argument(
        "--select", action="append", metavar="RULES", help="codes, names or prefixes (HX1), comma separated"
    )
    selection.add_argument("--ignore", action="append", metavar="RULES", help="codes, names or prefixes to turn off")
    selection.add_argument(
        "--extend-select", action="append", metavar="RULES", help="rules to add to the select in effect"
    )
    selection.add_argument("--extend-ignore", action="append", metavar="RULES", help="the same as --ignore (ruff's)")
    selection.add_argument("--list-rules", action="store_true", help="list every rule and exit")
    output = parser.add_argument_group("output")
    output.add_argument("--format", choices=FORMATS, default="text", help="report format (default: text)")
    output.add_argument("--output", metavar="FILE", help="write the report to FILE instead of stdout")
    output.add_argument("--statistics", action="store_true", help="print the count of findings per rule instead")
    output.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    output.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="info",
        help="the least severity that makes the exit status 1 (default info: every finding)",
    )
    output.add_argument(
        "--warnings-as-errors", action="store_true", help="report warnings as errors (they then fail --fail-on error)"
    )
    output.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    output.add_argument("--watch", action="store_true", help="lint, then again on every change, showing what changed")
    output.add_argument("-v", "--verbose", action="store_true", help="related locations, details, tracebacks")
    output.add_argument("--version", action="version", version=f"hexlint {__version__}")
    settings = parser.add_argument_group("configuration")
    settings.add_argument("--config", metavar="FILE", help="pyproject.toml or hexlint.toml to use")
    settings.add_argument("--arch", choices=ARCHITECTURES, help="Hexagon version kernels are parsed for (default v73)")
    settings.add_argument(
        "--compile-commands",
        "-p",
        metavar="PATH",
        help="compile_commands.json with host flags, or the build directory holding it",
    )
    settings.add_argument("--include-dir", "-I", action="append", default=[], metavar="DIR", help="extra include dir")
    settings.add_argument(
        "--define", "-D", action="append", default=[], metavar="NAME[=VALUE]", help="extra define (beats the build's)"
    )
    settings.add_argument(
        "--no-cmake-defines",
        action="store_true",
        help="take no define from the tree's CMakeLists.txt files (-v shows the ones taken)",
    )
    settings.add_argument(
        "--context",
        choices=CONTEXT_MODES,
        help="what cross-file rules see besides the named files: the rest of the tree (default) or nothing",
    )
    settings.add_argument("--project-root", metavar="DIR", help="the tree parsed as context (default: found)")
    settings.add_argument(
        "--cache-dir", metavar="DIR", help="the persistent cache (default: .hexlint_cache at the project root)"
    )
    settings.add_argument("--no-cache", action="store_true", help="read and write no cache")
    settings.add_argument(
        "--jobs", "-j", type=int, default=0, metavar="N", help="parse N files, audit N libraries at once (0: cores)"
    )
    baseline = parser.add_argument_group("baselines and fixes")
    baseline.add_argument("--baseline", metavar="FILE", help="hide the findings recorded in FILE")
    baseline.add_argument("--write-baseline", metavar="FILE", help="record the current findings in FILE")
    baseline.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    baseline.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="with --fix or --diff, also the fixes that may change what the code does (`hexlint rule CODE` says why)",
    )
    baseline.add_argument(
        "--no-unsafe-fixes",
        action="store_true",
        help="take no unsafe fix even when the configuration's `unsafe-fixes` is true",
    )
    baseline.add_argument(
        "--fix-read-only", action="store_true", help="with --fix, also rewrite read-only files (they stay read-only)"
    )
    baseline.add_argument("--diff", action="store_true", help="print the safe fixes as a unified diff; write nothing")
    baseline.add_argument(
        "--add-suppressions",
        metavar="REASON",
        help="write `// hexlint: ignore[CODE] REASON` on the line of every finding",
    )
    introspection = parser.add_argument_group("introspection")
    introspection.add_argument(
        "--show-settings", action="store_true", help="print the resolved settings, each with where it came from"
    )
    introspection.add_argument(
        "--show-files", action="store_true", help="print the files a run would lint, with their roles"
    )
    introspection.add_argument(
        "--stdin-filename", metavar="PATH", help="lint the text on stdin (PATH `-`) as if it were the file PATH"
    )
    _add_binary_arguments(parser)
    return parser


def _add_binary_arguments(parser: argparse.ArgumentParser) -> None:
    """The binary audit's options (--spills, --strict, --disasm ...), when that part of hexlint is installed."""
    try:
        from hexlint.binary.options import add_binary_arguments
    except ImportError:
        return
    add_binary_arguments(parser)


# ---------------------------------------------------------------- rule docs


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line.strip() else line for line in text.strip("\n").splitlines())


def toml_value(value: Any) -> str:
    """An option's default spelled as TOML, so it can be pasted into [tool.hexlint.rules.CODE]."""
    import json

    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(str(key))} = {toml_value(item)}" for key, item in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    return json.dumps(value)  # strings, numbers and booleans are spelled alike in JSON and TOML


def format_rule_doc(rule: Rule) -> str:
    """What `hexlint rule HX104` prints: the rule's documentation sections and its options."""
    doc = rule.doc
    parts = [f"{rule.code} {rule.name} ({rule.severity.value}, {rule.kind} rule)", "", rule.summary]
    for title, body in (("What it does", doc.what), ("Why is this bad?", doc.why)):
        if body.strip():
            parts += ["", f"## {title}", body.strip()]
    for title, body in (("Example", doc.example), ("Use instead", doc.use_instead)):
        if body.strip():
            parts += ["", f"## {title}", _indent(body)]
    if doc.fix_safety.strip():
        parts += ["", "## Fix safety", doc.fix_safety.strip()]
    if rule.scope == "project":
        parts += [
            "",
            "## Scope",
            "Cross-file: in a run on some files of a tree (a pre-commit hook) it also sees the rest of the tree as "
            'context and reports only on the named files (`context = "tree"`, the default; see docs/usage.md).',
        ]
    if rule.options:
        parts += ["", "## Options (set in [tool.hexlint.rules." + rule.code + "])"]
        from hexlint.config import option_key

        parts += [f"    {option_key(name)} = {toml_value(value)}" for name, value in rule.options.items()]
    return "\n".join(parts) + "\n"


def format_rule_list(rules: Sequence[Rule]) -> str:
    width = max((len(rule.name) for rule in rules), default=10)
    kind_width = max((len(rule.kind) for rule in rules), default=6)
    lines = [
        f"{rule.code}  {rule.name:<{width}}  {rule.kind:<{kind_width}}  {rule.severity.value:<7}  {rule.summary}"
        for rule in rules
    ]
    return "\n".join(lines) + "\n"


def run_rule_command(arguments: Sequence[str], stdout: TextIO) -> int:
    if len(arguments) != 1:
        raise UsageError("`hexlint rule` takes one rule code or name, e.g. `hexlint rule HX104`")
    rule = registry.find_rule(arguments[0])
    if rule is None:
        raise UsageError(f"rule: unknown rule `{arguments[0]}` (see hexlint --list-rules)")
    stdout.write(format_rule_doc(rule))
    return EXIT_CLEAN


# ---------------------------------------------------------------- linting


# What clang's -D takes: a macro name, optionally a parameter list, optionally `=` and a body. (argparse imports re.)
_DEFINE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\([A-Za-z0-9_, .]*\))?(=.*)?", re.DOTALL)


def settings_from(arguments: argparse.Namespace) -> RunSettings:
    select = _split_selectors(arguments.select)
    ignore = _split_selectors([*(arguments.ignore or ()), *(arguments.extend_ignore or ())])
    extend_select = _split_selectors(arguments.extend_select)
    given = (
        ("--select", arguments.select),
        ("--ignore", arguments.ignore),
        ("--extend-select", arguments.extend_select),
        ("--extend-ignore", arguments.extend_ignore),
    )
    for option, values in given:
        if values and any(not _split_selectors([value]) for value in values):
            # `--select ""` (an unset CI variable) would otherwise silently mean "every rule".
            raise UsageError(f"{option}: no rule given (codes, names or prefixes, comma separated)")
    for option, values in given:
        selectors = _split_selectors(values)
        unknown = unknown_selectors(selectors)
        if unknown:
            raise UsageError(f"{option}: unknown rule `{unknown[0]}` (see hexlint --list-rules)")
    for define in arguments.define:
        if not _DEFINE.fullmatch(define):
            raise UsageError(f"--define: `{define}`: not NAME, NAME=VALUE or NAME(ARGS)=VALUE")
    if arguments.jobs < 0:
        raise UsageError("--jobs: must be 0 (one per core) or a positive number")
    if arguments.fix_read_only and not arguments.fix:
        raise UsageError("--fix-read-only: only with --fix")
    if arguments.unsafe_fixes and not (arguments.fix or arguments.diff):
        raise UsageError("--unsafe-fixes: only with --fix or --diff")
    if arguments.unsafe_fixes and arguments.no_unsafe_fixes:
        raise UsageError("--unsafe-fixes and --no-unsafe-fixes cannot be combined")
    if arguments.fix and arguments.diff:
        raise UsageError("--fix and --diff cannot be combined: --diff only shows what --fix would write")
    _check_introspection_arguments(arguments)
    compile_commands = _compile_commands_argument(arguments.compile_commands)
    if arguments.project_root and not os.path.isdir(arguments.project_root):
        raise UsageError(f"--project-root: {arguments.project_root}: not a directory")
    return RunSettings(
        select=select,
        ignore=ignore,
        arch=arguments.arch,
        compile_commands=compile_commands,
        include_dirs=tuple(arguments.include_dir),
        defines=tuple(arguments.define),
        no_cmake_defines=arguments.no_cmake_defines,
        jobs=arguments.jobs,
        fix=arguments.fix,
        unsafe_fixes=arguments.unsafe_fixes,
        fix_read_only=arguments.fix_read_only,
        diff=arguments.diff,
        baseline=arguments.baseline or None,
        context=arguments.context,
        project_root=arguments.project_root,
        binary_arguments=arguments,
        extend_select=extend_select,
        **_stdin_settings(arguments),
    )


def _compile_commands_argument(given: str | None) -> str | None:
    """--compile-commands / -p: a compile_commands.json, or a build directory holding one (as clang-tidy's -p)."""
    if not given:
        return None
    from hexlint.config import COMPILE_COMMANDS, compile_commands_file

    path = compile_commands_file(given)
    if os.path.isfile(path):
        return path
    if os.path.isdir(given):
        raise UsageError(f"--compile-commands: {given}: the directory holds no {COMPILE_COMMANDS}")
    raise UsageError(f"--compile-commands: {given}: no such file or directory")


def _stdin_settings(arguments: argparse.Namespace) -> dict[str, Any]:
    """`--stdin-filename PATH -`: the text to lint as PATH; `-` alone, or other PATHs with it, are usage errors."""
    reads_stdin = "-" in arguments.paths
    if arguments.stdin_filename is None:
        if reads_stdin:
            raise UsageError("-: reading stdin needs --stdin-filename PATH (the file the text stands for)")
        return {}
    if any(path != "-" for path in arguments.paths):
        raise UsageError("--stdin-filename: lints stdin only; give `-` (or nothing) as PATH")
    if arguments.fix or arguments.add_suppressions is not None:
        raise UsageError("--stdin-filename: stdin cannot be rewritten; use --diff to see the fixes")
    if arguments.show_settings or arguments.show_files:
        return {"stdin": b"", "stdin_filename": arguments.stdin_filename}
    buffer = getattr(sys.stdin, "buffer", None)
    data = buffer.read() if buffer is not None else sys.stdin.read().encode("utf-8", "surrogateescape")
    return {"stdin": data, "stdin_filename": arguments.stdin_filename}


def _check_introspection_arguments(arguments: argparse.Namespace) -> None:
    """--statistics, --add-suppressions and --show-*: what they cannot be combined with."""
    if arguments.statistics and arguments.format not in ("text", "json"):
        raise UsageError(f"--statistics: prints text or json, not {arguments.format}")
    if arguments.add_suppressions is not None:
        from hexlint.suppression_writer import ReasonError, check_reason

        for option in ("fix", "diff", "write_baseline", "statistics"):
            if getattr(arguments, option):
                raise UsageError(f"--add-suppressions cannot be combined with --{option.replace('_', '-')}")
        try:
            arguments.add_suppressions = check_reason(arguments.add_suppressions)
        except ReasonError as error:
            raise UsageError(f"--add-suppressions: {error}") from None
    if arguments.show_settings and arguments.show_files:
        raise UsageError("--show-settings and --show-files cannot be combined: run them one at a time")


def exit_status(result: LintResult, arguments: argparse.Namespace) -> int:
    """1 when a finding is at least as severe as --fail-on (every finding by default), unless --exit-zero."""
    threshold = FAIL_ON.index(arguments.fail_on)
    failing = any(FAIL_ON.index(diagnostic.severity.value) <= threshold for diagnostic in result.diagnostics)
    return EXIT_FINDINGS if failing and not arguments.exit_zero else EXIT_CLEAN


def _warnings_as_errors(result: LintResult) -> LintResult:
    from dataclasses import replace

    from hexlint.core import Severity

    diagnostics = tuple(
        replace(diagnostic, severity=Severity.ERROR) if diagnostic.severity is Severity.WARNING else diagnostic
        for diagnostic in result.diagnostics
    )
    return replace(result, diagnostics=diagnostics)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'s' if number != 1 else ''}"


MAX_SUPPRESSION_PASSES = 3


def run_add_suppressions(
    result: LintResult, relint: Callable[[], LintResult], arguments: argparse.Namespace, stderr: TextIO
) -> int:
    """--add-suppressions: write the directives, say how many; exit 0. A directive can move a macro line's
    continuation backslash (a new HX110 on that macro), so the files are linted again and what is new is
    suppressed too; what is left is what no comment can hide."""
    from hexlint.suppression_writer import write_suppressions

    added = covered = 0
    files: set[str] = set()
    for _ in range(MAX_SUPPRESSION_PASSES):
        try:
            count, findings, changed = write_suppressions(
                result.diagnostics, arguments.add_suppressions, read_bytes_or_none
            )
        except OSError as error:
            raise InputError(f"--add-suppressions: cannot write: {error.strerror or error}") from None
        added, covered, files = added + count, covered + findings, files | set(changed)
        if not count:
            break
        result = relint()
    if not arguments.quiet:
        line = f"Added {_count(added, 'suppression')} ({_count(covered, 'finding')}) in {len(files)} file(s)."
        if result.diagnostics:
            line += f" {_count(len(result.diagnostics), 'finding')} left that a comment cannot hide."
        stderr.write(line + "\n")
    return EXIT_CLEAN


def render_report(result: LintResult, arguments: argparse.Namespace) -> str:
    if arguments.statistics:
        if arguments.format == "json":
            from hexlint.report import render_statistics_json

            return render_statistics_json(result.diagnostics)
        return render_statistics(result.diagnostics)
    if arguments.format == "json":
        from hexlint.report import json as json_report

        return json_report.render(result.diagnostics, result.rules, result.binary_tables)
    if arguments.format == "sarif":
        from hexlint.report import sarif

        return sarif.render(result.diagnostics, result.rules)
    if arguments.format == "github":
        from hexlint.report import github

        return github.render(result.diagnostics, result.rules)
    from hexlint.report import text

    report = text.render(result.diagnostics, result.rules, verbose=arguments.verbose)
    return (result.binary_report.rstrip("\n") + "\n" if result.binary_report.strip() else "") + report


def _write_output(report: str, arguments: argparse.Namespace, stdout: TextIO) -> None:
    if not arguments.output:
        stdout.write(report)
        return
    try:
        # surrogateescape: a file name that is not UTF-8 is written back as the bytes it is made of.
        with open(spelled(arguments.output), "w", encoding="utf-8", errors="surrogateescape") as handle:
            handle.write(report)
    except OSError as error:
        raise UsageError(f"--output: {arguments.output}: {error.strerror or error}") from None


def _write_diff(diff: str, arguments: argparse.Namespace, stdout: TextIO) -> None:
    from hexlint.fixer import encode_diff

    if arguments.output:
        try:
            with open(spelled(arguments.output), "wb") as handle:
                handle.write(encode_diff(diff))
        except OSError as error:
            raise UsageError(f"--output: {arguments.output}: {error.strerror or error}") from None
        return
    stdout.flush()
    buffer = getattr(stdout, "buffer", None)
    if buffer is not None:
        buffer.write(encode_diff(diff))
        buffer.flush()
    else:
        stdout.write(diff)


def lints_file(target: str, paths: Sequence[str]) -> bool:
    """Whether writing `target` could overwrite a file of the run: a named path, or a lintable file below a named
    directory (a report must never replace a source: only --fix writes sources)."""
    real_target = os.path.realpath(target)
    for given in paths:
        real = os.path.realpath(given)
        if real_target == real:
            return True
        below = real_target.startswith(real.rstrip(os.sep) + os.sep)
        if below and os.path.isdir(given) and (is_source(target) or is_binary(target)):
            return True
    return False


def check_writable_target(option: str, target: str, paths: Sequence[str]) -> None:
    """--output / --write-baseline: refuse before linting what could only fail or destroy a linted file afterwards."""
    path = spelled(target)
    if lints_file(path, paths):
        raise UsageError(f"{option}: {target}: is a file being linted; write the report elsewhere")
    if os.path.isdir(path):
        raise UsageError(f"{option}: {target}: is a directory")
    parent = os.path.dirname(path) or "."
    if not os.path.isdir(parent):
        raise UsageError(f"{option}: {target}: directory {parent} does not exist")


def _with_configuration(
    settings: RunSettings, arguments: argparse.Namespace, config: Config, paths: Sequence[str], stderr: TextIO
) -> RunSettings:
    """What the command line and the configuration decide together: the cache, unsafe fixes, the progress line."""
    from dataclasses import replace

    from hexlint.config import cache_directory
    from hexlint.progress import progress_for

    directory = cache_directory(arguments.cache_dir, arguments.no_cache, config, paths)
    machine_format = arguments.format != "text" or arguments.statistics
    progress = progress_for(stderr, quiet=machine_format or arguments.quiet)
    unsafe = arguments.unsafe_fixes or (config.unsafe_fixes and not arguments.no_unsafe_fixes)
    return replace(settings, cache_dir=directory, progress=progress, unsafe_fixes=unsafe)


def run_lint(arguments: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    if (cache := sys.modules.get("hexlint.cache")) is not None:
        cache.take_unwritable_caches()  # an earlier run's failures in this process were that run's to report
    if arguments.watch:
        from hexlint import watch

        watch.check_arguments(arguments)  # before stdin is read or anything linted
    settings = settings_from(arguments)
    paths = [settings.stdin_filename] if settings.stdin_filename is not None else arguments.paths or ["."]
    for option, target in (("--output", arguments.output), ("--write-baseline", arguments.write_baseline)):
        if target:
            check_writable_target(option, target, paths)
    config: Config = load_config(arguments.config, paths[0])
    for note in config.notes:
        stderr.write(f"hexlint: warning: {note}\n")
    settings = _with_configuration(settings, arguments, config, paths, stderr)
    if arguments.watch:
        return watch.run_watch(arguments, paths, config, settings, stdout, stderr)
    if arguments.show_settings or arguments.show_files:
        from hexlint.introspect import show_files, show_settings

        as_json = arguments.format == "json"
        shown = show_settings(config, settings, as_json, paths) if arguments.show_settings else None
        _write_output(shown if shown is not None else show_files(paths, config, settings, as_json), arguments, stdout)
        return EXIT_CLEAN
    try:
        result = lint(paths, config, settings)
    finally:
        if settings.progress is not None:
            settings.progress.finish()
    if arguments.warnings_as_errors:
        result = _warnings_as_errors(result)
    if result.files_checked == 0:
        raise InputError(f"{', '.join(paths)}: no C/C++ sources or ELF files to lint")
    if arguments.write_baseline:
        count = write_baseline(arguments.write_baseline, result)
        if not arguments.quiet:
            stderr.write(f"Wrote {count} finding{'s' if count != 1 else ''} to {arguments.write_baseline}.\n")
        return EXIT_CLEAN
    if arguments.diff:
        _write_diff(result.diff, arguments, stdout)
        if not arguments.quiet:
            files = len(result.changed_files)
            held = held_back_note(result.diagnostics, settings.unsafe_fixes)
            stderr.write(
                f"Would fix {result.fixed} finding{'s' if result.fixed != 1 else ''} in {files} file(s).{held}\n"
            )
        return EXIT_FINDINGS if result.diff and not arguments.exit_zero else EXIT_CLEAN
    if arguments.add_suppressions is not None:
        return run_add_suppressions(result, lambda: lint(paths, config, settings), arguments, stderr)
    _write_output(render_report(result, arguments), arguments, stdout)
    if not arguments.quiet:
        if result.rules and all(rule.kind == "runtime" for rule in result.rules):
            stderr.write("hexlint: note: the selected rules check device logs: run them with `hexlint trace LOG...`\n")
        if arguments.verbose:
            for line in result.build_defines:
                stderr.write(f"hexlint: define from the tree's build: {line}\n")
        for note in result.notes:
            stderr.write(f"hexlint: note: {note}\n")
        notes = []
        if result.baselined:
            notes.append(f"{len(result.baselined)} hidden by the baseline")
        if result.suppressed and arguments.verbose:
            notes.append(f"{len(result.suppressed)} suppressed by comments")
        if result.context_files and arguments.verbose:
            notes.append(f"{result.context_files} more files of the tree used as context")
        if result.cache_outcome and arguments.verbose:
            notes.append(f"cache: {result.cache_outcome}, {result.parsed_units} of {result.units} units parsed")
        extra = f" ({'; '.join(notes)})" if notes else ""
        fix_flag = "--fix" if settings.unsafe_fixes and not arguments.unsafe_fixes else None
        summary = summary_line(
            result.diagnostics, result.files_checked, result.fixed, settings.unsafe_fixes, fix_flag=fix_flag
        )
        stderr.write(summary + extra + "\n")
    _warn_of_unwritable_caches(stderr, arguments.quiet)
    return exit_status(result, arguments)


def _warn_of_unwritable_caches(stderr: TextIO, quiet: bool) -> None:
    cache = sys.modules.get("hexlint.cache")  # not imported: no cache was used, nothing to say
    if cache is None:
        return
    failures = cache.take_unwritable_caches()
    if quiet:
        return
    for directory, reason in sorted(failures.items()):
        stderr.write(
            f"hexlint: warning: cannot write the cache in {directory}: {reason}; nothing of this run is kept\n"
        )


def _dispatch(argv: Sequence[str], stdout: TextIO, stderr: TextIO) -> int:
    if argv and argv[0] == "rule":
        return run_rule_command(argv[1:], stdout)
    if argv and argv[0] == "splits":
        from hexlint.splits.command import run as run_splits

        return run_splits(argv[1:], _Parser, stdout)
    if argv and argv[0] == "trace":
        from hexlint.runtime.command import run as run_trace

        return run_trace(argv[1:], _Parser, stdout, stderr)
    if argv and argv[0] == "server":
        from hexlint.server import run as run_server

        return run_server(argv[1:], _Parser, stderr)
    arguments = build_parser().parse_args(argv)
    if arguments.list_rules:
        stdout.write(format_rule_list(registry.all_rules()))
        return EXIT_CLEAN
    if getattr(arguments, "disasm", None):
        from hexlint.binary.run import run_disasm

        return run_disasm(arguments)
    if getattr(arguments, "addr2line", None):
        from hexlint.binary.run import run_addr2line

        return run_addr2line(arguments, sys.stdin)
    return run_lint(arguments, stdout, stderr)


def _input_errors() -> tuple[type[Exception], ...]:
    """The errors that are the user's to fix (exit 2, one line). Evaluated only when an exception is matched, so the
    baseline module loads only for a run that may raise its error."""
    from hexlint.baseline import BaselineError
    from hexlint.runtime.logfile import LogError

    return (
        UsageError,
        ConfigError,
        DiscoveryError,
        BaselineError,
        InputError,
        LogError,
    )


def _bytes_faithful(stream: TextIO) -> TextIO:
    """The console stream, printing a file name that is not UTF-8 as its own bytes instead of failing on it."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None and getattr(stream, "errors", None) == "strict":
        reconfigure(errors="surrogateescape")
    return stream


def main(argv: Sequence[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Entry point of the `hexlint` console script and `python -m hexlint`; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    stdout = stdout or _bytes_faithful(sys.stdout)
    stderr = stderr or _bytes_faithful(sys.stderr)
    verbose = "-v" in argv or "--verbose" in argv
    try:
        return _dispatch(argv, stdout, stderr)
    except SystemExit as exit_request:  # --help and --version
        return exit_request.code if isinstance(exit_request.code, int) else EXIT_CLEAN
    except _input_errors() as error:
        stderr.write(f"hexlint: error: {error}\n")
        return EXIT_ERROR
    except InternalError as error:
        if verbose:
            import traceback

            traceback.print_exception(error.__cause__ or error, file=stderr)
        stderr.write(f"hexlint: error: {error}\n")
        return EXIT_ERROR
    except KeyboardInterrupt:
        stderr.write("hexlint: interrupted\n")
        return 130
    except BrokenPipeError:
        return EXIT_CLEAN
    except Exception as error:
        if verbose:
            import traceback

            traceback.print_exc(file=stderr)
        stderr.write(
            f"hexlint: error: internal error: {type(error).__name__}: {error} (run with -v for the traceback)\n"
        )
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
