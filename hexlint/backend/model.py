"""The backend model: one object per project that every source rule queries.

A rule asks the model ("which entry points run this worker", "which kernel_params fields does the host write for this
op", "which loop repeats this node", "is this pointer internal") and never re-derives the answer from the AST. Facts
are computed on first query and kept for the project's life (in `Project.memo`): a lint run with every rule on pays
for each fact once. Facts that depend on codebase names take a frozen settings record built from rule options, and
are kept per settings (two rules configured alike share them).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from hexlint.backend import (
    dispatch,
    dma,
    fastdiv,
    host,
    kernel_params,
    loops,
    mdev,
    names,
    ops,
    pointers,
    pragmas,
    trace,
    trace_regions,
    vtcm,
    workers,
)
from hexlint.c.index import Project, UnitIndex, included_files, memoized
from hexlint.c.node import Node

_COMMENT = re.compile(rb"//[^\n]*|/\*.*?\*/", re.DOTALL)


class BackendModel:
    """The queries the source rules ask of a project; see the modules of `hexlint.backend` for each topic's facts."""

    def __init__(self, project: Project) -> None:
        self.project = project
        # What a rule learnt about the tree and the user should hear once, not as a finding (hexlint: note: ...).
        self.notes: list[str] = []

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    # ------------------------------------------------------------ units

    @property
    def units(self) -> list[UnitIndex]:
        return self.project.units

    def kernel_units(self) -> list[UnitIndex]:
        return self.project.kernel_units()

    def host_units(self) -> list[UnitIndex]:
        return self.project.host_units()

    # ------------------------------------------------------------ ops and dispatch

    def call_graph(self) -> dict[str, set[str]]:
        """Kernel function -> the kernel functions it calls or names (macro bodies included)."""
        return dispatch.kernel_call_graph(self.project)

    def reachable(self, function: str) -> set[str]:
        """The kernel functions `function` reaches through the call graph, itself included."""
        return dispatch.reachable(self.call_graph(), function)

    def callers(self, function: str) -> set[str]:
        """The kernel functions that call or name `function` (the call graph read backwards)."""

        def compute() -> dict[str, set[str]]:
            backwards: dict[str, set[str]] = {}
            for caller, callees in self.call_graph().items():
                for callee in callees:
                    backwards.setdefault(callee, set()).add(caller)
            return backwards

        return memoized(self.project.memo, "model.callers", compute).get(function, set())

    def macro_bodies(self) -> dict[bytes, bytes]:
        return dispatch.macro_bodies(self.project)

    def dispatch(
        self,
        op_pattern: str = dispatch.DEFAULT_OP_PATTERN,
        ignored_ops: frozenset[str] = frozenset(dispatch.DEFAULT_IGNORED_OPS),
    ) -> dict[str, frozenset[str]]:
        """Kernel entry function -> the ops whose dispatch `case` calls it."""
        return dispatch.kernel_dispatch(self.project, re.compile(op_pattern), ignored_ops)

    def op_table(self, settings: ops.OpTableSettings | None = None) -> ops.OpTable:
        """Which GGML ops supports_op takes (through which predicate), what HTP op each runs as, whether a kernel
        handles it, and each predicate's rejections."""
        return ops.op_table(self.project, settings or ops.OpTableSettings())

    # ------------------------------------------------------------ kernel_params flows

    def kernel_params(self, options: Mapping[str, Any]) -> kernel_params.KernelParamsFacts:
        """Params struct fields, the host's writes and the kernels' reads, each with its ops."""
        return kernel_params.gather(self.project, options)

    def call_chains(
        self, unit: UnitIndex, entries: tuple[str, ...], checkers: tuple[str, ...], not_followed: tuple[str, ...]
    ) -> dict[str, tuple[host.CallHop, ...]]:
        """Host functions reached from `supports_op` (or a `supported_*()` checker), each with its shortest chain."""
        return host.call_chains(unit, entries, checkers, not_followed)

    def enclosing_callable(self, unit: UnitIndex, node: Node) -> str | None:
        """The host function, or namespace-scope lambda variable, whose body holds `node`."""
        return host.enclosing_callable(unit, node)

    def lambda_variables(self, unit: UnitIndex) -> dict[str, Node]:
        """Namespace-scope variables holding a lambda, by name (followed like functions)."""
        return host.lambda_variables(unit)

    def ownership_tests(self, unit: UnitIndex, settings: host.OwnershipSettings) -> frozenset[tuple[str, int, int]]:
        """Buffer reads and calls (path, start, end) that make up NULL-tolerant session-ownership tests in `unit`."""
        return host.ownership_tests(unit, settings)

    # ------------------------------------------------------------ entry points, workers, trace events

    def kernel_text(self) -> trace.KernelText:
        """Comment-free text of each kernel function with the bodies of the macros it uses."""
        return trace.kernel_text(self.project)

    def entry_points(self, settings: trace.TraceSettings) -> list[trace.EntryPoint]:
        """Op entry points (dispatch targets, entry-pattern functions), each with the workers it hands to the pool."""
        return memoized(
            self.project.memo,
            ("model.entry_points", settings),
            lambda: trace.entry_points(self.project, settings, self.kernel_text()),
        )

    def workers(self, settings: trace.TraceSettings) -> dict[str, tuple[trace.EntryPoint, ...]]:
        """Worker function -> every entry point that hands it to the pool, in entry order."""

        def compute() -> dict[str, tuple[trace.EntryPoint, ...]]:
            runs: dict[str, list[trace.EntryPoint]] = {}
            for entry in self.entry_points(settings):
                for worker in entry.workers:
                    runs.setdefault(worker, []).append(entry)
            return {worker: tuple(entries) for worker, entries in runs.items()}

        return memoized(self.project.memo, ("model.workers", settings), compute)

    def worker_writes(self, options: Mapping[str, Any]) -> list[workers.Worker]:
        """Every function handed to the worker pool, with its launches, its context and thread-index parameters and
        its writes (globals, statics, shared or per-thread context fields), each with the guard it runs under."""
        return workers.workers(self.project, options)

    def traced(self, function: str, settings: trace.TraceSettings) -> bool:
        """Whether `function` (or a function it reaches) emits a compute trace event."""
        return trace.covered(self.kernel_text(), self.call_graph(), function, settings)

    def trace_functions(self, settings: trace.TraceSettings) -> list[str]:
        """Kernel functions that call a trace start or stop function themselves."""
        return trace.functions_with_trace_calls(self.kernel_text(), settings)

    def trace_imbalances(self, function: str, settings: trace.TraceSettings) -> list[trace.Imbalance]:
        """Trace events of `function` left open, stopped unstarted or mismatched on some path."""

        def compute() -> list[trace.Imbalance]:
            unit, node = self.kernel_text().functions[function]
            body = next((child for child in node.children() if child.kind == "COMPOUND_STMT"), None)
            return [] if body is None else list(trace.BalanceWalker(unit, settings).run(body))

        return memoized(self.project.memo, ("model.trace_imbalances", function, settings), compute)

    def mentions(self, identifier: str) -> bool:
        """Whether the kernel code names `identifier` (a function, macro or type), comments aside: its files and the
        headers they include, hexlint's stand-ins and clang's own headers aside."""

        def compute() -> bool:
            pattern = re.compile(rb"\b%s\b" % re.escape(identifier.encode()))
            encoded = identifier.encode()
            for unit in self.kernel_units():
                for path in _tree_files(unit):
                    data = unit.source_bytes(path)
                    if encoded in data and pattern.search(_COMMENT.sub(b" ", data)):
                        return True
            return False

        return memoized(self.project.memo, ("model.mentions", identifier), compute)

    def trace_regions(
        self, settings: trace.TraceSettings, callees: frozenset[str] | None = None
    ) -> dict[str, trace_regions.FunctionTrace]:
        """The calls made inside trace events, per kernel function emitting events (only `callees`' calls, if given)."""
        return trace_regions.function_traces(self.project, settings, callees)

    def trace_starts(self, settings: trace.TraceSettings, info_argument: int) -> list[trace_regions.TraceStart]:
        """Every trace event start, with its event type, `info` argument and the loops around it."""
        return trace_regions.trace_starts(self.project, settings, info_argument)

    def possible_waits(self, wait_functions: tuple[str, ...]) -> frozenset[str]:
        """The wait functions and every kernel function that may reach one."""
        return trace_regions.possible_waits(self.project, wait_functions)

    def dma_wait_helpers(
        self, settings: trace.TraceSettings, wait_functions: tuple[str, ...], dma_events: tuple[str, ...]
    ) -> dict[str, str]:
        """Kernel function -> the DMA wait it always reaches outside a DMA event of its own."""
        return trace_regions.dma_wait_helpers(self.project, settings, wait_functions, dma_events)

    # ------------------------------------------------------------ fastdiv

    def fastdiv_inits(self, options: Mapping[str, Any]) -> list[fastdiv.FastdivInit]:
        """Every `init_fastdiv_values()` of kernel code with the divisions its value reaches and why each recurs."""
        return fastdiv.fastdiv_inits(self.project, options)

    # ------------------------------------------------------------ DMA queues

    def dma_functions(self, settings: dma.DmaSettings) -> list[dma.FunctionDma]:
        """Every kernel function that touches a DMA queue (directly or through the tree's push/pop helpers), with the
        transfers in flight at each way out and at each flush."""
        return dma.dma_functions(self.project, settings)

    # ------------------------------------------------------------ multi-device ranges, partitions, fences

    def mdev_partitions(self, options: Mapping[str, Any]) -> list[mdev.Partition]:
        """Every multi-device partition of kernel code (helper calls and hand-written splits by the device count),
        with its units, guard, range variables, early return and whether the op writes through DMA alone."""
        return mdev.partitions(self.project, mdev.settings_from(options))

    def mdev_coordinates(self, options: Mapping[str, Any]) -> list[mdev.Coordinate]:
        """Outer coordinates declared at 0 and stepped in a loop of a function whose range starts at `row_start`."""
        return mdev.coordinates(self.project, mdev.settings_from(options))

    def mdev_names(self, options: Mapping[str, Any]) -> list[mdev.MdevName]:
        """`mdev` names in pool workers, `mdev_` fields in context structs."""
        return mdev.mdev_names(self.project, mdev.settings_from(options))

    def mdev_dma_only_writer(self, options: Mapping[str, Any], function: str) -> bool:
        """The op `function` writes its destination through DMA alone (in itself and every function it reaches)."""
        return mdev.dma_only_writer(self.project, mdev.settings_from(options), function)

    def mdev_completions(self, options: Mapping[str, Any]) -> list[mdev.Completion]:
        """Completion signals (barrier, fence write, response) after unflushed work or undrained DMA pushes."""
        return mdev.completions(self.project, mdev.settings_from(options))

    def mdev_sequence_issues(self, options: Mapping[str, Any]) -> list[mdev.SequenceIssue]:
        """Fence sequence numbers ordered by unsigned comparison, and fence writes that do not advance the counter."""
        return mdev.sequence_issues(self.project, mdev.settings_from(options))

    # ------------------------------------------------------------ loops

    def loops(self, unit: UnitIndex) -> list[loops.LoopRegion]:
        """The loops of a unit that repeat (not `do { } while (0)`), each with its repeated bytes."""
        return unit_loops(unit)

    def loop_finder(self, unit: UnitIndex) -> loops.LoopFinder:
        """Answers "which loop repeats this node?" for one unit."""
        return memoized(unit.memo, "model.loop_finder", lambda: loops.LoopFinder(self.loops(unit)))

    def innermost_loop(self, unit: UnitIndex, node: Node) -> loops.LoopRegion | None:
        return self.loop_finder(unit).innermost(node)

    def unroll_pragmas(self) -> list[pragmas.GovernedLoop]:
        """Every unroll pragma of the kernel code with the loop it governs (its count resolved where it can be)."""
        return pragmas.governed_loops(self.project)

    def vtcm_provenance(self, vtcm_names: vtcm.VtcmNames) -> vtcm.VtcmProvenance:
        """Which locals, struct fields, parameters and returns hold a VTCM-derived pointer, each with its chain."""
        return vtcm.vtcm_provenance(self.project, vtcm_names)

    @staticmethod
    def prepare_vtcm_flows(unit: UnitIndex, vtcm_names: vtcm.VtcmNames) -> None:
        """Computes ahead the flows of a kernel unit that `vtcm_provenance` reads from it alone."""
        vtcm.unit_flows(unit, vtcm_names)

    def vtcm_scalar_accesses(self, vtcm_names: vtcm.VtcmNames) -> list[vtcm.ScalarAccess]:
        """Scalar loads and stores through VTCM-derived pointers (vector accesses and DMA descriptors aside)."""
        return vtcm.scalar_accesses(self.project, vtcm_names)

    # ------------------------------------------------------------ built libraries of the same run

    def libraries_spilling_in_loops(self, function: str) -> tuple[str, ...]:
        """The libraries audited in the same run in which `function` spills HVX registers inside a loop."""
        return pragmas.libraries_spilling_in_loops(self.project, function)

    # ------------------------------------------------------------ pointer provenance

    def null_checks(self, settings: pointers.NullCheckSettings) -> list[pointers.NullCheck]:
        """Every NULL test of a pointer that is internal, a required operand or a required operand's data."""
        return pointers.null_checks(self.project, settings)


def _tree_files(unit: UnitIndex) -> list[str]:
    """The unit's main file and every header it includes that is neither a stand-in nor one of clang's."""
    from hexlint.c.parse import builtin_include_dir, stubs_dir

    foreign = (str(stubs_dir().resolve()) + os.sep, str(builtin_include_dir().resolve()) + os.sep)
    return [unit.path, *(path for path in included_files(unit.unit) if not path.startswith(foreign))]


def unit_loops(unit: UnitIndex) -> list[loops.LoopRegion]:
    return memoized(unit.memo, "model.loops", lambda: loops.loop_regions(unit))


def prepare_unit(unit: UnitIndex) -> None:
    """Computes ahead the facts of one kernel unit that the cross-file rules ask of every kernel unit: its names by
    spelling, words, macros, loops and struct field writes. They are memoized on the unit, so the rules find them
    there. A lint run calls this for each unit as soon as it is indexed, while the threads parse the next files: the
    main thread would wait for them anyway. Each fact reads this unit alone."""
    if unit.role != "kernel":
        return
    for kind in ("CALL_EXPR", "MEMBER_REF_EXPR"):
        names.by_spelling(unit, kind)
    names.unit_words(unit)
    vtcm.unit_macro_names(unit)
    unit_loops(unit)
    pointers.field_writes(unit)


def model_of(project: Project) -> BackendModel:
    """The project's model, built once: every rule of a run queries the same one."""
    return memoized(project.memo, "model", lambda: BackendModel(project))
