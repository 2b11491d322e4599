"""The per-function (and, with -v, per-loop) text table of the binary audit."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from hexlint.binary.audit import FunctionAudit, LibraryAudit, LoopAudit


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


def _loop_cells(loop: LoopAudit, families: set[str]) -> list[str]:
    cells = [loop.kind]
    if "spills" in families:
        cells += [
            f"vspill {loop.vector_spill_stores}st/{loop.vector_reloads}ld",
            f"sspill {loop.scalar_spill_stores}st/{loop.scalar_reloads}ld",
            f"trips {loop.round_trips}",
            f"array {loop.array_accesses}",
        ]
    if "promotions" in families:
        cells.append(f"promo {loop.promotions}")
    if "division" in families:
        cells.append(f"div {loop.divisions}")
    cells.append(f"calls {loop.calls}")
    return cells


def _interesting(function: FunctionAudit) -> bool:
    return bool(function.loops or function.stack_accesses or function.promotions or function.divisions)


def render_table(audit: LibraryAudit, families: Iterable[str], verbose: bool = False) -> str:
    families = set(families)
    columns = _function_columns(families)
    shown = [function for function in audit.functions if _interesting(function)]
    loop_count = sum(len(function.loops) for function in audit.functions)
    header = (
        f"{audit.path} ({audit.image.cpu_name}): {len(audit.functions)} functions audited, {loop_count} loops, "
        f"{len(shown)} shown"
    )
    lines = [header, *(f"  note: {note}" for note in audit.notes)]
    if not shown:
        return "\n".join(lines) + "\n"
    name_width = max(len("function"), *(len(function.name) for function in shown))
    widths = [max(len(title), 4) for title, _ in columns]
    lines.append(
        "  " + "function".ljust(name_width) + "".join(f"  {t:>{w}}" for (t, _), w in zip(columns, widths, strict=True))
    )
    for function in shown:
        cells = "".join(f"  {value(function):>{width}}" for (_, value), width in zip(columns, widths, strict=True))
        lines.append("  " + function.name.ljust(name_width) + cells)
        if verbose:
            for loop in function.loops:
                indent = "  " * loop.depth
                location = audit.locate(loop.header)
                where = f"  {location.file}:{location.line}" if location and location.line > 0 else ""
                lines.append(
                    f"    {indent}loop {loop.header:#x}..{loop.high:#x} depth {loop.depth}: "
                    + ", ".join(_loop_cells(loop, families))
                    + where
                )
    lines.append(
        "  columns: vspill/sspill = in-loop vector/scalar spill stores+reloads, trips = slots stored and reloaded "
        "in one loop, frame = spill-slot accesses outside loops, array = stack-array accesses (not spills)"
    )
    return "\n".join(lines) + "\n"


def table_records(audit: LibraryAudit, families: Iterable[str], verbose: bool = False) -> dict[str, object]:
    """The table as JSON-ready data (what `--format json` can print next to the findings): one record per shown
    function with the same columns as the text table, and `per_loop` (with DWARF file:line) when `verbose`."""
    families = set(families)
    columns = _function_columns(families)
    functions = []
    for function in audit.functions:
        if not _interesting(function):
            continue
        record: dict[str, object] = {"function": function.name, "address": function.address, "size": function.size}
        record.update({title: value(function) for title, value in columns})
        if verbose:
            record["per_loop"] = [_loop_record(audit, loop) for loop in function.loops]
        functions.append(record)
    return {"library": audit.path, "cpu": audit.image.cpu_name, "notes": list(audit.notes), "functions": functions}


def _loop_record(audit: LibraryAudit, loop: LoopAudit) -> dict[str, object]:
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
