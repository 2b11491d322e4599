"""The configuration examples in README.md and docs/usage.md are configurations hexlint accepts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hexlint.config import load_config_file, rule_options
from hexlint.registry import find_rule

ROOT = Path(__file__).resolve().parent.parent
TOML_BLOCK = re.compile(r"```toml\n(.*?)```", re.DOTALL)


def config_examples() -> list[tuple[str, str]]:
    examples = []
    for document in ("README.md", "docs/usage.md"):
        for block in TOML_BLOCK.findall((ROOT / document).read_text(encoding="utf-8")):
            if "[tool.hexlint" in block:
                examples.append((document, block))
    return examples


@pytest.mark.parametrize(("document", "block"), config_examples(), ids=lambda value: value[:24])
def test_config_example_loads_and_its_rule_options_apply(tmp_path: Path, document: str, block: str) -> None:
    for directory in re.findall(r'^project-root = "([^"]+)"', block, re.MULTILINE):
        (tmp_path / directory).mkdir(parents=True)  # the example's tree, which the configuration checks exists
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(block, encoding="utf-8")
    config = load_config_file(pyproject)
    for table in re.findall(r"^\[tool\.hexlint\.rules\.([\w-]+)\]", block, re.MULTILINE):
        rule = find_rule(table)
        assert rule is not None, f"{document}: no rule {table}"
        assert rule_options(rule, config), document


def test_there_are_examples_to_check() -> None:
    assert {document for document, _block in config_examples()} == {"README.md", "docs/usage.md"}


def usage_example() -> str:
    text = (ROOT / "docs" / "usage.md").read_text(encoding="utf-8")
    return next(block for block in TOML_BLOCK.findall(text) if block.startswith("[tool.hexlint]"))


def test_every_configuration_key_is_in_the_usage_example() -> None:
    from hexlint.config import _KNOWN_KEYS

    block = usage_example()
    top_level = block.split("\n[tool.hexlint.", 1)[0]
    written = set(re.findall(r"^([\w-]+) =", top_level, re.MULTILINE))
    written |= set(re.findall(r"^\[tool\.hexlint\.([\w-]+)", block, re.MULTILINE))
    assert written == set(_KNOWN_KEYS)


def test_the_documented_examples_use_no_old_spelling(tmp_path: Path) -> None:
    for document, block in config_examples():
        for directory in re.findall(r'^project-root = "([^"]+)"', block, re.MULTILINE):
            (tmp_path / directory).mkdir(parents=True, exist_ok=True)
        pyproject = tmp_path / "pyproject.toml"
        pyproject.write_text(block, encoding="utf-8")
        assert load_config_file(pyproject).notes == (), document


def test_every_command_line_option_is_in_the_usage_table() -> None:
    """Each long option of the lint command (the binary audit's are documented with the binary rules)."""
    import argparse

    from hexlint.cli import build_parser

    try:
        from hexlint.binary.options import add_binary_arguments
    except ImportError:  # pragma: no cover
        binary: set[str] = set()
    else:
        only_binary = argparse.ArgumentParser(add_help=False)
        add_binary_arguments(only_binary)
        binary = {option for action in only_binary._actions for option in action.option_strings}
    options = {
        option
        for action in build_parser()._actions
        for option in action.option_strings
        if option.startswith("--") and option not in binary and option != "--help"
    }
    text = (ROOT / "docs" / "usage.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"`(--[\w-]+)", "\n".join(line for line in text.splitlines() if line.startswith("| `"))))
    assert options - listed == set()
