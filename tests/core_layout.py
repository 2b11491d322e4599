"""Reading fixtures/htp-core/htp/htp-ops.h from tests: the fields of each `*_kernel_params` struct, in order,
and the decoding of a node's kernel_params bytes (the Hexagon layout: 32-bit little endian, no padding)."""

from __future__ import annotations

import re
import struct
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "fixtures" / "htp-core"
HEADER = CORE / "htp" / "htp-ops.h"

# C type -> struct format of its leaves; struct fastdiv_values is { uint32_t mp; uint32_t l; }
FIELD_FORMATS = {"uint32_t": "<I", "int32_t": "<i", "float": "<f", "struct fastdiv_values": "<II"}
FIELD = re.compile(r"^\s+(struct \w+|\w+)\s+(\w+);", re.M)


def kernel_params_layout(struct_name: str, header: str | None = None) -> list[tuple[str, str]]:
    """(C type, field name) of each member of `struct_name`, in declaration order."""
    text = header if header is not None else HEADER.read_text()
    body = re.search(rf"struct {struct_name} \{{(.*?)\n\}};", text, re.S)
    if body is None:
        raise KeyError(struct_name)
    return FIELD.findall(body.group(1))


def decode_kernel_params(struct_name: str, data: bytes) -> dict[str, object]:
    """Field name -> value (fastdiv fields -> (mp, l)) from the start of a node's kernel_params bytes."""
    values: dict[str, object] = {}
    offset = 0
    for ctype, name in kernel_params_layout(struct_name):
        fmt = FIELD_FORMATS[ctype]
        unpacked = struct.unpack_from(fmt, data, offset)
        values[name] = unpacked[0] if len(unpacked) == 1 else unpacked
        offset += struct.calcsize(fmt)
    return values
