"""The defines the tree's own CMakeLists.txt files give its sources: read without cmake, taken by the parse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_hexlint

from hexlint.cmake import evaluate_generator_expressions, parse_commands, read_build_defines

# The shape of ggml-hexagon's build: the host project configures the kernel build as an external project, passing
# options through CMAKE_ARGS from a function called once per DSP version.
HOST_CMAKE = """\
option(GGML_HEXAGON_HTP_DEBUG "debug output" OFF)
set(GGML_HEXAGON_FP32_QUANTIZE_GROUP_SIZE 128 CACHE STRING "quantize group size (32, 64, or 128)")
if (NOT IS_DIRECTORY "${HEXAGON_SDK_ROOT}")
    message(FATAL_ERROR "no SDK")   # a reader must not stop here
endif()
ggml_add_backend_library(ggml-hexagon ggml-hexagon.cpp)
target_compile_definitions(ggml-hexagon PRIVATE HOST_ONLY=1 INTERFACE FOR_USERS=1)
function(build_htp_skel V)
    ExternalProject_Add(htp-${V}
        SOURCE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/htp BUILD_ALWAYS ON
        CMAKE_ARGS
            -DCMAKE_BUILD_TYPE=Release
            -DHEXAGON_HTP_DEBUG=${GGML_HEXAGON_HTP_DEBUG}
            -DGGML_HEXAGON_FP32_QUANTIZE_GROUP_SIZE=${GGML_HEXAGON_FP32_QUANTIZE_GROUP_SIZE}
            -DDSP_VERSION=${V})
endfunction()
build_htp_skel(v68)
build_htp_skel(v73)
"""

KERNEL_CMAKE = """\
cmake_minimum_required(VERSION 3.22.2)
project(ggml-htp C CXX ASM)
set(HTP_LIB ggml-htp-${DSP_VERSION})
add_library(${HTP_LIB} SHARED main.c)
target_compile_definitions(${HTP_LIB} PRIVATE
    $<IF:$<BOOL:${HEXAGON_HTP_DEBUG}>,HTP_DEBUG=1,NDEBUG=1>
    $<IF:$<BOOL:${HEXAGON_HTP_DEBUG}>,FARF_HIGH=1,>
    FP32_QUANTIZE_GROUP_SIZE=${GGML_HEXAGON_FP32_QUANTIZE_GROUP_SIZE})
set(HTP_HMX_VERSIONS v73 v75 v79 v81)
list(FIND HTP_HMX_VERSIONS ${DSP_VERSION} _hmx_idx)
if (_hmx_idx GREATER_EQUAL 0)
    target_sources(${HTP_LIB} PRIVATE hmx-ops.c)
    target_compile_definitions(${HTP_LIB} PRIVATE HTP_HAS_HMX=1)
endif()
"""

KERNEL = """\
#if !defined(HTP_HAS_HMX) || FP32_QUANTIZE_GROUP_SIZE != 128
#error "built without the build's defines"
#endif
int kernel(void) { return FP32_QUANTIZE_GROUP_SIZE; }
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "ggml-hexagon"
    (root / "htp").mkdir(parents=True)
    (root / "CMakeLists.txt").write_text(HOST_CMAKE)
    (root / "htp" / "CMakeLists.txt").write_text(KERNEL_CMAKE)
    (root / "htp" / "hmx-ops.c").write_text(KERNEL)
    (root / "ggml-hexagon.cpp").write_text("int host(void) { return HOST_ONLY; }\n")
    return root


def flags(build, path: Path) -> list[str]:
    return [define.flag for define in build.defines_for(str(path))]


def test_the_kernel_build_gets_what_the_host_build_passes_it(tree: Path) -> None:
    build = read_build_defines(str(tree), {"DSP_VERSION": "v73"})
    assert flags(build, tree / "htp" / "hmx-ops.c") == ["NDEBUG=1", "FP32_QUANTIZE_GROUP_SIZE=128", "HTP_HAS_HMX=1"]
    assert build.notes == ()


def test_a_define_under_an_if_follows_the_version_parsed_for(tree: Path) -> None:
    build = read_build_defines(str(tree), {"DSP_VERSION": "v68"})
    # hmx-ops.c is no source of the v68 build; like a header it gets every define the directory's targets have.
    assert "HTP_HAS_HMX=1" not in flags(build, tree / "htp" / "main.c")
    assert "HTP_HAS_HMX=1" not in flags(build, tree / "htp" / "hmx-ops.c")


def test_an_option_turned_on_changes_the_generator_expressions(tree: Path) -> None:
    text = HOST_CMAKE.replace('"debug output" OFF', '"debug output" ON')
    (tree / "CMakeLists.txt").write_text(text)
    build = read_build_defines(str(tree), {"DSP_VERSION": "v73"})
    assert flags(build, tree / "htp" / "main.c")[:2] == ["HTP_DEBUG=1", "FARF_HIGH=1"]


def test_host_sources_get_private_defines_not_interface_ones(tree: Path) -> None:
    build = read_build_defines(str(tree), {"DSP_VERSION": "v73"})
    assert flags(build, tree / "ggml-hexagon.cpp") == ["HOST_ONLY=1"]
    # The kernel build is a separate project: nothing of the host's targets reaches it.
    assert "HOST_ONLY=1" not in flags(build, tree / "htp" / "main.c")


def test_directory_defines_reach_subdirectories_and_else_branches_run(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "CMakeLists.txt").write_text(
        'set(MODE "fast")\n'
        "if (MODE STREQUAL slow)\n  add_compile_definitions(SLOW)\n"
        'elseif (DEFINED NOT_SET OR (MODE MATCHES ^fa AND NOT MODE STREQUAL ""))\n'
        "  add_compile_definitions(FAST=2)\nelse()\n  add_definitions(-DNEITHER)\nendif()\n"
        "foreach(item IN ITEMS A B)\n  add_definitions(-DHAS_${item})\nendforeach()\n"
        "add_subdirectory(sub)\n"
    )
    (tmp_path / "sub" / "CMakeLists.txt").write_text('add_compile_definitions([[QUOTED="x y"]])  # comment\n')
    build = read_build_defines(str(tmp_path))
    assert flags(build, tmp_path / "a.c") == ["FAST=2", "HAS_A", "HAS_B"]
    assert flags(build, tmp_path / "sub" / "b.c") == ["FAST=2", "HAS_A", "HAS_B", 'QUOTED="x y"']


def test_what_the_reader_cannot_know_is_left_out_and_said(tmp_path: Path) -> None:
    (tmp_path / "CMakeLists.txt").write_text(
        "add_library(k a.c)\n"
        "target_compile_definitions(k PRIVATE $<$<COMPILE_LANGUAGE:C>:ONLY_C> KEPT)\n"
        "if (TARGET other)\n  add_compile_definitions(NEVER)\nendif()\n"
    )
    build = read_build_defines(str(tmp_path))
    assert flags(build, tmp_path / "a.c") == ["KEPT"]
    assert any("COMPILE_LANGUAGE" in note for note in build.notes)
    assert any("if (TARGET other)" in note for note in build.notes)


def test_a_broken_build_file_is_a_note_never_an_exception(tmp_path: Path) -> None:
    (tmp_path / "CMakeLists.txt").write_text('add_compile_definitions(A)\nset(X "never closed\n')
    build = read_build_defines(str(tmp_path))
    assert build.directories == ()
    assert "unterminated quoted argument" in build.notes[0]


def test_generator_expressions() -> None:
    scope = {"CMAKE_BUILD_TYPE": "Release"}
    assert evaluate_generator_expressions("$<IF:$<BOOL:OFF>,A,B>", scope) == "B"
    assert evaluate_generator_expressions("$<$<CONFIG:release>:R>$<$<NOT:1>:X>", scope) == "R"
    assert evaluate_generator_expressions("$<$<AND:1,$<STREQUAL:a,a>>:Y$<COMMA>Z>", scope) == "Y,Z"
    assert evaluate_generator_expressions("$<TARGET_PROPERTY:k,X>", scope) is None


def test_commands_lex_like_cmake() -> None:
    commands = parse_commands('#[[ block\n comment ]]\nset(A "x;y" z\\;w)\nSET (B [=[ [[ ]=])\n', "CMakeLists.txt")
    assert [(command.name, command.line) for command in commands] == [("set", 3), ("set", 4)]
    assert [argument.text for argument in commands[0].arguments] == ["A", "x;y", "z\\;w"]
    assert commands[1].arguments[1].text == " [[ "


def test_a_plain_run_parses_with_the_build_defines_and_says_so(tree: Path) -> None:
    kernel = str(tree / "htp" / "hmx-ops.c")
    run = run_hexlint("-v", "--select", "HX002", kernel)
    assert run.status == 0, run.stdout
    assert "define from the tree's build" in run.stderr and "HTP_HAS_HMX=1" in run.stderr
    without = run_hexlint("--select", "HX002", "--no-cmake-defines", kernel)
    assert without.status == 1 and "built without the build's defines" in without.stdout


def test_a_define_on_the_command_line_or_in_the_config_replaces_the_builds(tree: Path) -> None:
    kernel = str(tree / "htp" / "hmx-ops.c")
    overridden = run_hexlint("-v", "--select", "HX002", "-D", "FP32_QUANTIZE_GROUP_SIZE=64", kernel)
    assert overridden.status == 1 and "built without the build's defines" in overridden.stdout
    assert "FP32_QUANTIZE_GROUP_SIZE=128" not in overridden.stderr  # replaced, not redefined
    (tree / "hexlint.toml").write_text("cmake-defines = false\n")
    assert run_hexlint("--select", "HX002", "--config", str(tree / "hexlint.toml"), kernel).status == 1


def test_show_settings_names_the_defines_and_the_file_they_come_from(tree: Path) -> None:
    run = run_hexlint("--show-settings", "--format", "json", str(tree))
    settings = json.loads(run.stdout)["settings"]
    assert settings["cmake-defines"] == {"value": True, "source": "default"}
    host, kernel = sorted(key for key in settings if key.startswith("build-defines."))
    assert kernel.endswith('htp"') and settings[host]["value"] == ["HOST_ONLY=1"]
    key = kernel
    assert "HTP_HAS_HMX=1" in settings[key]["value"]
    assert settings[key]["source"].endswith("htp/CMakeLists.txt")
    off = json.loads(run_hexlint("--show-settings", "--format", "json", "--no-cmake-defines", str(tree)).stdout)
    assert off["settings"]["cmake-defines"] == {"value": False, "source": "command line"}
    assert not [key for key in off["settings"] if key.startswith("build-defines.")]


def test_a_parse_error_in_a_header_outside_the_run_is_reported_where_the_run_includes_it(tmp_path: Path) -> None:
    (tmp_path / "include").mkdir()
    (tmp_path / "include" / "outside.h").write_text("int broken( {\n")
    (tmp_path / "tree" / "htp").mkdir(parents=True)
    kernel = tmp_path / "tree" / "htp" / "k.c"
    kernel.write_text('int before;\n#include "outside.h"\nint k(void) { return 0; }\n')
    run = run_hexlint("--format", "json", "--select", "HX002", "-I", str(tmp_path / "include"), str(tmp_path / "tree"))
    [finding] = json.loads(run.stdout)["diagnostics"]
    assert finding["path"].endswith("k.c") and finding["line"] == 2
    assert "outside.h:1" in finding["message"]
    assert finding["related"][0]["path"].endswith("outside.h")


hypothesis = pytest.importorskip("hypothesis")
PIECES = [
    "if(",
    "elseif(",
    "else()",
    "endif()",
    "foreach(x IN ITEMS a b)",
    "endforeach()",
    "function(f A)",
    "endfunction()",
    "f(1)",
    "set(V ON)",
    "option(O doc OFF)",
    "list(FIND L x I)",
    "add_library(t a.c)",
    "target_compile_definitions(t ",
    "add_compile_definitions(",
    "$<IF:$<BOOL:${V}>,A=1,B>",
    "${V}",
    "NOT",
    "AND",
    "OR",
    "MATCHES",
    "(",
    ")",
    '"',
    "#",
    "#[[",
    "]]",
    "[[",
    "\\",
    ";",
    "STREQUAL",
    "GREATER_EQUAL",
    "0",
    "x",
    "\n",
    "add_subdirectory(.)",
]


@hypothesis.settings(max_examples=150, deadline=None)
@hypothesis.given(pieces=hypothesis.strategies.lists(hypothesis.strategies.sampled_from(PIECES), max_size=40))
def test_any_build_file_gives_defines_or_notes_never_an_exception(pieces: list[str], tmp_path_factory) -> None:
    directory = tmp_path_factory.mktemp("cmake")
    (directory / "CMakeLists.txt").write_text(" ".join(pieces))
    build = read_build_defines(str(directory))
    assert all(define.name.isidentifier() for _, own, _ in build.directories for define in own)
