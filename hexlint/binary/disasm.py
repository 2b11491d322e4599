"""Annotated disassembly: packets with loop headers/back edges, spills, array accesses, promotions, calls, divisions.

Instruction text comes from LLVM when an objdump that knows Hexagon is found (in order: `--objdump PATH`,
`hexagon-llvm-objdump` under $HEXAGON_TOOLS_ROOT or $HEXAGON_SDK_ROOT, `llvm-objdump` on PATH, the newest
`llvm-objdump-NN` on PATH), run with `--mcpu` from the ELF's e_flags; otherwise hexlint's own rendering is shown.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path

from hexlint.binary.audit import CALL_ARGUMENT, FunctionAudit, LibraryAudit
from hexlint.elf import CodeSection

_LISTING_LINE = re.compile(r"^\s*([0-9a-f]+):\s*(.*)$")


@functools.cache
def _knows_hexagon(path: str) -> bool:
    try:
        result = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return "hexagon" in result.stdout.lower()


def find_objdumps(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> list[str]:
    """LLVM objdumps that support Hexagon, best first ('none' forces hexlint's own rendering)."""
    environ = os.environ if environ is None else environ
    if explicit:
        return [] if explicit == "none" else [explicit]
    candidates: list[str] = []
    for variable in ("HEXAGON_TOOLS_ROOT", "HEXAGON_SDK_ROOT"):
        root = environ.get(variable)
        if root and Path(root).is_dir():
            candidates += sorted(str(path) for path in Path(root).glob("**/bin/hexagon-llvm-objdump"))
    search_path = environ.get("PATH", os.defpath)
    plain = shutil.which("llvm-objdump", path=search_path)
    if plain:
        candidates.append(plain)
    versioned = set()
    for directory in search_path.split(os.pathsep):
        if directory and Path(directory).is_dir():
            versioned.update(str(path) for path in Path(directory).glob("llvm-objdump-[0-9]*"))
    candidates += sorted(versioned, key=lambda path: int(re.sub(r"\D", "", Path(path).name) or 0), reverse=True)
    return [candidate for candidate in dict.fromkeys(candidates) if _knows_hexagon(candidate)]


def find_objdump(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> str | None:
    found = find_objdumps(explicit, environ)
    return found[0] if found else None


def llvm_text(objdump: str, audit: LibraryAudit, section: CodeSection, low: int, high: int) -> dict[int, str]:
    """Word address -> LLVM's instruction text (packet braces removed) for [low, high) of a section; {} on failure."""
    image = audit.image
    base = section.address if image.is_relocatable else 0
    command = [
        objdump,
        "-d",
        "--no-show-raw-insn",
        f"--start-address={low - base:#x}",
        f"--stop-address={high - base:#x}",
        f"--section={section.name}",
    ]
    if image.cpu:
        command.append(f"--mcpu={image.cpu_name}")
    try:
        result = subprocess.run([*command, audit.path], capture_output=True, text=True, timeout=300, check=False)
    except (OSError, subprocess.SubprocessError):
        return {}
    if result.returncode != 0 or "not a recognized processor" in result.stderr:
        return {}  # e.g. an older LLVM that does not know this CPU version
    listing = {}
    for line in result.stdout.splitlines():
        match = _LISTING_LINE.match(line)
        if not match:
            continue
        text = match.group(2).replace("\t", " ").strip()
        text = re.sub(r"^\{\s*", "", text)
        text = re.sub(r"\s*\}(\s*:endloop\d)*\s*$", "", text)
        listing[int(match.group(1), 16) + base] = text
    return listing


def llvm_listing(audit: LibraryAudit, objdumps: list[str]) -> tuple[dict[int, str], str]:
    """One objdump run per code section over the span of the audited functions; the first objdump that works wins."""
    spans: dict[str, list[int]] = {}
    sections = {section.name: section for section in audit.image.code_sections}
    for function in audit.functions:
        section = audit.image.section_at(function.address)
        if section is None:
            continue
        low, high = spans.get(section.name, [function.address, function.address + function.size])
        spans[section.name] = [min(low, function.address), max(high, function.address + function.size)]
    for objdump in objdumps:
        listing: dict[int, str] = {}
        for name, (low, high) in spans.items():
            listing.update(llvm_text(objdump, audit, sections[name], low, high))
        if listing:
            return listing, f"text from {Path(objdump).name}"
    return {}, "hexlint's own rendering"


def _annotations(function: FunctionAudit) -> dict[int, list[str]]:
    notes: dict[int, list[str]] = defaultdict(list)
    for access in function.stack_accesses:
        kind = "vector" if access.is_vector else "scalar"
        if access.slot is None:
            notes[access.address].append(f"stack array {'store' if access.is_store else 'load'}")
        elif access.buffer_reason is not None:
            where = f"{access.slot[0]}+#{access.slot[1]}"
            direction = "store" if access.is_store else "load"
            if access.buffer_reason == CALL_ARGUMENT:
                notes[access.address].append(f"call argument {direction} {where}")
            else:
                notes[access.address].append(f"stack buffer {direction} {where} ({access.buffer_reason})")
        else:
            slot = f"{access.slot[0]}+#{access.slot[1]}"
            if access.loop is not None:
                notes[access.address].append(f"{kind} {'SPILL' if access.is_store else 'RELOAD'} {slot} (in loop)")
            else:  # prologue/epilogue saves and restores, values kept on the stack across straight-line code
                notes[access.address].append(f"{kind} {'store' if access.is_store else 'load'} {slot} (frame)")
    for call in function.calls:
        flags = [flag for flag, on in (("DIVISION", call.is_division), ("PROMOTION", call.is_promotion)) if on]
        notes[call.address].append(" ".join(["call", call.helper or "?", *flags]))
    for operation in function.double_operations:
        notes[operation.address].append("PROMOTION" if operation.is_conversion else "double arithmetic")
    return notes


def render_function(function: FunctionAudit, llvm: Mapping[int, str], source: str) -> str:
    """One function's listing; `llvm` maps word addresses to LLVM's text ({}: hexlint's own rendering)."""
    cfg = function.cfg
    number = {loop.header: index + 1 for index, loop in enumerate(sorted(cfg.loops, key=lambda loop: loop.header))}
    latches = defaultdict(list)
    for loop in cfg.loops:
        for latch in loop.latches:
            latches[latch].append(loop)
    block_by_last_packet = {cfg.packets[block.last_packet].address: block.start for block in cfg.blocks}
    notes = _annotations(function)
    lines = [
        f"{function.name} ({function.address:#x}..{function.address + function.size:#x}, "
        f"{len(cfg.loops)} loops, {len(cfg.packets)} packets; {source})"
    ]
    for packet in cfg.packets:
        for loop in cfg.loops:
            if loop.header == packet.address:
                lines.append(
                    f"{'':10}; ---- loop {number[loop.header]} ({loop.kind}, depth {loop.depth}"
                    f"{', irreducible' if loop.irreducible else ''}) begins"
                )
        seen_words: set[int] = set()
        for position, instruction in enumerate(packet.instructions):
            first_of_word = instruction.address not in seen_words
            seen_words.add(instruction.address)
            if llvm and not first_of_word:
                continue  # LLVM prints both duplex halves on one line
            text = llvm.get(instruction.address, instruction.text) if llvm else instruction.text
            brace = "{" if position == 0 else " "
            note = notes.get(instruction.address) if first_of_word else None
            comment = f"  ; {'; '.join(note)}" if note else ""
            lines.append(f"{instruction.address:8x}: {brace} {text}{comment}")
        endloop = "".join(f" :endloop{n}" for n in sorted(packet.endloop))
        lines.append(f"{'':10}}}{endloop}")
        block = block_by_last_packet.get(packet.address)
        for loop in latches.get(block, []) if block is not None else []:
            lines.append(f"{'':10}; ---- loop {number[loop.header]} back edge -> {loop.header:#x}")
    return "\n".join(lines) + "\n"


def render_disassembly(audit: LibraryAudit, objdump_option: str | None = None) -> str:
    llvm, source = llvm_listing(audit, find_objdumps(objdump_option))
    return "\n".join(render_function(function, llvm, source) for function in audit.functions)
