"""Collapse a lineage graph too big to lay out: its first nodes, and one node for the rest.

Graphviz needs minutes (and SVG viewers choke) on graphs of thousands of cards, which a long
loop of one Step easily makes even after same-type siblings are grouped. Above
``MAX_DRAWN_NODES`` the picture keeps the sources, the Flow end and the first executions in
creation order, and one ``⋯ N more executions`` card stands for the rest; the edges that cross
the cut go to (or come from) that card, once per endpoint. The title says that it happened.
"""

from __future__ import annotations

from dataclasses import replace

from dexviz.analysis.lineage import LineageEdge, LineageGraph, LineageNode

__all__ = ["MAX_DRAWN_NODES", "MORE_NODE_ID", "trim_lineage"]

MAX_DRAWN_NODES = 2_000
"""Above this many nodes a lineage picture is collapsed (perf-anchors G9: "collapse above ~2 k")."""
MORE_NODE_ID = "__more__"


def trim_lineage(graph: LineageGraph, limit: int = MAX_DRAWN_NODES) -> tuple[LineageGraph, int]:
    """The graph to draw, and how many executions it leaves out (0 when it fits)."""
    if len(graph.nodes) <= limit:
        return graph, 0
    fixed = [n for n in graph.nodes if n.kind in ("source", "end")]
    room = max(1, limit - len(fixed) - 1)
    kept_steps = [n for n in graph.nodes if n.kind not in ("source", "end")][:room]
    kept = {n.node_id for n in (*fixed, *kept_steps)}
    hidden = [n for n in graph.nodes if n.node_id not in kept]
    left_out = sum(max(1, n.count) for n in hidden)
    more = LineageNode(
        MORE_NODE_ID, "more", f"⋯ {left_out:,} more executions", "Not drawn",
        detail=(f"the picture is collapsed above {limit:,} nodes",
                "every execution is in the history and the executions table"),
    )
    nodes = tuple(n for n in graph.nodes if n.node_id in kept) + (more,)
    return replace(graph, nodes=nodes, edges=_edges(graph.edges, kept)), left_out


def _edges(edges: tuple[LineageEdge, ...], kept: set[str]) -> tuple[LineageEdge, ...]:
    drawn: list[LineageEdge] = []
    crossing: set[tuple[str, str, str]] = set()
    for edge in edges:
        source = edge.source if edge.source in kept else MORE_NODE_ID
        target = edge.target if edge.target in kept else MORE_NODE_ID
        if source == target == MORE_NODE_ID:
            continue
        if MORE_NODE_ID in (source, target):
            key = (source, target, edge.kind)
            if key in crossing:
                continue
            crossing.add(key)
            edge = replace(edge, source=source, target=target, label="")
        drawn.append(edge)
    return tuple(drawn)
