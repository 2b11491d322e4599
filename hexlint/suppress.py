"""Suppression comments and HX001 unused-suppression.

Syntax, in a `//` or `/* */` comment (codes or rule names, comma separated, then a reason):

    x = a / b;  // hexlint: ignore[HX108] b is a compile-time constant in every caller
    // hexlint: ignore-next-line[HX104, trace-missing] the SDK contract allows NULL here
    if (!ctx) {

`ignore` applies to the line the directive is on, `ignore-next-line` to the line after the comment ends. A suppression
matches a finding that starts on that line. HX001 reports a suppression that has no reason, names no or an unknown
rule, names a binary rule (binary findings are suppressed only by a baseline or the config), or suppresses nothing
although its rule ran on the file. HX001 itself cannot be suppressed.

Comments are found with a small C lexer over the raw bytes (decoded as latin-1, so one character is one byte and
columns are byte columns like libclang's); string and character literals are skipped, so a directive inside a
string is not one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from hexlint import registry
from hexlint.core import Diagnostic, Source, Span

UNUSED_SUPPRESSION = "HX001"

_DIRECTIVE = re.compile(r"hexlint\s*:\s*(?P<kind>ignore-next-line|ignore)\b(?P<rest>.*)", re.DOTALL)
_CODES = re.compile(r"\s*\[(?P<codes>[^\]]*)\](?P<reason>.*)", re.DOTALL)


@dataclass(frozen=True)
class Comment:
    text: str  # the comment including its delimiters
    line: int
    column: int
    end_line: int


@dataclass(frozen=True)
class Suppression:
    path: str
    line: int  # where the directive is written
    column: int
    end_column: int
    target_line: int  # the line whose findings it suppresses
    codes: tuple[str, ...]  # as written: codes or names
    reason: str
    well_formed: bool  # False when the [codes] list is missing


# One alternation over literals and comments: literals are matched (and skipped) so a "//" inside one is no comment.
_TOKENS = re.compile(
    r"""(?P<literal>"(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?)"""
    r"|(?P<line>//[^\n]*)"
    r"|(?P<block>/\*.*?(?:\*/|\Z))",
    re.DOTALL,
)


def iter_comments(text: str) -> Iterator[Comment]:
    """Every // and /* */ comment of C/C++ text, with 1-based positions; literals are skipped."""
    line = 1
    line_start = 0
    position = 0
    for match in _TOKENS.finditer(text):
        start = match.start()
        newlines = text.count("\n", position, start)
        if newlines:
            line += newlines
            line_start = text.rfind("\n", position, start) + 1
        position = start
        if match.lastgroup == "literal":
            continue
        body = match.group()
        yield Comment(body, line, start - line_start + 1, line + body.count("\n"))


def _strip_comment_end(reason: str) -> str:
    reason = reason.strip()
    if reason.endswith("*/"):
        reason = reason[:-2]
    return reason.strip().strip("*").strip()


def _suppression_from(comment: Comment, path: str) -> Suppression | None:
    match = _DIRECTIVE.search(comment.text)
    if match is None:
        return None
    before = comment.text[: match.start()]
    line = comment.line + before.count("\n")
    column = comment.column + len(before) if "\n" not in before else len(before) - before.rfind("\n")
    directive_text = match.group(0).split("\n", 1)[0]
    end_column = column + len(directive_text.rstrip().removesuffix("*/").rstrip())
    target = line if match.group("kind") == "ignore" else comment.end_line + 1
    codes_match = _CODES.match(match.group("rest"))
    if codes_match is None:
        return Suppression(path, line, column, end_column, target, (), "", well_formed=False)
    codes = tuple(code.strip() for code in codes_match.group("codes").split(",") if code.strip())
    reason = _strip_comment_end(codes_match.group("reason").split("\n", 1)[0])
    return Suppression(path, line, column, end_column, target, codes, reason, well_formed=True)


def find_suppressions(source: Source) -> list[Suppression]:
    """The suppression directives in a file's comments."""
    if b"hexlint" not in source.data:  # most files have none: skip the lexer
        return []
    text = source.data.decode("latin-1")
    found = (_suppression_from(comment, source.path) for comment in iter_comments(text) if "hexlint" in comment.text)
    return [suppression for suppression in found if suppression is not None]


def _hx001(suppression: Suppression, message: str) -> Diagnostic:
    span = Span(suppression.path, suppression.line, suppression.column, suppression.line, suppression.end_column)
    fingerprint = f"hexlint: ignore[{','.join(suppression.codes)}]"
    return registry.diagnostic(UNUSED_SUPPRESSION, message, span, fingerprint_text=fingerprint)


def _resolve(selector: str) -> str | None:
    rule = registry.find_rule(selector)
    return rule.code if rule is not None else None


@dataclass(frozen=True)
class SuppressionResult:
    kept: tuple[Diagnostic, ...]
    suppressed: tuple[Diagnostic, ...]
    problems: tuple[Diagnostic, ...]  # HX001 findings


def _problems_without_use(suppression: Suppression) -> Iterator[str]:
    """What is wrong with a directive whatever it suppresses."""
    if not suppression.well_formed:
        yield "Suppression names no rule; write `hexlint: ignore[HX104] reason`."
        return
    if not suppression.codes:
        yield "Suppression has an empty rule list; name the rules it silences."
    for code in suppression.codes:
        rule = registry.find_rule(code)
        if rule is None:
            yield f"Suppression names unknown rule `{code}`; use a code such as HX104 or a rule name."
        elif rule.kind == "binary":
            yield f"Binary rule {rule.code} cannot be suppressed in source; use a baseline or the config."
    if not suppression.reason:
        yield "Suppression has no reason; say after the rule list why the finding does not apply."


def apply_suppressions(
    diagnostics: Iterable[Diagnostic],
    suppressions: Iterable[Suppression],
    active_codes_for: Callable[[str], frozenset[str]],
    key: Callable[[str], str] = lambda path: path,
) -> SuppressionResult:
    """Drop findings a directive covers; report malformed and unused directives as HX001.

    `active_codes_for(path)` gives the codes that ran on a file (selected, not per-file-ignored): a directive for a
    rule that did not run is not reported as unused. `key` normalizes paths so a finding and a directive in the
    same file compare equal however each was spelled.
    """
    by_place: dict[tuple[str, int], list[Suppression]] = {}
    all_suppressions = list(suppressions)
    for suppression in all_suppressions:
        by_place.setdefault((key(suppression.path), suppression.target_line), []).append(suppression)
    used: set[tuple[Suppression, str]] = set()
    kept: list[Diagnostic] = []
    suppressed: list[Diagnostic] = []
    for diagnostic in diagnostics:
        span = diagnostic.span
        candidates = by_place.get((key(span.path), span.line or 0), []) if span.line else []
        matching = [
            (suppression, code)
            for suppression in candidates
            for code in suppression.codes
            if diagnostic.code != UNUSED_SUPPRESSION and _resolve(code) == diagnostic.code
        ]
        if matching and diagnostic.span.symbol is None:
            used.update(matching)
            suppressed.append(diagnostic)
        else:
            kept.append(diagnostic)
    problems: list[Diagnostic] = []
    for suppression in all_suppressions:
        messages = list(_problems_without_use(suppression))
        active = active_codes_for(suppression.path)
        for code in suppression.codes:
            resolved = _resolve(code)
            if resolved in active and (suppression, code) not in used:
                messages.append(
                    f"Suppression of {resolved} matches no finding on line {suppression.target_line}; remove it."
                )
        if messages:
            # One finding per directive, so one bad comment never needs two expectations or two fixes.
            problems.append(_hx001(suppression, " ".join(messages)))
    return SuppressionResult(tuple(kept), tuple(suppressed), tuple(problems))
