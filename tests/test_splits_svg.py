"""The SVG timeline of `hexlint splits`, shown by a real browser: headless Chromium (Debian's `chromium`, installed by
scripts/bootstrap.sh) takes a screenshot, and the boundary markers are counted on it by colour, per graph row."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from conftest import REPO_ROOT, run_hexlint

from hexlint.splits.svg import COLOURS, NPU_COLOUR, ROW

LOGS = REPO_ROOT / "fixtures" / "splits"


def read_png(path: Path) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGBA or RGB bytes) of an 8-bit, non-interlaced PNG: enough for a screenshot."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, chunks, header = 8, [], None
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        body = data[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        position += 12 + length
    assert header is not None
    width, height, depth, colour_type, _, _, interlace = header
    assert depth == 8 and interlace == 0 and colour_type in (2, 6)
    channels = 4 if colour_type == 6 else 3
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                guess = left + up - corner
                pa, pb, pc = abs(guess - left), abs(guess - up), abs(guess - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        rows.append(bytes(line) if channels == 3 else bytes(b for j, b in enumerate(line) if j % 4 != 3))
        previous = line
    return width, height, rows


def rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))


def runs_of(row: bytes, colour: tuple[int, int, int]) -> int:
    """How many separate runs of pixels of `colour` (within a small tolerance) the row holds."""
    runs, inside = 0, False
    for x in range(len(row) // 3):
        pixel = row[3 * x : 3 * x + 3]
        match = all(abs(pixel[i] - colour[i]) <= 6 for i in range(3))
        if match and not inside:
            runs += 1
        inside = match
    return runs


@pytest.mark.slow
def test_the_timeline_shows_each_boundary_in_its_colour(tmp_path: Path) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium is not installed (scripts/bootstrap.sh installs it as root)")
    svg = tmp_path / "splits.svg"
    tree = str(LOGS / "tree")
    logs = [str(LOGS / "transformer-layer.log"), str(LOGS / "two-builds.log")]
    run = run_hexlint("splits", "--tree", tree, "--format", "svg", "--output", str(svg), *logs)
    assert run.status == 0, run.stderr
    width, height = (int(value) for value in re.search(r'width="(\d+)" height="(\d+)"', svg.read_text()).groups())
    png = tmp_path / "splits.png"
    subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--force-device-scale-factor=1",
         f"--window-size={width},{height}", f"--screenshot={png}", svg.as_uri()],
        check=True, capture_output=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    shot_width, shot_height, rows = read_png(png)
    assert (shot_width, shot_height) == (width, height)
    # per graph row: (hard, movable, free) markers, and the NPU segments between them
    expected = [(2, 2, 1, 5), (1, 1, 1, 3), (1, 1, 1, 3)]
    for row, (hard, movable, free, segments) in enumerate(expected):
        markers = rows[60 + ROW * row + 74]  # below the segment bar, inside the boundary markers
        counted = tuple(runs_of(markers, rgb(COLOURS[kind])) for kind in ("hard", "movable", "free"))
        assert counted == (hard, movable, free), f"graph row {row}"
        bar = rows[60 + ROW * row + 44]  # through the segment bar: NPU runs, cut by the markers
        assert runs_of(bar, rgb(NPU_COLOUR)) >= segments
    assert not any(runs_of(rows[y], rgb(COLOURS["hard"])) for y in range(60 + ROW * 3, height))  # nothing below
