"""A wrongly typed value inside a rule option (a list item, a table value) is a one-line config error, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from hexlint import config, registry

KERNEL = "static int f(int *p) { return p ? *p : 0; }\n"


@pytest.mark.parametrize(
    ("option_line", "named"),
    [
        ('required_operand_slots = { "*" = ["a"] }', "`required_operand_slots` of rule HX104 must be a table of list"),
        ('required_operand_slots = { "*" = 0 }', "`required_operand_slots` of rule HX104 must be a table of list"),
        ("internal_pointer_names = [1, 2]", "`internal_pointer_names` of rule HX104 must be a list of string"),
        ('internal_pointer_names = ["ctx", ["nested"]]', "`internal_pointer_names` of rule HX104 must be a list"),
    ],
)
def test_bad_value_inside_an_option_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hexlint_cli, option_line: str, named: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "htp").mkdir()
    (tmp_path / "htp" / "k.c").write_text(KERNEL)
    (tmp_path / "pyproject.toml").write_text(f"[tool.hexlint.rules.HX104]\n{option_line}\n")
    run = hexlint_cli("htp/k.c")
    assert run.status == 2, run
    assert run.stdout == ""
    assert run.stderr.count("\n") == 1, run.stderr
    assert "pyproject.toml" in run.stderr and named in run.stderr
    assert "internal error" not in run.stderr and "Traceback" not in run.stderr


def test_well_shaped_nested_values_are_accepted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hexlint_cli) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "htp").mkdir()
    (tmp_path / "htp" / "k.c").write_text(KERNEL)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.hexlint.rules.HX104]\nrequired_operand_slots = { "*" = [0, 2], "mine.c" = [] }\n'
    )
    run = hexlint_cli("htp/k.c")
    assert run.status in (0, 1), run
    assert "error" not in run.stderr


def test_every_shipped_default_has_its_own_shape() -> None:
    for rule in registry.all_rules():
        for name, default in rule.options.items():
            assert config._same_shape(default, default), (rule.code, name)


def test_record_tables_keep_each_key_shape() -> None:
    default = [{"start": "a", "count": 1}]
    assert config._same_shape(default, [{"start": "b", "count": 2}])
    assert not config._same_shape(default, [{"start": "b", "count": "two"}])
    assert config._same_shape([], [1, "mixed"])  # an empty default constrains nothing
