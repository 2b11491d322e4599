"""Configuration: where it is found, what it may hold, and that mistakes are errors naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from hexlint import config, registry
from hexlint.config import (
    Config,
    ConfigError,
    find_config_file,
    ignored_codes_for,
    load_config,
    load_config_file,
    rule_options,
)
from hexlint.engine import RunSettings, enabled_rules, is_enabled
from hexlint.registry import find_rule


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_nearest_pyproject_with_a_hexlint_table_wins(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.hexlint]\nselect = ["HX1"]\n')
    write(tmp_path / "sub" / "pyproject.toml", '[project]\nname = "x"\n')  # no [tool.hexlint]: passed over
    deep = tmp_path / "sub" / "deeper"
    deep.mkdir()
    assert find_config_file(deep) == str(tmp_path / "pyproject.toml")
    assert load_config(None, deep).select == ("HX1",)


def test_hexlint_toml_wins_over_pyproject_in_the_same_directory(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.hexlint]\nselect = ["HX1"]\n')
    write(tmp_path / "hexlint.toml", 'select = ["HX0"]\narch = "v79"\n')
    config = load_config(None, tmp_path / "file.c")
    assert config.path == str(tmp_path / "hexlint.toml")
    assert (config.select, config.arch) == (("HX0",), "v79")


def test_explicit_config_and_defaults(tmp_path: Path) -> None:
    explicit = write(tmp_path / "elsewhere.toml", 'ignore = ["HX110"]\n')
    assert load_config(explicit, tmp_path).ignore == ("HX110",)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert find_config_file(empty) is None
    assert load_config(None, empty) == Config()


def test_every_documented_key_is_read_and_paths_are_relative_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "cfg" / "backend").mkdir(parents=True)
    config = load_config_file(
        write(
            tmp_path / "cfg" / "hexlint.toml",
            """
select = ["HX1", "HX0"]
ignore = ["macro-backslash-whitespace"]
kernel-globs = ["kernels/*"]
host-globs = ["*/host/*"]
include-dirs = ["../include", "/abs/include"]
defines = ["GGML_HEXAGON_FP32_QUANTIZE_GROUP_SIZE=128"]
exclude = ["third_party"]
arch = "v81"
compile-commands = "build/compile_commands.json"
context = "files"
project-root = "backend"

[per-file-ignores]
"tests/*.c" = ["HX110"]

[rules.macro-backslash-misaligned]
""",
        )
    )
    assert config.kernel_globs == ("kernels/*",)
    assert config.host_globs == ("*/host/*",)
    assert config.include_dirs == (str(tmp_path / "cfg" / "../include"), "/abs/include")
    assert config.compile_commands == str(tmp_path / "cfg" / "build" / "compile_commands.json")
    assert config.arch == "v81"
    assert config.exclude == ("third_party",)
    assert config.context == "files"
    assert config.project_root == str(tmp_path / "cfg" / "backend")
    assert ignored_codes_for(tmp_path / "cfg" / "tests" / "a.c", config) == ("HX110",)
    assert ignored_codes_for(tmp_path / "cfg" / "src" / "a.c", config) == ()


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('selct = ["HX1"]\n', "selct"),
        ('select = ["HX999"]\n', "HX999"),
        ('ignore = ["no-such-rule"]\n', "no-such-rule"),
        ('arch = "v60"\n', "arch"),
        ("select = 3\n", "select"),
        ('[per-file-ignores]\n"*.c" = ["HX998"]\n', "HX998"),
        ("[rules.HX997]\nx = 1\n", "HX997"),
        ("[rules.HX110]\nno_such_option = 1\n", "no_such_option"),
        ("select = [\n", "invalid TOML"),
        ('context = "all"\n', "context"),
        ("context = 1\n", "context"),
        ('project-root = "no/such/dir"\n', "project-root"),
        ("project-root = 7\n", "project-root"),
    ],
)
def test_mistakes_are_errors_naming_the_key(tmp_path: Path, text: str, named: str) -> None:
    path = write(tmp_path / "hexlint.toml", text)
    with pytest.raises(ConfigError) as raised:
        load_config_file(path)
    assert named in str(raised.value)
    assert str(path) in str(raised.value)
    assert "\n" not in str(raised.value)


def test_unknown_key_in_pyproject_table(tmp_path: Path) -> None:
    path = write(tmp_path / "pyproject.toml", "[tool.hexlint]\nkernel_globs = []\n")
    with pytest.raises(ConfigError, match="kernel_globs"):
        load_config_file(path)


def test_rule_options_override_the_document_defaults_and_are_type_checked(tmp_path: Path) -> None:
    rule = find_rule("HX110")
    assert rule is not None
    if not rule.options:
        pytest.skip("HX110 has no options to override")
    name, default = next(iter(rule.options.items()))
    value = default + 1 if isinstance(default, int) and not isinstance(default, bool) else default
    path = write(
        tmp_path / "hexlint.toml", f"[rules.macro-backslash-misaligned]\n{name} = {value!r}\n".replace("'", '"')
    )
    config = load_config_file(path)
    assert rule_options(rule, config)[name] == value
    bad = write(tmp_path / "bad.toml", f'[rules.HX110]\n{name} = {{ nested = "table" }}\n')
    with pytest.raises(ConfigError, match=name):
        load_config_file(bad)


def test_selection_specificity_like_ruff() -> None:
    rule = find_rule("HX110")
    assert rule is not None
    assert is_enabled(rule, ["ALL"], [])
    assert not is_enabled(rule, ["ALL"], ["HX1"])
    assert is_enabled(rule, ["HX110"], ["HX1"])  # the precise select beats the prefix ignore
    assert not is_enabled(rule, ["HX1"], ["macro-backslash-misaligned"])
    assert not is_enabled(rule, ["HX0"], [])


def test_cli_select_replaces_config_select_and_ignores_add_up(tmp_path: Path) -> None:
    config = load_config_file(write(tmp_path / "hexlint.toml", 'select = ["HX0"]\nignore = ["HX001"]\n'))
    codes = {rule.code for rule in enabled_rules(config, RunSettings())}
    assert "HX001" not in codes and "HX002" in codes and "HX110" not in codes
    codes = {rule.code for rule in enabled_rules(config, RunSettings(select=("HX1",), ignore=("HX111",)))}
    assert "HX110" in codes and "HX111" not in codes and "HX001" not in codes


def test_cli_reports_config_errors_in_one_line(tmp_path: Path, monkeypatch, hexlint_cli) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "pyproject.toml", "[tool.hexlint]\nunknown-key = 1\n")
    write(tmp_path / "k.c", "int a;\n")
    run = hexlint_cli("k.c")
    assert run.status == 2
    assert run.stderr.count("\n") == 1
    assert "unknown-key" in run.stderr and "pyproject.toml" in run.stderr
    assert "Traceback" not in run.stderr


def test_per_file_ignores_apply_in_a_run(tmp_path: Path, monkeypatch, hexlint_cli) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "hexlint.toml", '[per-file-ignores]\n"generated/*" = ["HX001"]\n')
    write(tmp_path / "generated" / "g.c", "int a; // hexlint: ignore[HX110]\n")
    write(tmp_path / "src" / "s.c", "int a; // hexlint: ignore[HX110]\n")
    run = hexlint_cli("--select", "HX001", ".")
    assert run.status == 1
    assert [line.split(":")[0] for line in run.stdout.splitlines()] == ["src/s.c"]


def test_exclude_skips_walked_files_but_not_named_ones(tmp_path: Path, monkeypatch, hexlint_cli) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "hexlint.toml", 'exclude = ["vendor"]\n')
    write(tmp_path / "vendor" / "v.c", "int a; // hexlint: ignore[HX110]\n")
    write(tmp_path / "src" / "s.c", "int a;\n")
    assert hexlint_cli("--select", "HX001", ".").status == 0
    assert hexlint_cli("--select", "HX001", "vendor/v.c").status == 1


def test_role_globs_decide_kernel_or_host(tmp_path: Path) -> None:
    from hexlint.engine import role_for

    config = load_config_file(
        write(tmp_path / "hexlint.toml", 'kernel-globs = ["dsp/*.c"]\nhost-globs = ["htp/tools"]\n')
    )
    settings = RunSettings()
    assert role_for(str(tmp_path / "dsp" / "k.c"), config, settings) == "kernel"
    assert role_for(str(tmp_path / "dsp" / "deeper" / "k.c"), config, settings) == "host"  # `*` stays in one component
    assert role_for(str(tmp_path / "htp" / "tools" / "gen.c"), config, settings) == "host"
    assert role_for(str(tmp_path / "htp" / "ops.c"), config, settings) == "kernel"  # the default: below htp/
    assert role_for(str(tmp_path / "host" / "prep.cpp"), config, settings) == "host"


def test_rule_options_are_kebab_case_and_the_old_snake_case_still_works_with_a_note(tmp_path: Path) -> None:
    rule = find_rule("HX104")
    assert rule is not None
    kebab = load_config_file(write(tmp_path / "kebab.toml", '[rules.HX104]\ninternal-pointer-names = ["mine"]\n'))
    assert rule_options(rule, kebab)["internal_pointer_names"] == ["mine"]
    assert kebab.notes == ()
    snake = load_config_file(write(tmp_path / "snake.toml", '[rules.HX104]\ninternal_pointer_names = ["mine"]\n'))
    assert rule_options(rule, snake) == rule_options(rule, kebab)
    assert len(snake.notes) == 1
    assert "internal_pointer_names" in snake.notes[0] and "`internal-pointer-names`" in snake.notes[0]
    assert str(tmp_path / "snake.toml") in snake.notes[0] and "\n" not in snake.notes[0]


def test_an_old_spelling_is_noted_once_however_many_tables_use_it(tmp_path: Path) -> None:
    text = '[rules.HX101]\nstruct_pattern = "^a$"\n[rules.HX102]\nstruct_pattern = "^a$"\nop_pattern = "^b$"\n'
    config = load_config_file(write(tmp_path / "hexlint.toml", text))
    assert [note.split("`")[1] for note in config.notes] == ["struct_pattern", "op_pattern"]


def test_both_spellings_of_one_option_are_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "hexlint.toml", "[rules.HX104]\ninternal-pointer-names = []\ninternal_pointer_names = []\n")
    with pytest.raises(ConfigError, match="internal-pointer-names"):
        load_config_file(path)


def test_the_cli_prints_each_deprecation_note_once_on_stderr(tmp_path: Path, monkeypatch, hexlint_cli) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "hexlint.toml", '[rules.HX101]\nstruct_pattern = "^a$"\n[rules.HX102]\nstruct_pattern = "^a$"\n')
    write(tmp_path / "k.c", "int a;\n")
    run = hexlint_cli("--select", "HX110", "k.c")
    assert run.status == 0
    assert run.stderr.count("struct_pattern") == 1
    assert run.stderr.startswith("hexlint: warning: ") and "`struct-pattern`" in run.stderr


def test_a_snake_case_top_level_key_is_an_error_that_names_the_kebab_spelling(tmp_path: Path) -> None:
    path = write(tmp_path / "hexlint.toml", "per_file_ignores = {}\n")
    with pytest.raises(ConfigError, match="did you mean `per-file-ignores`"):
        load_config_file(path)


def test_extend_select_and_extend_ignore_in_the_configuration(tmp_path: Path) -> None:
    text = 'select = ["HX0"]\nextend-select = ["HX110"]\nextend-ignore = ["HX001"]\n'
    config = load_config_file(write(tmp_path / "hexlint.toml", text))
    codes = {rule.code for rule in enabled_rules(config, RunSettings())}
    assert "HX110" in codes and "HX002" in codes and "HX001" not in codes and "HX111" not in codes
    # --select replaces the configuration's select together with its extend-select, as ruff layers them.
    codes = {rule.code for rule in enabled_rules(config, RunSettings(select=("HX111",)))}
    assert "HX111" in codes and "HX110" not in codes
    codes = {rule.code for rule in enabled_rules(config, RunSettings(extend_select=("HX111",)))}
    assert {"HX110", "HX111", "HX002"} <= codes and "HX001" not in codes
    bad = write(tmp_path / "bad.toml", 'extend-select = ["HX998"]\n')
    with pytest.raises(ConfigError, match="extend-select"):
        load_config_file(bad)


def test_compile_commands_may_name_the_build_directory(tmp_path: Path) -> None:
    (tmp_path / "build").mkdir()
    config = load_config_file(write(tmp_path / "hexlint.toml", 'compile-commands = "build"\n'))
    assert config.compile_commands == str(tmp_path / "build" / "compile_commands.json")


# A wrongly typed value inside a rule option (a list item, a table value) is a one


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
