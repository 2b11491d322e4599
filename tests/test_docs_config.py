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
