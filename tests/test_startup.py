"""Start-up and engine overhead: what a run imports and parses, real paths memoized per run, the TOML subset reader."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexlint import cli, engine, registry
from hexlint.c import index
from hexlint.config import Config, ConfigError, rule_options

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
# The `server` extra (pygls and what it brings) and hexlint's use of it: loaded by `hexlint server` alone.
SERVER_MODULES = ("pygls", "lsprotocol", "cattrs", "hexlint.server")
HEAVY_MODULES = ("clang", "elftools", "hexlint.c", "hexlint.elf", "hexlint.hexagon", *SERVER_MODULES)
# The parser knows the binary audit's options (argparse definitions only); nothing else of hexlint.binary loads.
ALLOWED_BINARY_MODULES = {"hexlint.binary", "hexlint.binary.options"}


def run_python(code: str, cwd: Path = ROOT) -> dict:
    """Run `code` in a fresh interpreter; it prints one JSON document as its last line."""
    environment = {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "")}
    command = [sys.executable, "-c", code]
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=True, env=environment)
    return json.loads(result.stdout.strip().splitlines()[-1])


LOADED = (
    "import json, sys; from hexlint import registry; "
    "print(json.dumps({'modules': sorted(sys.modules), 'rules_loaded': registry.rule_at.cache_info().currsize, "
    "'docs_parsed': registry._docs_from.cache_info().currsize, "
    "'options_parsed': registry._options_from.cache_info().currsize, 'status': status}))"
)


def macro_run(tree: Path, cwd: Path) -> dict:
    """`hexlint --select HX110,HX111 -q TREE` in a fresh interpreter: its status and what it loaded."""
    return run_python(
        "import io; from hexlint.cli import main; "
        f"status = main(['--select', 'HX110,HX111', '-q', {str(tree)!r}], stdout=io.StringIO()); " + LOADED,
        cwd=cwd,
    )


def heavy(modules: list[str]) -> list[str]:
    def within(name: str, package: str) -> bool:
        return name == package or name.startswith(package + ".")

    return [
        name
        for name in modules
        if any(within(name, package) for package in HEAVY_MODULES)
        or (within(name, "hexlint.binary") and name not in ALLOWED_BINARY_MODULES)
    ]


def test_version_imports_no_front_end_and_reads_no_rule_document(tmp_path: Path) -> None:
    loaded = run_python(
        "import io; from hexlint.cli import main; out = io.StringIO(); status = main(['--version'], stdout=out); "
        + LOADED,
        cwd=tmp_path,
    )
    assert loaded["status"] == 0
    assert heavy(loaded["modules"]) == []
    assert loaded["rules_loaded"] == 0
    assert "tomllib" not in loaded["modules"]


def test_version_prints_the_version() -> None:
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "hexlint", "--version"], cwd=ROOT, capture_output=True, text=True, env=environment
    )
    assert result.returncode == 0
    assert result.stdout.strip() == f"hexlint {__import__('hexlint').__version__}"


def test_text_only_run_imports_only_what_it_uses(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "macro.h").write_text("#define TWO(x) \\\n    ((x) +  \\\n    (x))\n")
    loaded = macro_run(tree, cwd=tmp_path)
    assert loaded["status"] == 1  # the misaligned macro was found
    assert heavy(loaded["modules"]) == []
    # The two selected rules' documents are read (identity and options, not docs); tomllib is not needed for that.
    assert loaded["rules_loaded"] == 2
    assert loaded["docs_parsed"] == 0
    assert loaded["options_parsed"] == 2
    unused = {"tomllib", "concurrent.futures", "traceback", "shutil", "hashlib", "hexlint.fixer", "hexlint.report.json"}
    assert unused.isdisjoint(loaded["modules"])
    # heavy() above is what still matters at start-up: a text-only run loads neither libclang (hexlint.c) nor
    # pyelftools and the audit. dataclasses (~7 ms with inspect) is allowed: a pre-commit run's cost is parsing.
    assert "pathlib" not in loaded["modules"]  # paths are strings (pathlib pulls urllib.parse and ipaddress)


def test_only_the_server_loads_the_server_extras(tmp_path: Path) -> None:
    kernel = tmp_path / "htp" / "kernel.c"
    kernel.parent.mkdir()
    kernel.write_text("struct htp_ops_context;\nint op(struct htp_ops_context *octx) { return octx ? 0 : 1; }\n")
    loaded = run_python(
        "import io; from hexlint.cli import main; "
        f"status = main(['-q', '--format', 'json', {str(kernel)!r}], stdout=io.StringIO()); " + LOADED,
        cwd=tmp_path,
    )
    assert loaded["status"] == 1  # HX104: the source rules ran, on libclang
    assert "hexlint.c" in loaded["modules"]
    assert heavy([name for name in loaded["modules"] if not name.startswith(("clang", "hexlint.c"))]) == []


def test_a_binary_audit_never_loads_the_c_front_end(tmp_path: Path) -> None:
    library = sorted((ROOT / "fixtures" / "htp-core" / "lib").glob("*.so"))[0]
    loaded = run_python(
        "import io; from hexlint.cli import main; "
        f"status = main(['--spills', '-q', {str(library)!r}], stdout=io.StringIO()); " + LOADED,
        cwd=tmp_path,
    )
    assert loaded["status"] in (0, 1)
    assert not [
        name
        for name in loaded["modules"]
        if name in ("clang", "hexlint.c") or name.startswith(("clang.", "hexlint.c."))
    ]


def test_an_audit_of_a_library_without_dwarf_imports_neither_typing_pathlib_nor_pyelftools(tmp_path: Path) -> None:
    """Start-up is most of a small library's audit: the binary modules keep these out (~5 ms, and pyelftools more).
    Alone in its directory: a -g build beside it is named through pathlib."""
    library = tmp_path / "libhtp-core-v73.so"
    library.write_bytes((ROOT / "fixtures" / "htp-core" / "lib" / library.name).read_bytes())
    for options in (["--spills"], [], ["--format", "json"]):
        loaded = run_python(
            "import io; from hexlint.cli import main; "
            f"status = main([*{options!r}, '--no-cache', '-q', {str(library)!r}], stdout=io.StringIO()); " + LOADED,
            cwd=tmp_path,
        )
        assert loaded["status"] in (0, 1)
        modules = loaded["modules"]
        assert [name for name in modules if name in ("typing", "pathlib") or name.startswith("elftools")] == []


# ---------------------------------------------------------------- rule documents read in parts


def documents() -> list[Path]:
    return sorted(Path(registry.rule_documents_dir()).glob("HX*.toml"))


@pytest.mark.parametrize("path", documents(), ids=lambda path: path.stem.split("-")[0])
def test_a_rule_read_in_parts_equals_its_whole_document(path: Path) -> None:
    whole = tomllib.loads(path.read_text(encoding="utf-8"))
    rule = registry.load_rule(path)
    assert (rule.code, rule.name, rule.severity.value, rule.kind, rule.summary, rule.scope) == (
        whole["code"],
        whole["name"],
        whole["severity"],
        whole["kind"],
        whole["summary"],
        whole.get("scope", "file"),
    )
    assert dict(rule.options) == whole.get("options", {})
    assert rule.options == whole.get("options", {})
    assert rule.doc == registry.rule_doc(whole.get("docs", {}))
    # The split really happened: the docs wait for `rule.doc`, the options for a look-up.
    assert isinstance(rule.docs, registry.LazyDocs)
    assert isinstance(rule.options, registry.LazyOptions)


@pytest.mark.parametrize("code", ["HX001", "HX002", "HX110", "HX111", "HX104", "HX201"])
def test_the_documents_a_text_run_reads_need_no_tomllib(code: str) -> None:
    path = next(Path(registry.rule_documents_dir()).glob(f"{code}-*.toml"))
    head, _ = registry.split_document(path.read_text(encoding="utf-8"))
    assert registry.parse_simple_toml(head) == tomllib.loads(head)


def test_a_document_with_another_table_after_docs_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "HX999-x.toml"
    path.write_text(
        'code = "HX999"\nname = "x"\nseverity = "info"\nkind = "text"\nsummary = """two\n[lines]"""\n'
        '[docs]\nwhat = "w"\n[options]\nlimit = 3\n'
    )
    rule = registry.load_rule(path)
    assert rule.summary == "two\n[lines]"
    assert dict(rule.options) == {"limit": 3}
    assert rule.doc.what == "w"


SIMPLE_CASES = [
    ("", {}),
    ('a = "x"  # note\n\n# comment\nb = 2\n', {"a": "x", "b": 2}),
    ('[options]\npad = 2\nmode = "min"\nnames = ["a", "b"]\nflag = true\n', None),
    ('[options.slots]\n"*.c" = [0, 1]\n[options]\nx = 1.5\n', None),
    ("[ t ] # c\nkey = -3\n", {"t": {"key": -3}}),
    ('a = [1, [2, "x"], ]\nb = []\nc = [ ]\nd = -0.5e-3\ne = 1E5\nf = "tab\there"\ng = false#c\n', None),
]


@pytest.mark.parametrize(("text", "expected"), SIMPLE_CASES)
def test_the_subset_means_what_tomllib_means(text: str, expected: dict | None) -> None:
    assert registry.parse_simple_toml(text) == (expected if expected is not None else tomllib.loads(text))


@pytest.mark.parametrize(
    "text",
    [
        'a = "tab\\there"\n',  # escapes: JSON and TOML differ (\/, \U)
        "a = 'literal'\n",
        'a = """multi"""\n',
        "a = [\n  1,\n]\n",
        "a = { b = 1 }\n",
        "a = NaN\n",
        "a = nan\n",
        "a = inf\n",
        "a = null\n",
        "a = [1,,2]\n",
        "a = [,]\n",
        "a = [1 2]\n",
        "a = [[1, ], 2\n",
        "a = 01\n",
        "a = 1.5.3\n",
        "a = +1\n",
        "a = 1.\n",
        "a = true1\n",
        "a = 1\na = 2\n",
        "[t]\n[t]\n",
        "a = 1\n[a]\n",
        "a = 1\r\n",
        "a.b = 1\n",
        "[[array]]\n",
        "a = 1_000\n",
        "a = 0x10\n",
        "a = 1979-05-27\n",
        "a = 1 2\n",
    ],
)
def test_anything_outside_the_subset_is_left_to_tomllib(text: str) -> None:
    assert registry.parse_simple_toml(text) is None


@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet="ab_=[]\"#., \n\t015-'\\{}tfrueNn:eE+x", max_size=40))
def test_the_subset_never_accepts_what_tomllib_rejects_or_reads_otherwise(text: str) -> None:
    simple = registry.parse_simple_toml(text)
    if simple is not None:
        assert tomllib.loads(text) == simple


@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet='[]", \t015-.eE+truefalsx_#', max_size=24))
def test_values_the_subset_reads_are_read_as_tomllib_reads_them(value: str) -> None:
    text = f"key = {value}\n"
    simple = registry.parse_simple_toml(text)
    if simple is not None:
        assert tomllib.loads(text) == simple


key_names = st.from_regex(r"[A-Za-z0-9_-]{1,8}", fullmatch=True)
scalars = st.one_of(
    st.integers(-(2**40), 2**40), st.booleans(), st.text(max_size=8), st.floats(allow_nan=False, allow_infinity=False)
)
values = st.one_of(scalars, st.lists(scalars, max_size=4))


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(key_names, values, max_size=6), st.dictionaries(key_names, values, max_size=4))
def test_documents_written_in_the_subset_read_as_tomllib_reads_them(top: dict, options: dict) -> None:
    def spelled(table: dict) -> str:
        return "".join(f"{key} = {json.dumps(value, ensure_ascii=False)}  # why\n" for key, value in table.items())

    text = spelled(top) + "\n[options]\n" + spelled(options)
    simple = registry.parse_simple_toml(text)
    if any(key == "options" for key in top):
        return  # a key and a table of one name: not a valid document
    try:
        expected = tomllib.loads(text)
    except tomllib.TOMLDecodeError:  # e.g. a DEL character JSON leaves unescaped
        assert simple is None
        return
    assert simple is None or simple == expected
    plain = all("\\" not in json.dumps(value, ensure_ascii=False) for value in (*top.values(), *options.values()))
    if plain:
        assert simple == expected  # nothing outside the subset: it is read without tomllib


# ---------------------------------------------------------------- engine: options, real paths


def test_options_by_code_reads_a_rule_only_when_asked() -> None:
    config = Config()
    options = engine.OptionsByCode(config)
    assert list(options) == [rule.code for rule in registry.all_rules()]
    assert len(options) == len(registry.all_rules())
    rule = registry.find_rule("HX110")
    assert rule is not None
    assert options["HX110"] == rule_options(rule, config)
    assert options.get("HX999") is None
    with pytest.raises(KeyError):
        options["hx110"]  # codes as the rules spell them, like the dict it replaces


def test_path_key_is_the_real_path_and_forgets_between_runs(tmp_path: Path) -> None:
    first, second = tmp_path / "first.c", tmp_path / "second.c"
    first.write_text("int a;\n")
    second.write_text("int b;\n")
    link = tmp_path / "link.c"
    link.symlink_to(first)
    linked_dir = tmp_path / "linked"
    linked_dir.symlink_to(tmp_path, target_is_directory=True)
    engine.forget_real_paths()
    assert engine.path_key(str(link)) == os.path.realpath(first)
    assert engine.path_key(str(linked_dir / "second.c")) == os.path.realpath(second)
    assert engine.path_key(str(tmp_path / "nested" / ".." / "first.c")) == os.path.realpath(first)
    link.unlink()
    link.symlink_to(second)
    engine.lint([str(first)], Config(), engine.RunSettings(select=("HX110",)))
    assert engine.path_key(str(link)) == os.path.realpath(second)


def test_path_key_does_not_depend_on_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "x.c").write_text("int x;\n")
    engine.forget_real_paths()
    monkeypatch.chdir(tmp_path / "one")
    assert engine.path_key("x.c") == os.path.realpath(tmp_path / "one" / "x.c")
    assert index._realpath("x.c") == os.path.realpath(tmp_path / "one" / "x.c")
    monkeypatch.chdir(tmp_path / "two")
    assert engine.path_key("x.c") == os.path.realpath(tmp_path / "two" / "x.c")
    assert index._realpath("x.c") == os.path.realpath(tmp_path / "two" / "x.c")


@pytest.mark.parametrize("columns", [None, "50", "200", "junk", "0"])
def test_help_width_is_the_one_shutil_gives(monkeypatch: pytest.MonkeyPatch, columns: str | None) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert cli.terminal_columns() == shutil.get_terminal_size().columns


def test_a_pyproject_of_other_tools_is_passed_over_unparsed(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.ruff]\nline-length = "not [valid\n')  # broken, and not ours
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "macro.h").write_text("#define TWO(x) \\\n    ((x) + (x))\n")
    loaded = macro_run(tree, cwd=tmp_path)
    assert loaded["status"] == 0
    assert "tomllib" not in loaded["modules"]


def test_a_pyproject_that_mentions_hexlint_is_still_read(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.hexlint]\nselect = ["HX110"]\n')
    from hexlint.config import find_config_file, load_config

    assert find_config_file(tmp_path) == str(tmp_path / "pyproject.toml")
    assert load_config(None, tmp_path).select == ("HX110",)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "hexlint-plugin"\n[tool.hexlint\n')
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_config(None, tmp_path)


@pytest.mark.parametrize(
    "text",
    [
        '[tool.hexlint]\nselect = ["HX110"]\n',
        '[tool]\nhexlint = { select = ["HX110"] }\n',
        '[tool]\nhexlint.select = ["HX110"]\n',
        'tool.hexlint.select = ["HX110"]\n',
        'tool = { hexlint = { select = ["HX110"] } }\n',
        '[ "tool" . \'hexlint\' ]\nselect = ["HX110"]\n',
        '[project]\nname = "x"\n\n[tool . hexlint]\r\nselect = ["HX110"]\r\n',
        '[project]\rname = "x"\r[tool]\rhexlint = { select = ["HX110"] }\r',  # lone CRs: new lines to the parse too
        'a = 1\r  tool = { hexlint = { select = ["HX110"] } }\r',
    ],
)
def test_every_spelling_of_a_tool_hexlint_table_is_read(tmp_path: Path, text: str) -> None:
    from hexlint.config import load_config

    (tmp_path / "pyproject.toml").write_bytes(text.encode())
    assert load_config(None, tmp_path).select == ("HX110",)


def test_a_pyproject_that_names_hexlint_without_configuring_it_is_passed_over(tmp_path: Path) -> None:
    # Like hexlint's own pyproject.toml: the project and its script are called hexlint; the rest is not ours to judge.
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "hexlint"\n[project.scripts]\nhexlint = "hexlint.cli:main"\n[tool.ruff]\nx = "broken\n'
    )
    (tmp_path / "hexlint.h").write_text("#define TWO(x) \\\n    ((x) + (x))\n")
    loaded = macro_run(tmp_path, cwd=tmp_path)
    assert loaded["status"] == 0
    assert "tomllib" not in loaded["modules"]


def test_suppress_and_baseline_load_only_when_a_file_has_a_directive(tmp_path: Path) -> None:
    (tmp_path / "clean.h").write_text("#define TWO(x) \\\n    ((x) + (x))\n")
    code = (
        "import io; from hexlint.cli import main; "
        f"status = main(['--select', 'HX110,HX111,HX001', '-q', {str(tmp_path)!r}], stdout=io.StringIO()); " + LOADED
    )
    loaded = run_python(code, cwd=tmp_path)
    assert loaded["status"] == 0
    assert "hexlint.suppress" not in loaded["modules"]
    assert "hexlint.baseline" not in loaded["modules"]
    (tmp_path / "directive.h").write_text("int x;  // hexlint: ignore[HX110] nothing to suppress here\n")
    loaded = run_python(code, cwd=tmp_path)
    assert loaded["status"] == 1  # the unused suppression is reported
    assert "hexlint.suppress" in loaded["modules"]


def test_engine_and_suppress_agree_on_the_unused_suppression_code() -> None:
    from hexlint import suppress

    assert engine.UNUSED_SUPPRESSION == suppress.UNUSED_SUPPRESSION


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_a_configuration_is_read_once_with_any_newline(
    tmp_path: Path, newline: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hexlint import config

    (tmp_path / "pyproject.toml").write_bytes(newline.join(["[tool.hexlint]", 'select = ["HX110"]', ""]).encode())
    opened: list[str] = []
    real_open = open

    def counting_open(file, *arguments, **keywords):  # type: ignore[no-untyped-def]
        opened.append(str(file))
        return real_open(file, *arguments, **keywords)

    monkeypatch.setattr("builtins.open", counting_open)
    assert config.load_config(None, tmp_path).select == ("HX110",)
    assert opened.count(str(tmp_path / "pyproject.toml")) == 1


@pytest.mark.parametrize(
    "spelled", ["a.c", "./a.c", "sub/../a.c", "sub/b.h", "", ".", "..", "../other/x.c", "/", "/usr/include/stdio.h"]
)
def test_display_path_is_relative_below_the_working_directory_else_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spelled: str
) -> None:
    (tmp_path / "work" / "sub").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "work")
    absolute = os.path.abspath(spelled)
    relative = os.path.relpath(absolute, os.getcwd())
    assert engine.display_path(spelled) == (absolute if relative.startswith("..") else relative)


def test_normalizing_a_diagnostic_already_spelled_so_keeps_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hexlint.core import Diagnostic, Severity, Span

    monkeypatch.chdir(tmp_path)
    shown = Diagnostic("HX110", "macro-backslash-misaligned", Severity.WARNING, "m", Span("a.c", 1, 1))
    assert engine.normalize_paths(shown) is shown
    spelled_otherwise = Diagnostic("HX110", "macro-backslash-misaligned", Severity.WARNING, "m", Span("./a.c", 1, 1))
    assert engine.normalize_paths(spelled_otherwise) == shown


segments = st.lists(st.sampled_from(["a", "b", "c.c", ".x", "a b", "é"]), max_size=4)


@settings(max_examples=300, deadline=None)
@given(segments, segments, st.booleans())
def test_gitignore_paths_relative_to_their_base_as_pathlib_says(base: list, below: list, absolute: bool) -> None:
    from hexlint.discover import _relative_posix

    root = Path("/") if absolute else Path(".")
    base_path = root.joinpath(*base)
    for path in (base_path.joinpath(*below), root.joinpath(*below)):
        try:
            expected: str | None = path.relative_to(base_path).as_posix()
        except ValueError:
            expected = None
        assert _relative_posix(str(path), base_path) == expected


def test_the_console_script_and_python_m_run_the_same_process_entry(tmp_path: Path) -> None:
    with open(ROOT / "pyproject.toml", "rb") as handle:
        scripts = tomllib.load(handle)["project"]["scripts"]
    assert scripts == {"hexlint": "hexlint.__main__:run"}
    (tmp_path / "macro.h").write_text("#define TWO(x) \\\n    ((x) +  \\\n    (x))\n")
    code = (
        "import gc, sys; from hexlint.__main__ import run; sys.argv[1:] = ['--select', 'HX110', '-q', 'macro.h']; "
        "status = run(); print(gc.get_threshold()[0], gc.get_freeze_count() > 0, status)"
    )
    environment = {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "")}
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=environment)
    assert result.stdout.split()[-3:] == ["50000", "True", "1"]  # the finding's exit status, from a tuned process
