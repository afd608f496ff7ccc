"""Build a Flow's definition graph from its source: the entry point of the static analysis."""

from __future__ import annotations

import ast
import sys
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial

from dexviz.analysis.definition.builder import GraphBuilder
from dexviz.analysis.definition.cells import load_cell_source
from dexviz.analysis.definition.context import AnalysisContext
from dexviz.analysis.definition.errors import DefinitionSourceError
from dexviz.analysis.definition.flows import find_flow, read_rpcs, read_step_list
from dexviz.analysis.definition.loader import load_source
from dexviz.analysis.definition.model import Diagnostic, FlowDefinitionGraph, Span
from dexviz.analysis.definition.resources import Resource
from dexviz.analysis.definition.steps import HandlerReader
from dexviz.analysis.definition.symbols import ModuleIndex
from dexviz.analysis.definition.targets import step_type_name

__all__ = ["analyze_flow", "analyze_module"]

_CONTROL_EDGES = frozenset({"transition", "failure_transition"})
ANALYSIS_RECURSION_LIMIT = 12_000
"""Recursion limit while a Flow is analysed: enough for a 1,000-term sum or 400-deep elif."""


def analyze_flow(source: object, flow: str | None = None) -> FlowDefinitionGraph:
    """Read the Flow in ``source`` (a path, module, Flow class or instance) into its graph.

    The file is parsed with ``ast``; nothing in it is imported or executed.

    Args:
        source: A ``.py`` path (``"file.py:FlowName"`` also works), a module, or a Flow class
            or instance, whose source file is read (for a class typed into notebook cells,
            the text of those cells: see :mod:`dexviz.analysis.definition.cells`).
        flow: The Flow class name (or Flow type) when the file defines several.

    Raises:
        DefinitionSourceError: Syntax error, no Flow, or several Flows and no ``flow``.
        FileNotFoundError: The path does not exist.
    """
    source_file = load_cell_source(source) or load_source(source)
    return analyze_module(ModuleIndex.build(source_file), flow or source_file.flow_hint)


def analyze_module(module: ModuleIndex, flow: str | None = None) -> FlowDefinitionGraph:
    """Read the Flow named ``flow`` (or the only Flow) of an indexed module.

    Deep but valid code (a 400-deep ``elif`` chain, a 1,000-term sum) is analysed with extra
    recursion headroom; a handler nested deeper still becomes a ``too_deep`` error diagnostic
    naming its file and line, and the rest of the Flow is analysed.
    """
    with recursion_headroom():
        try:
            return _analyze(module, flow)
        except RecursionError:
            raise DefinitionSourceError(
                module.path, "too deep to analyze (the Flow class nests too deeply)",
                code="too_deep",
            ) from None


def _analyze(module: ModuleIndex, flow: str | None) -> FlowDefinitionGraph:
    flow_class = find_flow(module, flow)
    ctx = AnalysisContext.create(module, flow_class)
    flow_name = step_type_name(module, flow_class)
    builder = GraphBuilder(flow_name, module.path)
    reader = HandlerReader(ctx, builder)
    entries = read_step_list(ctx)
    for entry in entries:
        reader.add_step(entry)
    for entry in entries:
        _guarded(ctx, entry.step.node or entry.at, partial(reader.read_step, entry))
    for rpc in read_rpcs(ctx):
        _guarded(ctx, rpc.func, partial(reader.read_rpc, rpc))
    timeout_handler = module.method(flow_class, "handle_timeout") or flow_class
    _guarded(ctx, timeout_handler, lambda: reader.read_timeout_handler(flow_name))
    declared = reader.read_schema()
    start = next((f"step:{e.step.name}" for e in entries if e.start), None)
    span = Span(flow_class.lineno, flow_class.col_offset)
    draft = builder.build(start, ctx.report.items, span)
    extra = _reachability(draft, flow_class) + _resource_checks(draft, declared, flow_class)
    return builder.build(start, [*ctx.report.items, *extra], span)


def _guarded(ctx: AnalysisContext, at: ast.AST, read: Callable[[], object]) -> None:
    """Run one handler's reading; one nested too deeply becomes a diagnostic, not a crash."""
    try:
        read()
    except RecursionError:
        line = getattr(at, "lineno", None)
        ctx.report.error(
            "too_deep",
            f"too deep to analyze at {ctx.module.path}:{line}; this part of the graph is "
            "left out",
            at,
        )


@contextmanager
def recursion_headroom(limit: int | None = None) -> Iterator[None]:
    """Raise the recursion limit to ``limit`` (default ANALYSIS_RECURSION_LIMIT) for a block.

    The limit is never lowered.

    The analysis recurses in pure Python (``ast.unparse``, the condition reader), whose frames
    live on the heap in CPython 3.11+, so the extra depth costs memory, not the C stack.
    """
    limit = ANALYSIS_RECURSION_LIMIT if limit is None else limit
    previous = sys.getrecursionlimit()
    if previous < limit:
        sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        if previous < limit:
            sys.setrecursionlimit(previous)


def _reachability(graph: FlowDefinitionGraph, flow_class: ast.ClassDef) -> list[Diagnostic]:
    """Warn about Steps no path reaches from the start Step, an RPC or the timeout handler."""
    successors: dict[str, set[str]] = {}
    for edge in graph.edges:
        if edge.kind in _CONTROL_EDGES:
            owner = graph.node(edge.source).parent_id or edge.source
            successors.setdefault(owner, set()).add(edge.target)
    roots = [n.id for n in graph.nodes if n.start or n.kind in ("rpc", "timeout_handler")]
    seen = set(roots)
    queue = deque(roots)
    while queue:
        for target in sorted(successors.get(queue.popleft(), ())):
            if target not in seen:
                seen.add(target)
                queue.append(target)
    return [
        _warning(graph, "unreachable_step",
                 f"Step {step.name} is not reachable from the start Step, an RPC or the "
                 f"timeout handler of {flow_class.name}", step.span)
        for step in graph.steps
        if step.id not in seen
    ]


def _resource_checks(
    graph: FlowDefinitionGraph, declared: list[Resource], flow_class: ast.ClassDef
) -> list[Diagnostic]:
    """Warn about declared resources nobody uses and used ones the schema does not list."""
    declared_ids = {r.node_id for r in declared}
    used = {e.source for e in graph.edges} | {e.target for e in graph.edges}
    found = []
    for node in graph.nodes:
        if node.kind not in ("channel", "attribute"):
            continue
        if node.id not in used:
            found.append(_warning(graph, "unused_resource",
                                  f"{node.kind} {node.name} is declared but never used",
                                  node.span))
        elif node.id not in declared_ids:
            found.append(_warning(graph, "undeclared_resource",
                                  f"{node.kind} {node.name} is used but not listed in "
                                  f"{flow_class.name}.get_persistence_schema", node.span))
    return found


def _warning(
    graph: FlowDefinitionGraph, code: str, message: str, span: Span | None
) -> Diagnostic:
    line = None if span is None else span.line
    col = None if span is None else span.col
    return Diagnostic("warning", code, message, graph.source_path, line, col)
