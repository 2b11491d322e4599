"""`--show-settings` and `--show-files` (ruff's introspection): what a run would use, and where each value came from.

Nothing is linted: the settings are the configuration file's values merged with the command line's, as the engine
merges them; the files are the ones the run would lint, each with its role (kernel, host, binary) and, when a
cross-file rule is on, the rest of the tree it would parse as context.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace

from hexlint.cmake import CMAKE_LISTS
from hexlint.config import Config, option_key
from hexlint.engine import (
    DEFAULT_CONTEXT,
    RunSettings,
    collect_files,
    context_sources,
    display_path,
    enabled_rules,
    role_for,
    selectors_in_effect,
)

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DEFAULT = "default"
COMMAND_LINE = "command line"


def _source(config: Config, key: str, from_cli: bool) -> str:
    """default, the configuration file, the command line, or the file and the command line together."""
    keys = {key, "extend-" + key} if key in ("select", "ignore") else {key}
    in_file = bool(keys & config.keys_set) and config.path is not None
    if from_cli and in_file:
        return f"{config.path} + {COMMAND_LINE}"
    if from_cli:
        return COMMAND_LINE
    return config.path if in_file and config.path is not None else DEFAULT


def resolved_settings(config: Config, settings: RunSettings, paths: Sequence[str] = ()) -> list[tuple[str, Any, str]]:
    """(key, value, where it came from) for every configuration key, the defines the build files of the PATHS'
    trees give, then every option of the enabled rules."""
    select, ignore = selectors_in_effect(config, settings)
    compile_commands = settings.compile_commands or config.compile_commands
    rows: list[tuple[str, Any, str]] = [
        ("select", list(select), _source(config, "select", bool(settings.select or settings.extend_select))),
        ("ignore", list(ignore), _source(config, "ignore", bool(settings.ignore))),
        (
            "per-file-ignores",
            {entry.glob: list(entry.codes) for entry in config.per_file_ignores},
            _source(config, "per-file-ignores", False),
        ),
        ("kernel-globs", [*settings.kernel_globs, *config.kernel_globs], _source(config, "kernel-globs", False)),
        ("host-globs", list(config.host_globs), _source(config, "host-globs", False)),
        ("exclude", list(config.exclude), _source(config, "exclude", False)),
        (
            "include-dirs",
            [*settings.include_dirs, *config.include_dirs],
            _source(config, "include-dirs", bool(settings.include_dirs)),
        ),
        ("defines", [*settings.defines, *config.defines], _source(config, "defines", bool(settings.defines))),
        (
            "cmake-defines",
            config.cmake_defines and not settings.no_cmake_defines,
            _source(config, "cmake-defines", settings.no_cmake_defines),
        ),
        ("arch", settings.arch or config.arch or "v73", _source(config, "arch", bool(settings.arch))),
        ("compile-commands", compile_commands, _source(config, "compile-commands", bool(settings.compile_commands))),
        (
            "context",
            settings.context or config.context or DEFAULT_CONTEXT,
            _source(config, "context", bool(settings.context)),
        ),
        (
            "project-root",
            settings.project_root or config.project_root,
            _source(config, "project-root", bool(settings.project_root)),
        ),
        ("cache-dir", settings.cache_dir, _cache_dir_source(config, settings, paths)),
        (
            "unsafe-fixes",
            settings.unsafe_fixes,
            _source(config, "unsafe-fixes", settings.unsafe_fixes != config.unsafe_fixes),
        ),
    ]
    rows += build_define_rows(config, settings, paths)
    for rule in enabled_rules(config, settings):
        overrides = config.rule_options.get(rule.code, {})
        for name, default in rule.options.items():
            key = f"rules.{rule.code}.{option_key(name)}"
            rows.append((key, overrides.get(name, default), _source(config, key, False)))
    return rows


def _cache_dir_source(config: Config, settings: RunSettings, paths: Sequence[str]) -> str:
    """The configuration's, the default's, or (--cache-dir, --no-cache, HEXLINT_CACHE_DIR, HEXLINT_NO_CACHE) the
    command line's and environment's."""
    from hexlint.config import cache_directory

    if settings.cache_dir is None:  # off: only --no-cache or HEXLINT_NO_CACHE turn it off
        return "command line or environment"
    if settings.cache_dir == cache_directory(None, False, replace(config, cache_dir=None), list(paths) or ["."]):
        return DEFAULT
    if config.cache_dir is not None and settings.cache_dir == config.cache_dir:
        return str(config.path)
    return "command line or environment"


def build_define_rows(config: Config, settings: RunSettings, paths: Sequence[str]) -> list[tuple[str, Any, str]]:
    """`build-defines."DIR"` = the defines taken for the files under DIR, from the CMakeLists.txt files read."""
    from hexlint.engine import forget_real_paths, taken_build_defines, tree_builds, tree_root_for

    builds = tree_builds(config, settings)
    if builds is None or settings.stdin_filename is not None:
        return []
    forget_real_paths()
    try:
        sources, _ = collect_files(paths, config)
        for root in dict.fromkeys(tree_root_for(path) for path in sources):
            if root is not None:
                builds.defines_for(os.path.join(root, CMAKE_LISTS), root)
        by_directory: dict[str, list[str]] = {}
        origins: dict[str, list[str]] = {}
        for line in taken_build_defines(builds):
            if line.startswith("build files: "):
                continue
            directory, _, rest = line.partition(": ")
            flag, _, origin = rest.partition(" (from ")
            by_directory.setdefault(directory, []).append(flag)
            origins.setdefault(directory, []).append(origin.rstrip(")").split(":")[0])
        return [
            (f'build-defines."{directory}"', flags, ", ".join(dict.fromkeys(origins[directory])))
            for directory, flags in by_directory.items()
        ]
    finally:
        forget_real_paths()


def _toml(value: Any) -> str:
    from hexlint.cli import toml_value

    if value is None:
        return "none"
    return "{}" if value == {} else toml_value(value)


def show_settings(config: Config, settings: RunSettings, as_json: bool = False, paths: Sequence[str] = ()) -> str:
    rows = resolved_settings(config, settings, paths)
    rules = [rule.code for rule in enabled_rules(config, settings)]
    if as_json:
        from hexlint.report import dump_json

        document = {
            "config_file": config.path,
            "settings": {key: {"value": value, "source": source} for key, value, source in rows},
            "enabled_rules": rules,
        }
        return dump_json(document)
    lines = [f"# configuration file: {config.path or 'none (defaults)'}"]
    lines += [f"{key} = {_toml(value)}  # {source}" for key, value, source in rows]
    lines.append(f"enabled-rules = {_toml(rules)}  # resolved from select and ignore")
    return "\n".join(lines) + "\n"


def files_with_roles(paths: Sequence[str], config: Config, settings: RunSettings) -> list[tuple[str, str]]:
    """(path, role) for every file the run would lint, then the context files: kernel, host, binary or context."""
    from hexlint.engine import forget_real_paths

    forget_real_paths()
    try:
        if settings.stdin_filename is not None:
            sources, binaries = [display_path(settings.stdin_filename)], []
        else:
            sources, binaries = collect_files(paths, config)
        rules = enabled_rules(config, settings)
        rows = [(path, role_for(path, config, settings)) for path in sources]
        if any(rule.kind == "binary" for rule in rules):
            rows += [(path, "binary") for path in binaries]
        if sources:
            rows += [(path, "context") for path in context_sources(sources, rules, config, settings)]
        return rows
    finally:
        forget_real_paths()


def show_files(paths: Sequence[str], config: Config, settings: RunSettings, as_json: bool = False) -> str:
    rows = files_with_roles(paths, config, settings)
    if as_json:
        from hexlint.report import dump_json

        return dump_json({"files": [{"path": path, "role": role} for path, role in rows]})
    return "".join(f"{role:<8} {path}\n" for path, role in rows)
