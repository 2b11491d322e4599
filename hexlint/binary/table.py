"""The binary audit's per-function table: as data (`table_records`, what `--format json` prints and worker processes
hand back) and as text (`render_tables`, from that data).

Rows are the functions with loops, stack accesses, promotions or divisions, worst first: in-loop vector spills, then
in-loop scalar spills, round trips, then promotions and divisions (for the audits asked for). The text shows the worst
`top` rows (all with `all_rows`) and says how many it hides; the column legend heads the table. Several builds of one
library for different CPUs (`libggml-htp-v73.so` ... `-v81.so`) make one table with a column per CPU for each ranked
count, unless `verbose` asks for per-loop rows (those are per build).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence

from hexlint.binary.findings import stable_function_name

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:  # a run answered by the cache renders its tables without the audit's modules
    from hexlint.binary.audit import FunctionAudit, LibraryAudit, LoopAudit

Record = dict[str, object]

# The columns rows are ranked by, most important first (those of the audits asked for).
RANKED = ("vspill", "sspill", "trips", "promo@loop", "promo", "div@loop", "div")
# The ranked columns a table of several CPUs shows, one column per CPU each.
MERGED = {"spills": ("vspill", "sspill", "trips"), "promotions": ("promo",), "division": ("div@loop",)}
LEGEND = {
    "loops": "loops found",
    "vspill": "in-loop vector spill stores+reloads (HX201)",
    "sspill": "in-loop scalar spill stores+reloads, every loop (HX202 counts innermost loops)",
    "trips": "slots stored and reloaded in one loop",
    "frame": "spill-slot accesses outside loops",
    "array": "stack-array accesses (not spills)",
    "promo": "float->double promotions (HX203)",
    "promo@loop": "promotions in loops",
    "div@loop": "software divisions in loops (HX204)",
    "div": "software divisions",
    "calls@loop": "calls in loops",
    "hvx": "HVX instructions",
}
_CPU_IN_NAME = re.compile(r"v\d{2,3}(?=\D|$)")


def _function_columns(families: set[str]) -> list[tuple[str, Callable[[FunctionAudit], int]]]:
    columns: list[tuple[str, Callable[[FunctionAudit], int]]] = [("loops", lambda f: len(f.loops))]
    if "spills" in families:
        columns += [
            ("vspill", lambda f: f.inloop_vector_spills),
            ("sspill", lambda f: f.inloop_scalar_spills),
            ("trips", lambda f: f.round_trips),
            ("frame", lambda f: f.frame_spills),
            ("array", lambda f: f.array_accesses),
        ]
    if "promotions" in families:
        columns += [("promo", lambda f: f.promotions), ("promo@loop", lambda f: f.inloop_promotions)]
    if "division" in families:
        columns += [("div@loop", lambda f: f.inloop_divisions), ("div", lambda f: f.divisions)]
    columns += [("calls@loop", lambda f: sum(1 for call in f.calls if call.loop is not None))]
    columns += [("hvx", lambda f: f.hvx_instructions)]
    return columns


def column_titles(families: Iterable[str]) -> list[str]:
    return [title for title, _ in _function_columns(set(families))]


def _interesting(function: FunctionAudit) -> bool:
    return bool(function.loops or function.stack_accesses or function.promotions or function.divisions)


def _rank(row: Record, titles: Sequence[str]) -> tuple[object, ...]:
    return (*(-int(row[title]) for title in RANKED if title in titles), str(row["function"]))  # type: ignore[call-overload]


def table_records(audit: LibraryAudit, families: Iterable[str], verbose: bool = False) -> Record:
    """The table as JSON-ready data: one record per function with loops, stack accesses, promotions or divisions,
    worst first, with the text table's columns, and `per_loop` (with DWARF file:line) when `verbose`."""
    columns = _function_columns(set(families))
    titles = [title for title, _ in columns]
    functions = []
    for function in audit.functions:
        if not _interesting(function):
            continue
        row: Record = {"function": function.name, "address": function.address, "size": function.size}
        row.update({title: value(function) for title, value in columns})
        if verbose:
            row["per_loop"] = [_loop_record(audit, loop) for loop in function.loops]
        functions.append(row)
    functions.sort(key=lambda row: _rank(row, titles))
    return {
        "library": audit.path,
        "cpu": audit.image.cpu_name,
        "notes": list(audit.notes),
        "functions_audited": len(audit.functions),
        "loops": sum(len(function.loops) for function in audit.functions),
        "columns": titles,
        "functions": functions,
    }


def merged_tables(tables: Sequence[Record]) -> Record:
    """The table_records of a whole library from those of its parts (consecutive runs of its functions, in order):
    the rows ranked again, as one table's (a stable sort: equal rows stay in function order)."""
    whole = dict(tables[0])
    titles = list(whole["columns"])  # type: ignore[call-overload]
    rows = [row for table in tables for row in table["functions"]]  # type: ignore[attr-defined]
    rows.sort(key=lambda row: _rank(row, titles))
    whole["functions_audited"] = sum(int(table["functions_audited"]) for table in tables)  # type: ignore[call-overload]
    whole["loops"] = sum(int(table["loops"]) for table in tables)  # type: ignore[call-overload]
    whole["functions"] = rows
    return whole


def _loop_record(audit: LibraryAudit, loop: LoopAudit) -> Record:
    location = audit.locate(loop.header)
    return {
        "header": loop.header,
        "end": loop.high,
        "kind": loop.kind,
        "depth": loop.depth,
        "vector_spill_stores": loop.vector_spill_stores,
        "vector_reloads": loop.vector_reloads,
        "scalar_spill_stores": loop.scalar_spill_stores,
        "scalar_reloads": loop.scalar_reloads,
        "round_trips": loop.round_trips,
        "array_accesses": loop.array_accesses,
        "promotions": loop.promotions,
        "divisions": loop.divisions,
        "calls": loop.calls,
        "source": f"{location.file}:{location.line}" if location and location.line > 0 else None,
    }


# ---------------------------------------------------------------- text


def _legend(titles: Iterable[str], width: int = 112) -> list[str]:
    entries = [f"{title} = {LEGEND[title]}" for title in titles if title in LEGEND]
    lines, current = [], "  columns:"
    for index, entry in enumerate(entries):
        piece = " " + entry + ("," if index < len(entries) - 1 else "")
        if len(current) + len(piece) > width and current != "  columns:":
            lines.append(current)
            current = "   "
        current += piece
    return [*lines, current]


def _count(number: object, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _shown_note(total: int, shown: int) -> str:
    if shown == total:
        return f"{total} shown, worst first"
    return f"the {shown} worst of {total} shown ({total - shown} hidden: --all shows every row, --top N more or fewer)"


def _loop_line(loop: Record, families: set[str]) -> str:
    cells = [str(loop["kind"])]
    if "spills" in families:
        cells += [
            f"vspill {loop['vector_spill_stores']}st/{loop['vector_reloads']}ld",
            f"sspill {loop['scalar_spill_stores']}st/{loop['scalar_reloads']}ld",
            f"trips {loop['round_trips']}",
            f"array {loop['array_accesses']}",
        ]
    if "promotions" in families:
        cells.append(f"promo {loop['promotions']}")
    if "division" in families:
        cells.append(f"div {loop['divisions']}")
    cells.append(f"calls {loop['calls']}")
    indent = "  " * int(loop["depth"])  # type: ignore[call-overload]
    where = f"  {loop['source']}" if loop["source"] else ""
    return f"    {indent}loop {loop['header']:#x}..{loop['end']:#x} depth {loop['depth']}: " + ", ".join(cells) + where


def render_table(table: Record, families: Iterable[str], top: int | None = None, verbose: bool = False) -> str:
    """One library's table; `top`: rows shown at most (None: all)."""
    families = set(families)
    titles = list(table["columns"])  # type: ignore[call-overload]
    rows: list[Record] = list(table["functions"])  # type: ignore[call-overload]
    shown = rows if top is None else rows[:top]
    header = (
        f"{table['library']} ({table['cpu']}): {_count(table['functions_audited'], 'function')} audited, "
        f"{_count(table['loops'], 'loop')}"
    )
    lines = [header + (f"; {_shown_note(len(rows), len(shown))}" if rows else "")]
    lines += [f"  note: {note}" for note in table["notes"]]  # type: ignore[attr-defined]
    if not shown:
        return "\n".join(lines) + "\n"
    lines += _legend(titles)
    name_width = max(len("function"), *(len(str(row["function"])) for row in shown))
    widths = [max(len(title), 4) for title in titles]
    lines.append(
        "  " + "function".ljust(name_width) + "".join(f"  {t:>{w}}" for t, w in zip(titles, widths, strict=True))
    )
    for row in shown:
        cells = "".join(f"  {row[title]:>{width}}" for title, width in zip(titles, widths, strict=True))
        lines.append("  " + str(row["function"]).ljust(name_width) + cells)
        if verbose:
            lines += [_loop_line(loop, families) for loop in row.get("per_loop", [])]  # type: ignore[attr-defined]
    return "\n".join(lines) + "\n"


def library_family(path: str) -> str:
    """The library's name with its CPU version blanked: `lib/libggml-htp-v73.so` -> `lib/libggml-htp-vNN.so`."""
    directory, name = os.path.split(path)
    return os.path.join(directory, _CPU_IN_NAME.sub("vNN", name))


def _short_cpu(cpu: object) -> str:
    text = str(cpu)
    return text[len("hexagon") :] if text.startswith("hexagon") else text


def render_merged_table(tables: Sequence[Record], families: Iterable[str], top: int | None = None) -> str:
    """Builds of one library for several CPUs: one row per function, one column per CPU for each ranked count."""
    families = set(families)
    cpus = [_short_cpu(table["cpu"]) for table in tables]
    titles = [
        title for family in ("spills", "promotions", "division") if family in families for title in MERGED[family]
    ]
    values: dict[str, list[dict[str, int]]] = {}
    for index, table in enumerate(tables):
        copies: dict[str, int] = {}
        for row in table["functions"]:  # type: ignore[attr-defined]
            # Two functions of one name (static copies in two units) are two rows, the worse first, as in each build.
            name = stable_function_name(str(row["function"]))
            copies[name] = copies.get(name, 0) + 1
            key = name if copies[name] == 1 else f"{name}#{copies[name]}"
            values.setdefault(key, [{} for _ in tables])[index] = {title: int(row[title]) for title in titles}

    def rank(name: str) -> tuple[object, ...]:
        worst = [-max(cells.get(title, 0) for cells in values[name]) for title in RANKED if title in titles]
        return (*worst, name)

    names = sorted(values, key=rank)
    shown = names if top is None else names[:top]
    audited = "/".join(str(table["functions_audited"]) for table in tables)
    header = f"{library_family(str(tables[0]['library']))} for {', '.join(cpus)}: {audited} functions audited"
    lines = [header + (f"; {_shown_note(len(names), len(shown))}" if names else "")]
    by_note: dict[str, list[str]] = {}
    for cpu, table in zip(cpus, tables, strict=True):
        for note in table["notes"]:  # type: ignore[attr-defined]
            by_note.setdefault(str(note), []).append(cpu)
    lines += [f"  note ({', '.join(builds)}): {note}" for note, builds in by_note.items()]
    if not shown:
        return "\n".join(lines) + "\n"
    lines += _legend(titles)
    lines.append(f"  one column per build: {' '.join(cpus)} ('-': no such function in that build)")
    name_width = max(len("function"), *(len(name) for name in shown))
    largest = max((value for builds in values.values() for cells in builds for value in cells.values()), default=0)
    width = max(len(str(largest)), *(len(cpu) for cpu in cpus))
    group = len(cpus) * (width + 1) + 2
    lines.append("  " + " " * name_width + "".join(f"{title:^{group}}" for title in titles).rstrip())
    lines.append(
        "  "
        + "function".ljust(name_width)
        + "".join("  " + "".join(f" {cpu:>{width}}" for cpu in cpus) for _ in titles)
    )
    for name in shown:
        cells = ""
        for title in titles:
            cells += "  " + "".join(
                f" {(str(build[title]) if title in build else '-'):>{width}}" for build in values[name]
            )
        lines.append("  " + name.ljust(name_width) + cells)
    return "\n".join(lines) + "\n"


def render_tables(
    tables: Sequence[Record], families: Iterable[str], top: int | None = None, verbose: bool = False
) -> str:
    """Every library's table, in the order given; builds of one library for several CPUs merged into one (not with
    `verbose`: loops are per build)."""
    families = list(families)
    groups: dict[str, list[Record]] = {}
    for table in tables:
        groups.setdefault(library_family(str(table["library"])), []).append(table)
    parts, done = [], set()
    for table in tables:
        key = library_family(str(table["library"]))
        if key in done:
            continue
        group = groups[key]
        cpus = [str(member["cpu"]) for member in group]
        if not verbose and len(group) > 1 and len(set(cpus)) == len(cpus):
            done.add(key)
            parts.append(render_merged_table(sorted(group, key=lambda member: str(member["cpu"])), families, top))
        else:
            parts.append(render_table(table, families, top, verbose))
    return "".join(parts)
