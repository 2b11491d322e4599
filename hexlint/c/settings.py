"""What decides a parse, without libclang: the parse settings and a file's role. A run the persistent cache answers
needs these and never loads clang.cindex (hexlint/c/parse.py re-exports them)."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath

KERNEL = "kernel"
HOST = "host"
ARCHES = ("v68", "v69", "v73", "v75", "v79", "v81")
KERNEL_DIR_NAMES = ("htp",)
C_SUFFIXES = (".c", ".h")
CXX_SUFFIXES = (".cpp", ".cc", ".cxx", ".hpp", ".hh", ".hxx")


@dataclass(frozen=True)
class ParseSettings:
    arch: str = "v73"
    include_dirs: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    # The defines the tree's own build files give this file (hexlint/cmake.py); left out when compile_commands
    # records the file's real command. They come before `defines`, which the configuration and -D override with.
    build_defines: tuple[str, ...] = ()
    compile_commands: str | None = None
    sdk_root: str | None = None
    # Appended to the clang arguments as given (like clang-tidy's --extra-arg), e.g. "-nostdinc++" or "-DNDEBUG".
    extra_arguments: tuple[str, ...] = ()
    # (absolute path, contents) libclang reads instead of the disk: the text of `--stdin-filename PATH -`.
    unsaved: tuple[tuple[str, bytes], ...] = ()


def classify(path: str | os.PathLike[str], kernel_globs: Sequence[str] = (), host_globs: Sequence[str] = ()) -> str:
    """Kernel code is what runs on the NPU: by default any file below an `htp` directory."""
    posix = PurePath(path).as_posix()
    if any(fnmatch.fnmatch(posix, glob) for glob in kernel_globs):
        return KERNEL
    if any(fnmatch.fnmatch(posix, glob) for glob in host_globs):
        return HOST
    parents = PurePath(path).parent.parts
    return KERNEL if any(part in KERNEL_DIR_NAMES for part in parents) else HOST


def is_cxx(path: str | os.PathLike[str]) -> bool:
    return str(path).lower().endswith(CXX_SUFFIXES)
