"""Directory walks: .gitignore files (pathspec's GitIgnoreSpec) nested and negated as git reads them."""

from __future__ import annotations

import os
from pathlib import Path

from hexlint.config import path_matches_glob
from hexlint.discover import discover


def make(root: Path, *relatives: str) -> None:
    for relative in relatives:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("int a;\n")


def found(root: Path) -> list[str]:
    return sorted(os.path.relpath(path, root) for path in discover([root]).sources)


def test_a_deeper_gitignore_overrides_the_ones_above_and_anchors_to_its_own_directory(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*.gen.c\nscratch/\n")
    make(tmp_path, "top.gen.c", "local.c", "sub/keep.gen.c", "sub/drop.gen.c", "sub/local.c", "sub/deeper/local.c")
    make(tmp_path, "sub/scratch/s.c")
    (tmp_path / "sub" / ".gitignore").write_text("!keep.gen.c\n/local.c\n")
    assert found(tmp_path) == ["local.c", "sub/deeper/local.c", "sub/keep.gen.c"]


def test_a_file_below_an_ignored_directory_cannot_be_re_included(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("build/\n!build/keep.c\n")
    make(tmp_path, "build/keep.c", "src/a.c")
    assert found(tmp_path) == ["src/a.c"]  # as git: the directory is pruned, its files are never looked at


def test_hidden_directories_and_files_are_skipped_without_any_gitignore(tmp_path: Path) -> None:
    make(tmp_path, ".cache/a.c", "src/.b.c", "src/c.c")
    assert found(tmp_path) == ["src/c.c"]


def test_a_gitignore_of_comments_only_ignores_nothing(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("# nothing here\n\n")
    make(tmp_path, "a.c")
    assert found(tmp_path) == ["a.c"]


def test_config_globs_use_gitignore_syntax(tmp_path: Path) -> None:
    def matches(glob: str, relative: str) -> bool:
        return path_matches_glob(tmp_path / relative, glob, tmp_path)

    assert matches("tests/*", "tests/a.c") and matches("tests/*", "tests/sub/a.c")
    assert not matches("tests/*", "x/tests/a.c")  # an inner `/` anchors it
    assert matches("third_party", "a/third_party/y.c")  # no `/`: a name at any depth, and what is below it
    assert matches("dsp/*.c", "dsp/k.c") and not matches("dsp/*.c", "dsp/deeper/k.c")
    assert matches("**/htp/*", "x/y/htp/k.c")
    assert matches("*.gen.c", "deep/down/x.gen.c") and not matches("*.gen.c", "x.gen.h")
