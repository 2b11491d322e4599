"""--disasm: annotated listing with LLVM's text when an objdump knows Hexagon, hexlint's own otherwise."""

from __future__ import annotations

import argparse
import io
import os
import re
from pathlib import Path

import pytest
from test_binary_support import OBJDUMP

from hexlint.binary.disasm import find_objdumps
from hexlint.binary.options import add_binary_arguments
from hexlint.binary.run import run_disasm

ROOT = Path(__file__).resolve().parent.parent
TWINS = ROOT / "fixtures" / "binary"


def arguments(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="*")
    add_binary_arguments(parser)
    return parser.parse_args(list(argv))


def disasm(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run_disasm(arguments(*argv), out, err)
    return status, out.getvalue(), err.getvalue()


def test_spill_kernel_listing_marks_the_loop_and_its_spills():
    status, text, _ = disasm("--disasm", "spill_kernel", "--objdump", "none", str(TWINS / "vector_spill.so"))
    assert status == 0
    assert text.splitlines()[0].startswith("spill_kernel (") and "hexlint's own rendering" in text.splitlines()[0]
    assert "; ---- loop 1 (branch, depth 1) begins" in text
    assert "; ---- loop 1 back edge ->" in text
    begin = text.index("loop 1 (branch")
    end = text.index("loop 1 back edge")
    inside = text[begin:end]
    assert "vector SPILL r29+#" in inside and "(in loop)" in inside
    assert "vector RELOAD r29+#" in inside
    assert "(frame)" in text[:begin]  # the accumulators initialised before the loop


def test_stack_array_accesses_are_not_marked_as_spills():
    status, text, _ = disasm("--disasm", "^legal_stack_array$", "--objdump", "none", str(TWINS / "vector_spill.so"))
    assert status == 0
    assert not re.search(r"SPILL .*\(in loop\)|RELOAD .*\(in loop\)", text)


def test_stack_array_indexed_through_addasl_is_marked_as_array():
    # acc[bucket[k] % 40]: r28 = addasl(r14, r28, #7) with r14 = add(r29, #0x180), then vmem(r28+#0)
    if "addasl" not in decoded_text(TWINS / "vector_spill.so", "legal_stack_array"):
        pytest.skip("the decoder does not decode addasl (and its register write) yet")
    _, text, _ = disasm("--disasm", "^legal_stack_array$", "--objdump", "none", str(TWINS / "vector_spill.so"))
    assert "stack array" in text


def decoded_text(library: Path, function_name: str) -> str:
    from hexlint.binary.audit import audit_image
    from hexlint.elf import load_elf

    function = audit_image(load_elf(library), function_filter=lambda name: name == function_name).functions[0]
    return "\n".join(instruction.text for packet in function.cfg.packets for instruction in packet.instructions)


def test_division_and_promotion_calls_are_annotated():
    _, text, _ = disasm("--disasm", "udiv_in_loop", "--objdump", "none", str(TWINS / "division.so"))
    assert "call __hexagon_udivsi3 DIVISION" in text
    _, text, _ = disasm("--disasm", "promote_in_loop", "--objdump", "none", str(TWINS / "float_promotion.so"))
    assert "PROMOTION" in text or "double arithmetic" in text


def test_llvm_text_is_used_when_llvm_objdump_knows_hexagon():
    if not OBJDUMP:
        pytest.skip("llvm-objdump-22 is needed")
    status, text, _ = disasm("--disasm", "udiv_in_loop", "--objdump", OBJDUMP, str(TWINS / "division.so"))
    assert status == 0
    assert "text from llvm-objdump-22" in text.splitlines()[0]
    oracle = (TWINS / "division.objdump.txt").read_text()
    # the call line carries LLVM's own spelling, including the PLT symbol it prints
    call_lines = [line for line in text.splitlines() if "__hexagon_udivsi3@plt" in line]
    assert call_lines and all("DIVISION" in line for line in call_lines)
    first = re.search(r"^\s*([0-9a-f]+):.*call .*<__hexagon_udivsi3@plt>", oracle, re.MULTILINE)
    assert first is not None and first.group(1) in text


def test_automatic_objdump_choice_skips_versions_that_do_not_know_the_cpu():
    if not OBJDUMP:
        pytest.skip("llvm-objdump-22 is needed")
    status, text, _ = disasm("--disasm", "udiv_in_loop", str(TWINS / "division.so"))
    assert status == 0 and "text from llvm-objdump" in text.splitlines()[0]


def test_sdk_objdump_comes_first(tmp_path):
    tool = tmp_path / "tools" / "bin" / "hexagon-llvm-objdump"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\necho 'Registered Targets: hexagon - Hexagon'\n")
    tool.chmod(0o755)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert find_objdumps(environ={"HEXAGON_TOOLS_ROOT": str(tmp_path / "tools"), "PATH": str(empty)}) == [str(tool)]
    assert find_objdumps(environ={"PATH": str(empty)}) == []
    assert find_objdumps("none", environ=dict(os.environ)) == []


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--disasm", "no_such_function", str(TWINS / "division.so")], "matches no function"),
        (["--disasm", "(", str(TWINS / "division.so")], "invalid regular expression"),
        (["--disasm", "udiv"], "give the library"),
        (["--disasm", "udiv", str(TWINS / "division.c")], "not an ELF file"),
    ],
)
def test_disasm_errors_are_one_line_exit_2(argv, message):
    status, _, err = disasm(*argv)
    assert status == 2
    assert message in err and err.count("\n") == 1


def test_exact_name_wins_over_regex_search():
    _, text, _ = disasm("--disasm", "udiv_in_loop", "--objdump", "none", str(TWINS / "division.so"))
    headers = [line for line in text.splitlines() if re.match(r"^\S+ \(0x", line)]
    assert len(headers) == 1 and headers[0].startswith("udiv_in_loop (")


def test_stack_buffers_and_call_arguments_are_named_not_marked_as_spills():
    twin = str(TWINS / "stack_buffers.so")
    status, masked, _ = disasm("--disasm", "^legal_masked_reduction$", "--objdump", "none", twin)
    assert status == 0
    assert "stack buffer store r29+#0 (predicated store)" in masked
    assert "stack buffer load r29+#0 (predicated store)" in masked
    status, logging, _ = disasm("--disasm", "^legal_log_in_loop$", "--objdump", "none", twin)
    assert status == 0
    assert "call argument store r29+#0" in logging and "call argument store r29+#8" in logging
    for listing in (masked, logging):
        assert not re.search(r"SPILL .*\(in loop\)|RELOAD .*\(in loop\)", listing)
