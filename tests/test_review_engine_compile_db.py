"""compile_commands.json is read once per run, not once per parsed file, and each file keeps its own flags."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hexlint.c import parse

FILE_COUNT = 5


def _database(tmp_path: Path) -> tuple[Path, list[Path]]:
    sources = []
    entries = []
    for number in range(FILE_COUNT):
        source = tmp_path / "src" / f"unit{number}.cpp"
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(f"#if UNIT != {number}\n#error wrong flags\n#endif\n")
        sources.append(source)
        command = f"c++ -Iinc{number} -DUNIT={number} -O2 -c {source.name}"
        entries.append({"directory": str(source.parent), "command": command, "file": source.name})
    database = tmp_path / "compile_commands.json"
    database.write_text(json.dumps(entries))
    return database, sources


def _count_json_loads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real_loads = json.loads

    def counting_loads(text, *args, **kwargs):
        calls.append(1)
        return real_loads(text, *args, **kwargs)

    monkeypatch.setattr(parse.json, "loads", counting_loads)
    return calls


def test_database_is_parsed_once_for_many_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    database, sources = _database(tmp_path)
    calls = _count_json_loads(monkeypatch)
    settings = parse.ParseSettings(compile_commands=str(database))
    for number, source in enumerate(sources):
        unit = parse.parse_unit(str(source), parse.HOST, settings)
        assert [d.message for d in unit.diagnostics] == []
        assert f"-DUNIT={number}" in unit.arguments
        assert f"-I{source.parent / f'inc{number}'}" in unit.arguments
        assert "-O2" not in unit.arguments
    assert len(calls) == 1


def test_each_file_gets_its_own_recorded_flags(tmp_path: Path) -> None:
    database, sources = _database(tmp_path)
    for number, source in enumerate(sources):
        assert parse.compile_command_arguments(str(database), str(source)) == [
            f"-I{os.path.join(source.parent, f'inc{number}')}",
            f"-DUNIT={number}",
        ]
    assert parse.compile_command_arguments(str(database), str(tmp_path / "absent.c")) is None


def test_an_edited_database_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    database, sources = _database(tmp_path)
    calls = _count_json_loads(monkeypatch)
    assert parse.compile_command_arguments(str(database), str(sources[0])) == [
        f"-I{os.path.join(sources[0].parent, 'inc0')}",
        "-DUNIT=0",
    ]
    entry = {"directory": str(sources[0].parent), "command": f"cc -DEDITED -c {sources[0].name}", "file": "unit0.cpp"}
    database.write_text(json.dumps([entry]))
    later = database.stat().st_mtime_ns + 1_000_000_000
    os.utime(database, ns=(later, later))
    assert parse.compile_command_arguments(str(database), str(sources[0])) == ["-DEDITED"]
    assert len(calls) == 2
