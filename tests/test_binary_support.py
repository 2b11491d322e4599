"""Support for the binary-audit tests (no tests here): hand-made decoded packets and clang-22 test programs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from hexlint.hexagon.decode import Instruction, LoopSetup, MemoryAccess, Packet, RegisterWrite

CLANG = shutil.which("clang-22")
LLD = shutil.which("ld.lld-22")
OBJDUMP = shutil.which("llvm-objdump-22")
ADDR2LINE = shutil.which("llvm-addr2line-22")
HEXAGON_FLAGS = ["--target=hexagon-unknown-none-elf", "-mhvx", "-mhvx-length=128b", "-fPIC", "-ffreestanding"]


def insn(address: int, text: str = "nop", **fields: object) -> Instruction:
    return Instruction(address=address, word=0, iclass="ALU32", mnemonic=text.split()[0], text=text, **fields)


def packet(address: int, *instructions: Instruction, endloop: frozenset[int] = frozenset()) -> Packet:
    if not instructions:
        instructions = (insn(address),)
    return Packet(address=address, size=4 * len(instructions), instructions=instructions, endloop=endloop)


def nop(address: int) -> Packet:
    return packet(address, insn(address))


def jump(address: int, target: int, conditional: bool = False) -> Instruction:
    return insn(address, f"jump {target:#x}", branch="jump", target=target, conditional=conditional)


def call(address: int, target: int) -> Instruction:
    return insn(address, f"call {target:#x}", branch="call", target=target)


def ret(address: int) -> Instruction:
    return insn(address, "jumpr r31", branch="return")


def loop_setup(address: int, start: int, loop: int = 0, stages: int = 0) -> Instruction:
    return insn(address, f"loop{loop}({start:#x},#8)", loop_setup=LoopSetup(loop, start, 8, None, stages))


def store(
    address: int, base: str, offset: int | None, register: str = "v0", vector: bool = True, **extra
) -> Instruction:
    size = 128 if vector else 4
    access = MemoryAccess(base, offset, True, vector, size, register=register, **extra)
    return insn(address, f"vmem({base}+#{offset}) = {register}", memory=access, is_hvx=vector)


def load(
    address: int, base: str, offset: int | None, register: str = "v0", vector: bool = True, **extra
) -> Instruction:
    size = 128 if vector else 4
    access = MemoryAccess(base, offset, False, vector, size, register=register, **extra)
    return insn(address, f"{register} = vmem({base}+#{offset})", memory=access, is_hvx=vector)


def add_imm(address: int, dest: str, source: str, immediate: int) -> Instruction:
    return insn(
        address, f"{dest} = add({source},#{immediate})", writes=(RegisterWrite(dest, "add_imm", source, immediate),)
    )


def other_write(address: int, dest: str, source: str | None = None) -> Instruction:
    return insn(address, f"{dest} = other", writes=(RegisterWrite(dest, "other", source),))


def require_toolchain() -> None:
    if not (CLANG and LLD):
        pytest.skip("clang-22 and ld.lld-22 are needed to build Hexagon test programs")


def build_library(
    directory: Path, source: str, name: str = "prog", cpu: str = "v73", extra: tuple[str, ...] = ()
) -> Path:
    """Compile C source for Hexagon and link a shared object (skips when the toolchain is absent)."""
    require_toolchain()
    c_file = directory / f"{name}.c"
    c_file.write_text(source)
    object_file = directory / f"{name}.o"
    library = directory / f"lib{name}.so"
    subprocess.run(
        [CLANG, *HEXAGON_FLAGS, f"-mcpu=hexagon{cpu}", "-O3", *extra, "-c", str(c_file), "-o", str(object_file)],
        check=True,
        capture_output=True,
    )
    subprocess.run([LLD, "-shared", str(object_file), "-o", str(library)], check=True, capture_output=True)
    return library


def noreturn_before_a_loop() -> list[Packet]:
    """The entry either enters the loop at its test (0x10C) or calls __assert_fail (0x104 -> 0x900), laid out before
    the body (0x108): only a call that never returns keeps the loop's one entry."""
    return [
        packet(0x100, jump(0x100, 0x10C, conditional=True)),
        packet(0x104, call(0x104, 0x900)),
        packet(0x108, insn(0x108, "r0 = add(r0,#1)")),
        packet(0x10C, jump(0x10C, 0x108, conditional=True)),
        packet(0x110, ret(0x110)),
    ]
