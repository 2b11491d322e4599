"""The C front end (hexlint/c): parse settings, stand-in headers, HX002 from clang's errors, the index and Node.

Every input here is written by the test itself; none of it comes from upstream.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hexlint.c import index, parse
from hexlint.c.node import Node

ARCHES = ("v73", "v75", "v79", "v81")

# Uses a representative name from every stand-in header, as kernel sources do.
KERNEL_USING_EVERY_STUB = r"""
#include <AEEStdErr.h>
#include <HAP_compute_res.h>
#include <HAP_dcvs.h>
#include <HAP_etm_config.h>
#include <HAP_farf.h>
#include <HAP_mem.h>
#include <HAP_perf.h>
#include <HAP_power.h>
#include <HAP_ps.h>
#include <assert.h>
#include <dspqueue.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <qurt.h>
#include <qurt_futex.h>
#include <qurt_hvx.h>
#include <qurt_memory.h>
#include <qurt_thread.h>
#include <remote.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "htp_iface.h"

struct region { uint64_t base; uint32_t size; };

AEEResult htp_iface_munmap(remote_handle64 handle, uint32 fd) {
    (void) handle;
    return fd ? AEE_SUCCESS : AEE_EBADPARM;
}

static void worker(void *arg) { (void) arg; }

/* The SDK compiler's HMX intrinsics, which need no header there. */
void hmx_tile(void *scales, void *out, unsigned int tiles) {
    Q6_bias_mxmem2_A(scales);
    Q6_activation_hf_mxmem_RR(tiles, 2047);
    Q6_weight_hf_mxmem_RR(tiles, 2047);
    Q6_mxmem_AR_after_hf(out, 0);
    Q6_mxclracc_hf();
}

int use_everything(struct region *r, uint32_t fd) {
    char text[32];
    snprintf(text, sizeof(text), "%" PRIu64, (uint64_t) 1);
    r->base = NULL;  /* the Hexagon C library spells NULL as 0 */
    void *block = memalign(128, 256);
    memset(block, 0, 256);
    free(block);
    FARF(HIGH, "fd %u took %llu us", fd, HAP_perf_qtimer_count_to_us(HAP_perf_get_qtimer_count()));
    HAP_power_request_t request;
    request.type = HAP_power_set_HVX;
    request.hvx.power_up = TRUE;
    int err = HAP_power_set(NULL, &request);
    compute_res_attr_t attr;
    HAP_compute_res_attr_init(&attr);
    unsigned int rctx = HAP_compute_res_acquire(&attr, 1000);
    void *va = HAP_mmap(NULL, 4096, HAP_PROT_READ | HAP_PROT_WRITE, 0, (int) fd, 0);
    qurt_thread_attr_t thread_attr;
    qurt_thread_attr_init(&thread_attr);
    qurt_thread_t thread;
    qurt_thread_create(&thread, &thread_attr, worker, NULL);
    qurt_mem_cache_clean((qurt_addr_t) 0, 0, QURT_MEM_CACHE_FLUSH_INVALIDATE_ALL, QURT_MEM_DCACHE);
    qurt_sysenv_max_hthreads_t threads;
    qurt_sysenv_get_max_hw_threads(&threads);
    int units = (qurt_hvx_get_units() >> 8) & 0xff;
    atomic_uint seqn = 0;
    qurt_futex_wake(&seqn, 1);
    struct dspqueue_buffer buffer = {0};
    buffer.flags = DSPQUEUE_BUFFER_FLAG_FLUSH_SENDER;
    assert(units >= 0);
    return err + (int) rctx + (va != NULL) + (int) expf(1.0f) + (int) strlen(text) + HAP_user_etm_enable();
}
"""


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def kernel_file(tmp_path: Path, text: str | bytes, name: str = "op.c") -> Path:
    return write(tmp_path / "htp" / name, text)


def parse_kernel(path: Path, **settings: object) -> parse.ParsedUnit:
    return parse.parse_unit(str(path), parse.KERNEL, parse.ParseSettings(**settings))  # type: ignore[arg-type]


def messages(unit: parse.ParsedUnit) -> list[str]:
    return [diagnostic.message for diagnostic in unit.diagnostics]


@pytest.mark.parametrize("arch", ARCHES)
def test_every_stand_in_header_parses_cleanly_for_every_arch(tmp_path: Path, arch: str) -> None:
    unit = parse_kernel(kernel_file(tmp_path, KERNEL_USING_EVERY_STUB), arch=arch)
    assert unit.usable
    assert messages(unit) == []


@pytest.mark.parametrize("arch", ARCHES)
def test_arch_sets_hvx_version_and_ieee_float_from_v79(tmp_path: Path, arch: str) -> None:
    version = int(arch[1:])
    source = f"""
    #include <hexagon_types.h>
    #include <hvx_hexagon_protos.h>
    #if __HVX_ARCH__ != {version}
    #error wrong HVX version
    #endif
    #if __HVX_ARCH__ >= 79
    HVX_Vector add(HVX_Vector a, HVX_Vector b) {{ return Q6_Vsf_vadd_VsfVsf(a, b); }}
    #else
    HVX_Vector add(HVX_Vector a, HVX_Vector b) {{ return Q6_Vw_vadd_VwVw(a, b); }}
    #endif
    """
    unit = parse_kernel(kernel_file(tmp_path, source), arch=arch)
    assert messages(unit) == []
    assert f"-mcpu=hexagon{arch}" in unit.arguments


def test_syntax_error_is_one_hx002_naming_the_first_error_and_the_ast_stays_usable(tmp_path: Path) -> None:
    source = "int broken(void) { return 1 +; }\nint fine(void) { return 2; }\nint also_broken( { }\n"
    unit = parse_kernel(kernel_file(tmp_path, source))
    assert unit.usable
    assert len(unit.diagnostics) == 1
    diagnostic = unit.diagnostics[0]
    assert diagnostic.code == "HX002" and diagnostic.span.line == 1
    assert diagnostic.message.startswith("clang error: expected expression")
    assert "more error" in diagnostic.message
    functions = index.UnitIndex(unit).functions
    assert "fine" in functions


def test_missing_header_is_reported_once_per_header(tmp_path: Path) -> None:
    write(tmp_path / "htp" / "local.h", '#include "missing_a.h"\n#include <missing_b.h>\n')
    source = '#include "missing_a.h"\n#include "local.h"\n#include "missing_a.h"\nint x;\n'
    unit = parse_kernel(kernel_file(tmp_path, source))
    found = messages(unit)
    assert sum("'missing_a.h' not found" in message for message in found) == 1
    assert sum("'missing_b.h' not found" in message for message in found) == 1
    assert all(diagnostic.code == "HX002" for diagnostic in unit.diagnostics)


def test_non_utf8_bytes_in_a_comment_and_a_string_do_not_break_parsing(tmp_path: Path) -> None:
    source = b'/* caf\xe9 \xff\xfe */\nconst char *name = "na\xefve \x80";\nint answer(void) { return 42; }\n'
    unit = parse_kernel(kernel_file(tmp_path, source))
    assert unit.usable and messages(unit) == []
    unit_index = index.UnitIndex(unit)
    literal = unit_index.nodes("STRING_LITERAL")[0]
    assert isinstance(literal.text, str)
    assert "na" in unit_index.source_line(literal.path, literal.line)
    assert "answer" in unit_index.functions


def test_empty_file_parses_with_no_findings(tmp_path: Path) -> None:
    unit = parse_kernel(kernel_file(tmp_path, b""))
    assert unit.usable and unit.diagnostics == []
    assert index.UnitIndex(unit).functions == {}


@pytest.mark.parametrize("problem", ["missing", "directory", "unreadable"])
def test_unreadable_input_raises_input_error_naming_the_file(tmp_path: Path, problem: str) -> None:
    path = tmp_path / "htp" / "op.c"
    if problem == "directory":
        path.mkdir(parents=True)
    elif problem == "unreadable":
        kernel_file(tmp_path, "int x;\n").chmod(0)
        try:
            path.read_bytes()
        except PermissionError:
            pass
        else:
            path = Path("/proc/self/mem")  # root reads mode-000 files; this one fails to read for everyone
            if not path.exists():
                pytest.skip("no file that root cannot read on this system")
    with pytest.raises(parse.InputError) as raised:
        parse_kernel(path)
    assert raised.value.path == str(path)


def test_sdk_root_header_wins_over_the_stand_in(tmp_path: Path) -> None:
    sdk = tmp_path / "sdk"
    write(sdk / "incs" / "HAP_farf.h", "#define FAKE_SDK_MARKER 1\n#define FARF(level, ...) ((void) 0)\n")
    source = '#include <HAP_farf.h>\n#ifndef FAKE_SDK_MARKER\n#error "the stand-in was used"\n#endif\n'
    path = kernel_file(tmp_path, source)
    assert messages(parse_kernel(path, sdk_root=str(sdk))) == []
    assert any("the stand-in was used" in message for message in messages(parse_kernel(path)))


def test_compile_commands_flags_are_used(tmp_path: Path) -> None:
    write(tmp_path / "generated" / "config.h", "#define FROM_GENERATED 1\n")
    path = write(
        tmp_path / "src" / "host.cpp", '#include "config.h"\n#if !FROM_GENERATED || !FROM_DEFINE\n#error x\n#endif\n'
    )
    entry = {
        "directory": str(tmp_path / "src"),
        "command": f"c++ -I../generated -DFROM_DEFINE=1 -O2 -c {path.name} -o host.o",
        "file": path.name,
    }
    compile_commands = write(tmp_path / "compile_commands.json", json.dumps([entry]))
    settings = parse.ParseSettings(compile_commands=str(compile_commands))
    unit = parse.parse_unit(str(path), parse.HOST, settings)
    assert messages(unit) == []
    assert "-DFROM_DEFINE=1" in unit.arguments and "-O2" not in unit.arguments
    without = parse.parse_unit(str(path), parse.HOST, parse.ParseSettings())
    assert any("config.h" in message for message in messages(without))


def test_unreadable_compile_commands_is_an_input_error(tmp_path: Path) -> None:
    path = kernel_file(tmp_path, "int x;\n")
    broken = write(tmp_path / "compile_commands.json", "{not json")
    with pytest.raises(parse.InputError) as raised:
        parse_kernel(path, compile_commands=str(broken))
    assert raised.value.path == str(broken)


def test_host_without_libstdcxx_degrades_to_hx002(tmp_path: Path) -> None:
    path = write(tmp_path / "host.cpp", "#include <vector>\nstd::vector<int> values;\nint count() { return 1; }\n")
    clean = parse.parse_unit(str(path), parse.HOST, parse.ParseSettings())
    assert messages(clean) == []
    stripped = parse.parse_unit(str(path), parse.HOST, parse.ParseSettings(extra_arguments=("-nostdinc++",)))
    assert stripped.usable
    assert any("'vector' not found" in message for message in messages(stripped))
    assert "count" in index.UnitIndex(stripped).functions


@pytest.mark.parametrize(
    ("path", "kernel_globs", "host_globs", "role"),
    [
        ("ggml-hexagon/htp/matmul-ops.c", (), (), "kernel"),
        ("ggml-hexagon/ggml-hexagon.cpp", (), (), "host"),
        ("ggml-hexagon/htp-drv.cpp", (), (), "host"),
        ("npu/kernels/matmul.c", ("npu/kernels/*",), (), "kernel"),
        ("ggml-hexagon/htp/host-shim.c", (), ("*/host-shim.c",), "host"),
        ("ggml-hexagon/htp/op.c", ("*.c",), ("*/op.c",), "kernel"),
    ],
)
def test_classification_by_directory_and_globs(path: str, kernel_globs: tuple, host_globs: tuple, role: str) -> None:
    assert parse.classify(path, kernel_globs, host_globs) == role


def test_tree_include_dirs_finds_include_and_src_above(tmp_path: Path) -> None:
    tree = tmp_path / "ggml"
    (tree / ".git").mkdir(parents=True)
    (tree / "include").mkdir()
    path = write(tree / "src" / "ggml-hexagon" / "htp" / "op.c", "int x;\n")
    found = parse.tree_include_dirs(path)
    assert str(path.parent) == found[0]
    assert str(tree / "include") in found and str(tree / "src") in found


def test_node_constant_value_folds_macros_enums_sizeof_and_const_ints(tmp_path: Path) -> None:
    source = """
    #define QK 32
    enum { BLOCK = 8 };
    static const int LANES = 4;
    int f(int n, int m) {
        return n / QK + n % BLOCK + n / LANES + n / (int) sizeof(long long) + n / m + n / (2 * QK);
    }
    """
    unit_index = index.UnitIndex(parse_kernel(kernel_file(tmp_path, source)))
    divisions = [node for node in unit_index.nodes("BINARY_OPERATOR") if node.binary_operator in ("/", "%")]
    values = [node.children()[1].constant_value for node in divisions]
    assert values == [32, 8, 4, 8, None, 64]


def test_node_spelling_start_points_into_the_macro_definition(tmp_path: Path) -> None:
    source = "#define HALF(x) ((x) / 2)\nint f(int n) {\n    return HALF(n);\n}\n"
    unit_index = index.UnitIndex(parse_kernel(kernel_file(tmp_path, source)))
    (division,) = [node for node in unit_index.nodes("BINARY_OPERATOR") if node.binary_operator == "/"]
    assert division.line == 3 and division.is_macro_expansion
    assert division.spelling_start.line == 1


def test_index_walks_only_project_files_and_finds_enclosing_functions(tmp_path: Path) -> None:
    header = write(tmp_path / "htp" / "ops.h", "static inline int twice(int x) { return x + x; }\n")
    source = '#include <string.h>\n#include "ops.h"\nint outer(int n) {\n    return twice(n) + (int) strlen("");\n}\n'
    path = kernel_file(tmp_path, source)
    parsed = parse_kernel(path)
    project = index.build_project([parsed], [str(path), str(header)])
    (unit_index,) = project.units
    assert set(unit_index.functions) == {"twice", "outer"}  # not strlen from the stand-in string.h
    calls = {call.spelling: call for call in unit_index.nodes("CALL_EXPR")}
    assert unit_index.enclosing_function(calls["twice"]).spelling == "outer"
    returns = unit_index.nodes("RETURN_STMT")
    assert sorted(unit_index.enclosing_function(node).spelling for node in returns) == ["outer", "twice"]


def test_parent_and_ancestors(tmp_path: Path) -> None:
    source = "int f(int n) {\n    if (n > 1) {\n        return n / 2;\n    }\n    return 0;\n}\n"
    unit_index = index.UnitIndex(parse_kernel(kernel_file(tmp_path, source)))
    (division,) = [node for node in unit_index.nodes("BINARY_OPERATOR") if node.binary_operator == "/"]
    kinds = [node.kind for node in unit_index.ancestors(division)]
    assert kinds[:3] == ["RETURN_STMT", "COMPOUND_STMT", "IF_STMT"]
    assert kinds[-1] == "FUNCTION_DECL"
    parent = unit_index.parent(division)
    assert isinstance(parent, Node) and parent.kind == "RETURN_STMT"


def test_fastrpc_interface_header_is_generated_from_the_trees_idl(tmp_path: Path) -> None:
    idl = """
    #include "AEEStdDef.idl"
    struct demo_iface_conf { uint32 events[4]; };
    interface demo_iface : remote_handle64 {
        AEEResult start(in uint32 id, in uint64 queue, in demo_iface_conf conf);
        AEEResult info(rout uint32 n_threads, rout uint64 vtcm);
        AEEResult name(in string text, rout sequence<octet> blob);
    };
    """
    write(tmp_path / "htp" / "demo_iface.idl", idl)
    source = """
    #include "demo_iface.h"
    AEEResult demo_iface_start(remote_handle64 h, uint32_t id, uint64_t queue, const demo_iface_conf *conf) {
        return (AEEResult) (h + id + queue + conf->events[0]);
    }
    AEEResult demo_iface_info(remote_handle64 h, uint32 *n_threads, uint64 *vtcm) {
        *n_threads = 4;
        *vtcm = h;
        return 0;
    }
    int call(remote_handle64 h) {
        unsigned char blob[4];
        return demo_iface_name(h, "x", 1, blob, 4) + demo_iface_open(demo_iface_URI, &h);
    }
    """
    unit = parse_kernel(kernel_file(tmp_path, source))
    assert messages(unit) == []
    assert not (tmp_path / "htp" / "demo_iface.h").exists()  # generated outside the tree, never into it


def test_arguments_libclang_rejects_give_an_unusable_unit_and_one_hx002(tmp_path: Path) -> None:
    path = kernel_file(tmp_path, "int x;\n")
    unit = parse_kernel(path, extra_arguments=("--target=not-a-target",))
    assert not unit.usable
    assert [diagnostic.code for diagnostic in unit.diagnostics] == ["HX002"]
    assert unit.diagnostics[0].span.path == str(path)
    assert index.UnitIndex(unit).functions == {}


# compile_commands.json is read once per run, not once per parsed file, and each f


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


def test_a_reference_to_a_declaration_the_walk_did_not_build_is_found_again_after_it_was_freed(
    tmp_path: Path,
) -> None:
    """A member of a struct declared in a header another unit owns has a target of its own, held weakly: once that
    node is freed, asking again must find it again, not answer None, or what a rule learns depends on which rule
    asked first (HX104 ahead of HX113 once hid six findings)."""
    import gc

    write(tmp_path / "htp" / "spad.h", "struct htp_spad { unsigned char *data; };\n")
    path = kernel_file(tmp_path, '#include "spad.h"\nunsigned char *f(struct htp_spad *s) { return s->data; }\n')
    unit_index = index.UnitIndex(parse_kernel(path, include_dirs=(str(tmp_path / "htp"),)))
    (member,) = [node for node in unit_index.nodes("MEMBER_REF_EXPR") if node.spelling == "data"]
    assert member.referenced is not None and member.referenced.kind == "FIELD_DECL"
    gc.collect()
    target = member.referenced
    assert target is not None and target.spelling == "data"
