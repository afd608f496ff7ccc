"""Fold the edges of busy nodes into card rows, so big definition graphs stay readable and fast.

A Channel every Step publishes to, or a recovery Step every Step fails over to, would draw one
long edge per Step across the whole picture: unreadable, and quadratic for Graphviz's layout
(each edge crossing k ranks becomes k virtual nodes). Above :data:`HUB_LIMIT` edges such a
node's resource or Execute-failure edges are not drawn; each card lists them as text instead
(``publish → done``, ``Execute failure → Recover``) and the busy node says how many it folded.
The model keeps every edge; only the picture folds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dexviz.analysis.definition.model import Edge, FlowDefinitionGraph

__all__ = ["HUB_LIMIT", "FoldedEdges", "fold_hub_edges"]

HUB_LIMIT = 16
"""A node with more resource (or Execute-failure) edges than this has them folded."""

_RESOURCE_KINDS = ("resource_publish", "resource_read", "resource_write", "wait_condition")
_RESOURCES = ("channel", "attribute")


@dataclass(frozen=True)
class FoldedEdges:
    """Which edges are folded, the text each owner shows for them, and counts per hub."""

    ids: frozenset[str]
    lines: dict[str, tuple[str, ...]]
    hubs: dict[str, int]

    def lines_for(self, owner_id: str) -> tuple[str, ...]:
        """The folded connections of a card's owner, as short text lines."""
        return self.lines.get(owner_id, ())

    def count_for(self, node_id: str) -> int:
        """How many edges of ``node_id`` were folded (0 if it is no hub)."""
        return self.hubs.get(node_id, 0)


def fold_hub_edges(graph: FlowDefinitionGraph, edges: Sequence[Edge]) -> FoldedEdges:
    """Fold the resource and failure edges of nodes that have more than HUB_LIMIT of them."""
    by_hub: dict[str, list[Edge]] = {}
    for edge in edges:
        hub = _hub_of(graph, edge)
        if hub is not None:
            by_hub.setdefault(hub, []).append(edge)
    folded = [e for group in by_hub.values() if len(group) > HUB_LIMIT for e in group]
    lines: dict[str, list[str]] = {}
    for edge in folded:
        owner, text = _owner_line(graph, edge)
        if text is not None and text not in lines.setdefault(owner, []):
            lines[owner].append(text)
    return FoldedEdges(
        frozenset(e.id for e in folded),
        {owner: tuple(texts) for owner, texts in lines.items()},
        {hub: len(group) for hub, group in by_hub.items() if len(group) > HUB_LIMIT},
    )


def _hub_of(graph: FlowDefinitionGraph, edge: Edge) -> str | None:
    if edge.kind == "failure_transition":
        return edge.target
    if edge.kind in _RESOURCE_KINDS:
        return edge.source if graph.node(edge.source).kind in _RESOURCES else edge.target
    return None


def _owner_line(graph: FlowDefinitionGraph, edge: Edge) -> tuple[str, str | None]:
    source, target = graph.node(edge.source), graph.node(edge.target)
    if edge.kind == "wait_condition":
        # The wait row already shows the condition; only its owner needs no extra line.
        return target.parent_id or target.id, None
    if edge.kind == "resource_read":
        return target.id, f"{edge.label} ← {source.name}"
    return source.id, f"{edge.label} → {target.name}"
