"""Configuration: `[tool.hexlint]` in the nearest pyproject.toml, or the top level of a hexlint.toml.

The nearest configuration is found by walking up from the first linted path (or the working directory): in each
directory a `hexlint.toml` wins over a `pyproject.toml`, and a pyproject.toml without a `[tool.hexlint]` table is
passed over, as ruff does. Relative paths in the file (include dirs, compile commands, per-file-ignores globs) are
relative to the directory of the file that holds them. Unknown keys and unknown rule options are errors naming them.

Every key is kebab-case, rule options too (`internal-pointer-names`); a rule option's old snake_case spelling still
works and is noted once (Config.notes, printed by the CLI on stderr).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from hexlint import registry
from hexlint.core import Rule
from hexlint.discover import glob_matches, self_and_parents, spelled

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from hexlint.discover import StrPath

ARCHITECTURES = ("v73", "v75", "v79", "v81")
DEFAULT_CACHE_DIRECTORY = ".hexlint_cache"
# What the cross-file rules see besides the files of the run: the rest of the backend tree, or nothing.
CONTEXT_MODES = ("tree", "files")

_LIST_KEYS = (
    "select",
    "extend-select",
    "ignore",
    "extend-ignore",
    "kernel-globs",
    "host-globs",
    "include-dirs",
    "defines",
    "exclude",
)
_KNOWN_KEYS = frozenset(
    (
        *_LIST_KEYS,
        "per-file-ignores",
        "arch",
        "cache-dir",
        "cmake-defines",
        "compile-commands",
        "context",
        "project-root",
        "rules",
        "unsafe-fixes",
    )
)


class ConfigError(Exception):
    """A configuration problem; the message names the file and the key."""


@dataclass(frozen=True)
class PerFileIgnore:
    glob: str
    codes: tuple[str, ...]


@dataclass(frozen=True)
class Config:
    """Settings after reading a file; every path is absolute or relative to the working directory."""

    path: str | None = None  # the file it came from, None for defaults
    select: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()  # added to `select` (ruff's extend-select)
    ignore: tuple[str, ...] = ()  # `ignore` and `extend-ignore` together: both add to the rules turned off
    per_file_ignores: tuple[PerFileIgnore, ...] = ()
    kernel_globs: tuple[str, ...] = ()
    host_globs: tuple[str, ...] = ()
    include_dirs: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    # Take the defines the tree's CMakeLists.txt files give each file (hexlint/cmake.py); `defines` override them.
    cmake_defines: bool = True
    exclude: tuple[str, ...] = ()
    arch: str | None = None
    compile_commands: str | None = None
    context: str | None = None  # one of CONTEXT_MODES; None means the default, "tree"
    project_root: str | None = None  # the tree parsed as context; None: found from the linted files
    cache_dir: str | None = None  # the persistent cache; None: `.hexlint_cache` at the project root
    unsafe_fixes: bool = False  # --fix and --diff also take the unsafe fixes (ruff's `unsafe-fixes`)
    # rule code -> option name -> value, already validated against the rule's [options]
    rule_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    keys_set: frozenset[str] = frozenset()  # the top-level keys the file sets (`rules.CODE.option` for rule options)
    notes: tuple[str, ...] = ()  # deprecation notes, one per old spelling, for the CLI to print on stderr

    @property
    def root(self) -> str:
        """The directory globs and relative paths in the file are relative to."""
        return os.path.dirname(self.path) if self.path is not None else os.getcwd()


def _expect_list_of_strings(value: Any, key: str, source: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{source}: `{key}` must be a list of strings")
    return tuple(value)


def _expect_bool(table: Mapping[str, Any], key: str, default: bool, source: str) -> bool:
    value = table.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"{source}: `{key}` must be true or false, not {value!r}")
    return value


def _expect_path(table: Mapping[str, Any], key: str, source: str) -> str | None:
    value = table.get(key)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{source}: `{key}` must be a path")
    return value


def _check_selectors(selectors: Sequence[str], key: str, source: str) -> None:
    for selector in selectors:
        if not registry.is_known_selector(selector):
            raise ConfigError(f"{source}: `{key}` names an unknown rule `{selector}`")


def _same_shape(default: Any, value: Any) -> bool:
    """A config value may replace a default of the same kind, down to list items and table values
    (bool is not an int here); an empty default list or table says nothing about its items."""
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, (int, float)):
        return isinstance(value, (int, float))
    if isinstance(default, list):
        return isinstance(value, list) and (not default or all(_same_shape(default[0], item) for item in value))
    if isinstance(default, dict):
        if not isinstance(value, dict):
            return False
        sample = next(iter(default.values()), None)
        # A key the default has keeps that key's shape (record-like tables); any other key, the first value's.
        return not default or all(_same_shape(default.get(key, sample), item) for key, item in value.items())
    return isinstance(value, type(default))


def _shape_name(default: Any) -> str:
    """'list of int', 'table of list of str': what the error asks for."""
    if isinstance(default, list) and default:
        return f"list of {_shape_name(default[0])}"
    if isinstance(default, dict) and default:
        return f"table of {_shape_name(next(iter(default.values())))}"
    return {"dict": "table", "str": "string"}.get(type(default).__name__, type(default).__name__)


def option_key(name: str) -> str:
    """How a rule option is spelled in a configuration (kebab-case, like every other key)."""
    return name.replace("_", "-")


def validate_rule_options(
    rule: Rule, options: Mapping[str, Any], source: str, notes: dict[str, str] | None = None
) -> dict[str, Any]:
    """Options for one rule from a config table, keyed by the rule's own (snake_case) names; an unknown name or a
    wrong type is an error naming it. An option written in the old snake_case adds a note to `notes` (one per key)."""
    checked: dict[str, Any] = {}
    for written, value in options.items():
        name = written.replace("-", "_")
        if name not in rule.options:
            known = ", ".join(sorted(option_key(known) for known in rule.options)) or "none"
            where = f"rule {rule.code} ({rule.name})"
            raise ConfigError(f"{source}: unknown option `{written}` for {where}; known: {known}")
        if name in checked:
            raise ConfigError(f"{source}: option `{option_key(name)}` of rule {rule.code} is set twice (two spellings)")
        if "_" in written and notes is not None:
            new = option_key(name)
            notes.setdefault(written, f"rule option `{written}` is the old spelling; write `{new}`")
        if not _same_shape(rule.options[name], value):
            expected = _shape_name(rule.options[name])
            raise ConfigError(f"{source}: option `{written}` of rule {rule.code} must be a {expected}")
        checked[name] = value
    return checked


def _parse_rule_tables(value: Any, source: str, notes: dict[str, str]) -> dict[str, dict[str, Any]]:
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: `rules` must be a table of rule tables")
    parsed: dict[str, dict[str, Any]] = {}
    for key, options in value.items():
        rule = registry.find_rule(key)
        if rule is None:
            raise ConfigError(f"{source}: `rules.{key}` names an unknown rule")
        if not isinstance(options, dict):
            raise ConfigError(f"{source}: `rules.{key}` must be a table of options")
        checked = validate_rule_options(rule, options, f"{source}: rules.{key}", notes)
        parsed.setdefault(rule.code, {}).update(checked)
    return parsed


def _parse_per_file_ignores(value: Any, source: str) -> tuple[PerFileIgnore, ...]:
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: `per-file-ignores` must be a table of glob = [codes]")
    entries = []
    for glob, codes in value.items():
        selectors = _expect_list_of_strings(codes, f"per-file-ignores.{glob}", source)
        _check_selectors(selectors, f"per-file-ignores.{glob}", source)
        entries.append(PerFileIgnore(glob, selectors))
    return tuple(entries)


COMPILE_COMMANDS = "compile_commands.json"


def compile_commands_file(path: str) -> str:
    """The compile_commands.json a path names: the file itself, or the one in a build directory (clang-tidy's -p)."""
    return os.path.join(path, COMPILE_COMMANDS) if os.path.isdir(path) else path


def _relative_to(base: str, value: str) -> str:
    return spelled(os.path.join(base, value)) if not os.path.isabs(value) else value


def config_from_table(table: Mapping[str, Any], source: StrPath) -> Config:
    """Validate a [tool.hexlint] table (or a hexlint.toml document) read from `source`."""
    unknown = sorted(set(table) - _KNOWN_KEYS)
    if unknown:
        kebab = unknown[0].replace("_", "-")
        hint = f"; did you mean `{kebab}`?" if kebab in _KNOWN_KEYS else ""
        raise ConfigError(f"{source}: unknown key `{unknown[0]}` in hexlint configuration{hint}")
    lists = {key: _expect_list_of_strings(table[key], key, source) for key in _LIST_KEYS if key in table}
    for key in ("select", "extend-select", "ignore", "extend-ignore"):
        _check_selectors(lists.get(key, ()), key, source)
    arch = table.get("arch")
    if arch is not None and arch not in ARCHITECTURES:
        raise ConfigError(f"{source}: `arch` must be one of {', '.join(ARCHITECTURES)}, not {arch!r}")
    cmake_defines = _expect_bool(table, "cmake-defines", True, source)
    compile_commands = _expect_path(table, "compile-commands", source)
    context = table.get("context")
    if context is not None and context not in CONTEXT_MODES:
        raise ConfigError(f"{source}: `context` must be one of {', '.join(CONTEXT_MODES)}, not {context!r}")
    project_root = _expect_path(table, "project-root", source)
    unsafe_fixes = _expect_bool(table, "unsafe-fixes", False, source)
    cache_dir = _expect_path(table, "cache-dir", source)
    source = spelled(source)
    base = os.path.dirname(source)
    if project_root is not None and not os.path.isdir(_relative_to(base, project_root)):
        raise ConfigError(f"{source}: `project-root` {project_root!r} is not a directory")
    notes: dict[str, str] = {}
    rule_tables = _parse_rule_tables(table.get("rules", {}), source, notes)
    option_keys = {f"rules.{code}.{option_key(name)}" for code, options in rule_tables.items() for name in options}
    return Config(
        path=source,
        select=lists.get("select", ()),
        extend_select=lists.get("extend-select", ()),
        ignore=(*lists.get("ignore", ()), *lists.get("extend-ignore", ())),
        per_file_ignores=_parse_per_file_ignores(table.get("per-file-ignores", {}), source),
        kernel_globs=lists.get("kernel-globs", ()),
        host_globs=lists.get("host-globs", ()),
        include_dirs=tuple(_relative_to(base, item) for item in lists.get("include-dirs", ())),
        defines=lists.get("defines", ()),
        cmake_defines=cmake_defines,
        exclude=lists.get("exclude", ()),
        arch=arch,
        compile_commands=compile_commands_file(_relative_to(base, compile_commands)) if compile_commands else None,
        context=context,
        project_root=_relative_to(base, project_root) if project_root else None,
        cache_dir=_relative_to(base, cache_dir) if cache_dir else None,
        unsafe_fixes=unsafe_fixes,
        rule_options=rule_tables,
        keys_set=frozenset(key for key in table if key != "rules") | option_keys,
        notes=tuple(f"{source}: {note}" for note in notes.values()),
    )


# Every TOML spelling of a hexlint table under `tool`: a dotted `tool.hexlint` (headers and keys, quotes and spaces
# allowed), or keys below a bare `[tool]` header or a `tool = {...}` inline table, at the start of a line (after LF
# or a lone CR, as the parse reads it). Only \\u-escaped keys slip by.
_MAY_HOLD_TOOL_HEXLINT = re.compile(
    rb"""["']?tool["']?[ \t]*\.[ \t]*["']?hexlint"""
    rb"""|(?:^|(?<=\r))[ \t]*\[[ \t]*["']?tool["']?[ \t]*\]|(?:^|(?<=\r))[ \t]*["']?tool["']?[ \t]*=""",
    re.MULTILINE,
)


def _read_toml(path: str, only_if_mentioned: bool = False) -> dict[str, Any] | None:
    """The parsed file; with `only_if_mentioned`, None without parsing when no `tool.hexlint` table can be in it: most
    pyproject.toml files on the way up configure other tools, ours included (it names `hexlint` as a project)."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read configuration: {error.strerror or error}") from None
    if only_if_mentioned and not _MAY_HOLD_TOOL_HEXLINT.search(raw):
        return None
    if sys.version_info >= (3, 11):  # imported here: a run without a configuration file does not pay for it
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        # Newlines translated as a text-mode read does (a lone CR too), so the parse sees what it always saw.
        return tomllib.loads(raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n"))
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: configuration is not UTF-8") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None


def _hexlint_table(path: str, only_if_mentioned: bool = False) -> dict[str, Any] | None:
    """The hexlint settings a file holds, or None when a pyproject.toml has no [tool.hexlint]."""
    document = _read_toml(path, only_if_mentioned)
    if document is None:
        return None
    if os.path.basename(path) == "pyproject.toml" or "tool" in document:
        table = document.get("tool", {}).get("hexlint")
        if table is not None and not isinstance(table, dict):
            raise ConfigError(f"{path}: `tool.hexlint` must be a table")
        return table
    return document


def load_config_file(path: StrPath) -> Config:
    """An explicitly named configuration file (--config)."""
    path = spelled(path)
    if not os.path.isfile(path):
        raise ConfigError(f"{path}: configuration file not found")
    table = _hexlint_table(path)
    if table is None:
        raise ConfigError(f"{path}: no [tool.hexlint] table")
    return config_from_table(table, path)


def find_config_file(start: StrPath) -> str | None:
    found = _find_config(start)
    return found[0] if found is not None else None


def _find_config(start: StrPath) -> tuple[str, dict[str, Any] | None] | None:
    """The nearest configuration file and, for a pyproject.toml, the hexlint table it was chosen for (read once)."""
    directory = os.path.realpath(start)  # a symbolic link loop stays as spelled: discovery names it
    if not os.path.isdir(directory):
        directory = os.path.dirname(directory)
    for candidate_dir in self_and_parents(directory):
        hexlint_toml = os.path.join(candidate_dir, "hexlint.toml")
        if os.path.isfile(hexlint_toml):
            return hexlint_toml, None
        pyproject = os.path.join(candidate_dir, "pyproject.toml")
        if os.path.isfile(pyproject):
            table = _hexlint_table(pyproject, only_if_mentioned=True)
            if table is not None:
                return pyproject, table
    return None


def load_config(explicit: StrPath | None, start: StrPath | None) -> Config:
    """The configuration to use: --config if given, else the nearest file above `start` (or cwd), else defaults."""
    if explicit is not None:
        return load_config_file(explicit)
    found = _find_config(start if start is not None else os.getcwd())
    if found is None:
        return Config()
    path, table = found
    return config_from_table(table, path) if table is not None else load_config_file(path)


def rule_options(rule: Rule, config: Config) -> dict[str, Any]:
    """A rule's [options] defaults with the configuration's overrides on top."""
    return {**rule.options, **config.rule_options.get(rule.code, {})}


def path_matches_glob(path: StrPath, glob: str, root: StrPath) -> bool:
    """Whether `path` matches a config glob; the path is taken relative to `root` when it lies below it."""
    absolute = os.path.realpath(path)
    root = os.path.realpath(root)
    if absolute.startswith(root.rstrip(os.sep) + os.sep):
        relative = absolute[len(root.rstrip(os.sep)) + 1 :]
    else:
        relative = absolute.lstrip(os.sep)
    return glob_matches(glob, relative)


def ignored_codes_for(path: StrPath, config: Config) -> tuple[str, ...]:
    """Selectors that per-file-ignores turn off for `path`."""
    codes: list[str] = []
    for entry in config.per_file_ignores:
        if path_matches_glob(path, entry.glob, config.root):
            codes.extend(entry.codes)
    return tuple(codes)


def cache_directory(given: str | None, disabled: bool, config: Config, paths: Sequence[str]) -> str | None:
    """Where this run's cache is, or None for no cache: --no-cache (or HEXLINT_NO_CACHE=1) turns it off; else
    --cache-dir, HEXLINT_CACHE_DIR, the configuration's `cache-dir`, or `.hexlint_cache` at the project root: the
    directory of the configuration file, else the checkout (the nearest `.git` above the first path), else the
    working directory."""
    if disabled or os.environ.get("HEXLINT_NO_CACHE", "") not in ("", "0"):
        return None
    chosen = given or os.environ.get("HEXLINT_CACHE_DIR") or config.cache_dir
    if chosen:
        return chosen
    if config.path is not None:
        return os.path.join(os.path.dirname(config.path), DEFAULT_CACHE_DIRECTORY)
    start = os.path.abspath(paths[0] if paths else ".")
    for directory in self_and_parents(start if os.path.isdir(start) else os.path.dirname(start)):
        if os.path.exists(os.path.join(directory, ".git")):
            return os.path.join(directory, DEFAULT_CACHE_DIRECTORY)
    return DEFAULT_CACHE_DIRECTORY
