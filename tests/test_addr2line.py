"""addr2line: DWARF lines and inlined frames against llvm-addr2line-22, and the --addr2line CLI entry point."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
from pathlib import Path

import pytest
from test_binary_support import ADDR2LINE, build_library

from hexlint.binary.addr2line import addresses_in_text, parse_address
from hexlint.binary.options import add_binary_arguments
from hexlint.binary.run import run_addr2line
from hexlint.elf import DebugInfo, load_elf

ROOT = Path(__file__).resolve().parent.parent
DEBUG_CORE = ROOT / "fixtures" / "htp-core" / "lib" / "libhtp-core-v73-g.so"

INLINED = r"""
static inline __attribute__((always_inline)) int inner(int x) {
    return x * 3 + 1;
}
static inline __attribute__((always_inline)) int middle(int x) {
    return inner(x) ^ inner(x + 7);
}
int outer(const int *v, int n) {
    int s = 0;
    for (int i = 0; i < n; i++) s += middle(v[i]);
    return s;
}
"""


def llvm_frames(library: Path, addresses: list[int]) -> dict[int, list[tuple[str, str, int, int]]]:
    text = "\n".join(hex(address) for address in addresses) + "\n"
    result = subprocess.run(
        [ADDR2LINE, "-f", "-i", "--output-style=JSON", "-e", str(library)],
        input=text,
        capture_output=True,
        text=True,
        check=True,
    )
    frames = {}
    for line in result.stdout.splitlines():
        record = json.loads(line)
        frames[int(record["Address"], 16)] = [
            (symbol["FunctionName"], symbol["FileName"], symbol["Line"], symbol["Column"])
            for symbol in record["Symbol"]
        ]
    return frames


def our_frames(debug: DebugInfo, address: int) -> list[tuple[str, str, int, int]]:
    return [
        (
            frame.function or "",
            frame.location.file if frame.location else "",
            *((frame.location.line, frame.location.column) if frame.location else (0, 0)),
        )
        for frame in debug.frames(address)
    ]


def compare_every_instruction(library: Path) -> tuple[int, list[str]]:
    image = load_elf(library)
    debug = DebugInfo(image)
    addresses = [
        a for section in image.code_sections for a in range(section.address, section.address + len(section.data), 4)
    ]
    expected = llvm_frames(library, addresses)
    compared, mismatches = 0, []
    for address in addresses:
        theirs = expected[address]
        if not theirs or not theirs[0][0]:
            continue  # llvm knows no function here (padding between functions)
        compared += 1
        ours = our_frames(debug, address)
        if ours != theirs:
            mismatches.append(f"{address:#x}: ours {ours} llvm {theirs}")
    return compared, mismatches


def test_every_instruction_of_the_debug_core_build_matches_llvm_addr2line():
    if not ADDR2LINE:
        pytest.skip("llvm-addr2line-22 is needed as the oracle")
    compared, mismatches = compare_every_instruction(DEBUG_CORE)
    assert compared > 5000
    assert not mismatches, "\n".join(mismatches[:20])


@pytest.mark.parametrize("dwarf_version", [4, 5])
def test_inlined_frames_match_llvm_addr2line_in_dwarf_4_and_5(tmp_path, dwarf_version):
    if not ADDR2LINE:
        pytest.skip("llvm-addr2line-22 is needed as the oracle")
    library = build_library(tmp_path, INLINED, extra=("-g", f"-gdwarf-{dwarf_version}", "-O2"))
    compared, mismatches = compare_every_instruction(library)
    assert compared > 10
    assert not mismatches, "\n".join(mismatches[:20])
    debug = DebugInfo(load_elf(library))
    depths = [len(debug.frames(address)) for address in range(0x10000, 0x20000, 4) if debug.location(address)]
    assert max(depths) == 3  # inner inlined into middle inlined into outer


def arguments(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="*")
    add_binary_arguments(parser)
    return parser.parse_args(list(argv))


class NoStdin(io.StringIO):
    def read(self, *args):  # pragma: no cover - reaching this is the failure
        raise AssertionError("stdin must not be read without '-'")


def test_cli_resolves_explicit_addresses_to_function_offset_and_lines():
    image = load_elf(DEBUG_CORE)
    function = next(f for f in image.functions if f.name == "binary_task")
    out, err = io.StringIO(), io.StringIO()
    status = run_addr2line(arguments("--addr2line", hex(function.address + 0x40), str(DEBUG_CORE)), NoStdin(), out, err)
    assert status == 0, err.getvalue()
    lines = out.getvalue().splitlines()
    assert lines[0] == f"{function.address + 0x40:#010x}: binary_task+0x40"
    assert lines[1].startswith("    at ") and (".c:" in lines[1] or ".h:" in lines[1])


def test_cli_reads_addresses_from_a_crash_log_on_stdin():
    image = load_elf(DEBUG_CORE)
    task = next(f for f in image.functions if f.name == "matmul_task")
    log = (
        "11-30 06:12:01.123  1234  1250 E adsprpc : vendor/qcom/.../fastrpc.c:1234: Error 0x80000406: crash\n"
        f"11-30 06:12:01.124  1234  1250 E ggml-hex: FARF: pc {task.address + 8:#x} sp 0xdeadbee0 lr 0x1\n"
        f"    #00 pc {task.address + 16:08x}  /vendor/lib/rfsa/adsp/libggml-htp-v73.so\n"
    )
    out, err = io.StringIO(), io.StringIO()
    status = run_addr2line(arguments("--addr2line", "-", str(DEBUG_CORE)), io.StringIO(log), out, err)
    assert status == 0, err.getvalue()
    text = out.getvalue()
    assert "matmul_task+0x8" in text and "matmul_task+0x10" in text
    assert "0xdeadbee0" not in text and "80000406" not in text  # not code addresses: skipped


def test_cli_reports_addresses_outside_the_code():
    out, err = io.StringIO(), io.StringIO()
    assert run_addr2line(arguments("--addr2line", "0x4", str(DEBUG_CORE)), NoStdin(), out, err) == 0
    assert "not in the library's code" in out.getvalue()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--addr2line", "0x10000"], "give the library"),
        (["--addr2line", "zz9", str(DEBUG_CORE)], "not a hex address"),
        (["--addr2line", "0x1", str(DEBUG_CORE), str(DEBUG_CORE.with_name("libhtp-core-v73.so"))], "one library"),
    ],
)
def test_cli_errors_are_one_line_and_exit_2(argv, message):
    out, err = io.StringIO(), io.StringIO()
    assert run_addr2line(arguments(*argv), NoStdin(), out, err) == 2
    assert message in err.getvalue() and err.getvalue().count("\n") == 1


def test_cli_on_a_non_elf_file_is_exit_2(tmp_path):
    bogus = tmp_path / "lib.so"
    bogus.write_text("not an elf")
    err = io.StringIO()
    assert run_addr2line(arguments("--addr2line", "0x10", str(bogus)), NoStdin(), io.StringIO(), err) == 2
    assert err.getvalue() == f"hexlint: error: {bogus}: not an ELF file\n"


def test_library_without_dwarf_gives_function_offset_and_a_note():
    library = ROOT / "fixtures" / "htp-core" / "lib" / "libhtp-core-v73.so"
    function = load_elf(library).functions[0]
    out = io.StringIO()
    assert (
        run_addr2line(arguments("--addr2line", hex(function.address), str(library)), NoStdin(), out, io.StringIO()) == 0
    )
    assert f"{function.name}+0x0" in out.getvalue()
    assert "note:" in out.getvalue()


def test_address_parsing():
    assert parse_address("0x51A30") == 0x51A30
    assert parse_address("51a30") == 0x51A30
    assert addresses_in_text("at 0x10 and 0x10, pc 0001a2b4 and 0x20") == [0x10, 0x1A2B4, 0x20]


def _hexlint_process(*argv: str, stdin_text: str | None = None) -> subprocess.CompletedProcess:
    import os
    import sys

    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "hexlint", *argv]
    if stdin_text is not None:
        return subprocess.run(command, input=stdin_text, capture_output=True, text=True, timeout=120, env=environment)
    # stdin is a pipe nobody writes to or closes: reading it would hang until the timeout
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment
    ) as process:
        out, err = _communicate_without_closing(process)
        return subprocess.CompletedProcess(command, process.returncode, out, err)


def _communicate_without_closing(process: subprocess.Popen) -> tuple[str, str]:
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        raise AssertionError("hexlint --addr2line blocked on a non-interactive stdin") from None
    return process.stdout.read(), process.stderr.read()


def test_console_addr2line_never_reads_an_open_stdin_without_dash():
    image = load_elf(DEBUG_CORE)
    function = image.functions[3]
    result = _hexlint_process("--addr2line", hex(function.address), str(DEBUG_CORE))
    assert result.returncode == 0, result.stderr
    assert f"{function.name}+0x0" in result.stdout


def test_console_addr2line_dash_reads_a_piped_log():
    image = load_elf(DEBUG_CORE)
    function = image.functions[5]
    log = f"E/FastRPC: crash at pc {function.address + 4:#x} in libhtp\n"
    result = _hexlint_process("--addr2line", "-", str(DEBUG_CORE), stdin_text=log)
    assert result.returncode == 0, result.stderr
    assert f"{function.name}+0x4" in result.stdout


def test_line_tables_are_decoded_only_for_the_units_asked_about():
    image = load_elf(DEBUG_CORE)
    lazy = DebugInfo(image)
    function = max(image.functions, key=lambda symbol: symbol.size)
    asked = range(function.address, function.end, 4)
    lazy_answers = [lazy.location(address) for address in asked]
    assert lazy.decoded_units == 1  # one function lies in one compilation unit
    eager = DebugInfo(image)
    for symbol in image.functions:  # every unit decoded: the answers must not depend on what was decoded before
        eager.location(symbol.address)
    assert eager.decoded_units > 3
    assert lazy_answers == [eager.location(address) for address in asked]
    assert any(answer is not None for answer in lazy_answers)


def _pyelftools_and_our_rows(library: Path) -> tuple[list, list]:
    import elftools.elf.elffile as elffile

    from hexlint.elf.dwarf import line_program_rows

    dwarf = elffile.ELFFile(io.BytesIO(library.read_bytes())).get_dwarf_info()
    theirs, ours = [], []
    for unit in dwarf.iter_CUs():
        program = dwarf.line_program_for_CU(unit)
        for entry in program.get_entries():
            if entry.state is not None:
                state = entry.state
                theirs.append((state.address, state.file, state.line, state.column, bool(state.end_sequence)))
        data = program.stream.getvalue()
        start, end = program.program_start_offset, program.program_end_offset
        ours += line_program_rows(data, start, end, program.header, unit["address_size"])
    return theirs, ours


@pytest.mark.parametrize("dwarf_version", [4, 5])
def test_our_line_program_decoder_gives_pyelftools_rows(tmp_path, dwarf_version):
    theirs, ours = _pyelftools_and_our_rows(DEBUG_CORE)
    assert len(theirs) > 1000
    assert ours == theirs
    library = build_library(tmp_path, INLINED, extra=("-g", f"-gdwarf-{dwarf_version}", "-O2"))
    theirs, ours = _pyelftools_and_our_rows(library)
    assert theirs and ours == theirs


def test_a_corrupt_line_program_gives_no_lines_and_no_traceback(tmp_path):
    import elftools.elf.elffile as elffile

    raw = bytearray(DEBUG_CORE.read_bytes())
    dwarf = elffile.ELFFile(io.BytesIO(bytes(raw))).get_dwarf_info()
    section_offset = elffile.ELFFile(io.BytesIO(bytes(raw))).get_section_by_name(".debug_line")["sh_offset"]
    for unit in dwarf.iter_CUs():
        program = dwarf.line_program_for_CU(unit)
        start, end = program.program_start_offset, program.program_end_offset
        # an extended opcode whose LEB128 length never ends runs off the section
        raw[section_offset + start : section_offset + end] = b"\x00" + b"\xff" * (end - start - 1)
    corrupt = tmp_path / "corrupt.so"
    corrupt.write_bytes(bytes(raw))
    image = load_elf(corrupt)
    debug = DebugInfo(image)
    function = max(image.functions, key=lambda symbol: symbol.size)
    assert debug.location(function.address) is None  # the opcodes are gone, the audit goes on without lines
    assert debug.frames(function.address)[0].location is None


@pytest.mark.parametrize(
    "library",
    [DEBUG_CORE, ROOT / "fixtures" / "binary" / "vector_spill.so", ROOT / "fixtures" / "binary" / "stack_buffers.so"],
    ids=lambda path: path.name,
)
def test_the_raw_scan_for_frame_variables_agrees_with_pyelftools(library, monkeypatch):
    from hexlint.elf import dwarf

    image = load_elf(library)
    fast = DebugInfo(image)
    fast_objects = {symbol.address: fast.frame_objects(symbol.address) for symbol in image.functions}

    def unknown_form(*_arguments):
        raise dwarf._UnknownForm("test")

    monkeypatch.setattr(dwarf, "_frame_location_candidates", unknown_form)  # the slow path, every entry decoded
    slow = DebugInfo(image)
    assert fast_objects == {symbol.address: slow.frame_objects(symbol.address) for symbol in image.functions}
    assert fast.error is None and slow.error is None
    if library.name == "vector_spill.so":  # legal_stack_array's HVX_Vector acc[40]
        assert any(item.name == "acc" and item.size == 40 * 128 for items in fast_objects.values() for item in items)
