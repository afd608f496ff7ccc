"""Accumulate nodes and edges while a Flow is read, then freeze them in a deterministic order.

Edges are sorted the way the seed page lists its connections (and Dex numbers its edges after
sorting by node id): decisions first, then resources (attributes, channels), RPCs, Steps,
timeout handlers, unknown targets and waits; within a kind by owner name and source position,
then by target in the same order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from dexviz.analysis.definition.model import (
    Diagnostic,
    Edge,
    EdgeKind,
    FlowDefinitionGraph,
    Node,
    Span,
)

__all__ = ["GraphBuilder", "node_sort_key"]

# Dex ids sort decision: < resource:attribute: < resource:channel: < rpc: < step: <
# timeout_handler: < unknown: < wait:, which is the order of the seed's connection list.
_KIND_RANK = {
    "decision": 0,
    "attribute": 1,
    "channel": 2,
    "rpc": 3,
    "step": 4,
    "timeout_handler": 5,
    "unknown": 6,
    "wait": 7,
}


@dataclass(frozen=True)
class _EdgeDraft:
    kind: EdgeKind
    source: str
    target: str
    label: str | None
    condition: str | None
    multiplicity: str | None


class GraphBuilder:
    """A mutable collector for one Flow's nodes and edges."""

    def __init__(self, flow_name: str, path: str) -> None:
        self.flow_name = flow_name
        self.path = path
        self._nodes: dict[str, Node] = {}
        self._edges: dict[_EdgeDraft, None] = {}

    def has(self, node_id: str) -> bool:
        """True if a node with ``node_id`` was added."""
        return node_id in self._nodes

    def add_node(self, node: Node) -> Node:
        """Add ``node``; an equal node is kept once, a clashing id gets a ``#2`` suffix."""
        existing = self._nodes.get(node.id)
        if existing is None or existing == node:
            self._nodes.setdefault(node.id, node)
            return node
        suffix = 2
        while f"{node.id}#{suffix}" in self._nodes:
            suffix += 1
        unique = replace(node, id=f"{node.id}#{suffix}")
        self._nodes[unique.id] = unique
        return unique

    def add_edge(
        self, kind: EdgeKind, source: str, target: str, label: str | None = None, *,
        condition: str | None = None, multiplicity: str | None = None,
    ) -> None:
        """Add an edge between two added nodes (identical edges are kept once)."""
        for end in (source, target):
            if end not in self._nodes:
                raise KeyError(f"edge {kind} {source} -> {target}: no node {end!r}")
        self._edges[_EdgeDraft(kind, source, target, label, condition, multiplicity)] = None

    def build(
        self, start_step_id: str | None, diagnostics: Sequence[Diagnostic],
        flow_span: Span | None,
    ) -> FlowDefinitionGraph:
        """Freeze the graph: nodes in reading order (resources last, by name), edges sorted."""
        nodes = self._ordered_nodes()
        drafts = sorted(self._edges, key=self._edge_key)
        edges = tuple(
            Edge(f"edge:{n:04d}", d.kind, d.source, d.target, d.label or None, d.condition,
                 d.multiplicity)
            for n, d in enumerate(drafts, start=1)
        )
        ordered = sorted(
            diagnostics, key=lambda d: (d.line or 0, d.col or 0, d.code, d.message)
        )
        return FlowDefinitionGraph(
            self.flow_name, self.path, start_step_id, nodes, edges, tuple(ordered), flow_span
        )

    def _ordered_nodes(self) -> tuple[Node, ...]:
        resources = ("channel", "attribute")
        handlers = [n for n in self._nodes.values() if n.kind not in resources]
        stores = sorted(
            (n for n in self._nodes.values() if n.kind in resources),
            key=lambda n: (resources.index(n.kind), n.name.casefold(), n.name),
        )
        return (*handlers, *stores)

    def _edge_key(self, draft: _EdgeDraft) -> tuple[object, ...]:
        return (
            node_sort_key(self._nodes[draft.source], self._nodes),
            node_sort_key(self._nodes[draft.target], self._nodes),
            draft.kind,
            draft.label or "",
            draft.condition or "",
        )


def node_sort_key(node: Node, nodes: dict[str, Node]) -> tuple[object, ...]:
    """Order nodes by kind (Dex id order), then owner or own name, then source position."""
    owner = nodes.get(node.parent_id) if node.parent_id else None
    name = owner.name if owner is not None else node.name
    span = node.span or Span(0, 0)
    return (_KIND_RANK.get(node.kind, 99), name.casefold(), name, span.line, span.col, node.id)
