"""DOT text of a lineage graph: execution cards, source and Flow-end nodes, edges and a legend.

Cards follow Dex Web's step cards (status-coloured border, Step type and status in the header,
the execution id, a WaitFor row and an Execute row); a collapsed group shows a status histogram
bar instead. Node ids are the model's (``EnterContractEdit-3``, ``group:EnterContractEdit-1``,
``__start__``, ``__end__``) and become the SVG element ids, with classes naming kind and status.
"""

from __future__ import annotations

from collections.abc import Sequence

from dexviz.analysis.lineage import STATUS_ORDER, LineageEdge, LineageGraph, LineageNode
from dexviz.viz._lineage_trim import MAX_DRAWN_NODES, trim_lineage
from dexviz.viz.dot import AttrValue, DotGraph, LegendItem, cell, font, row, table
from dexviz.viz.palette import CLOSE_COLORS, EDGE_COLORS, SOURCE_COLORS, STATUS_COLORS

FONT = "Helvetica,Arial,sans-serif"
TEXT = "#1e293b"
MUTED = "#64748b"
_WAIT_FILL, _WAIT_TEXT = "#fff8e7", "#8a5a12"
_EXECUTE_FILL, _EXECUTE_TEXT = "#eef8ed", "#2f5d2a"
_BAR_WIDTH = 180
_LEFT = {"ALIGN": "LEFT", "BALIGN": "LEFT"}

_EDGE_STYLES: dict[str, dict[str, AttrValue]] = {
    "lineage": {"color": EDGE_COLORS["lineage"], "penwidth": 1.5},
    "recovery": {"color": EDGE_COLORS["recovery"], "fontcolor": EDGE_COLORS["recovery"],
                 "penwidth": 2.2},
    "message": {"color": EDGE_COLORS["message"] + "b0", "fontcolor": EDGE_COLORS["message"],
                "style": "dashed", "constraint": False, "penwidth": 1.0, "arrowsize": 0.6},
    "close": {"color": EDGE_COLORS["close"], "fontcolor": EDGE_COLORS["close"], "penwidth": 1.8},
}
_EDGE_CAPTIONS = (("lineage", "created by (lineage)"), ("recovery", "Execute failure route"),
                  ("message", "message (publisher to consumer)"), ("close", "closed the Flow"))


def _colors(node: LineageNode) -> tuple[str, str]:
    if node.kind == "source":
        return SOURCE_COLORS
    if node.kind == "end":
        return CLOSE_COLORS.get(node.status, ("#475569", "#f1f5f9"))
    return STATUS_COLORS.get(node.status, ("#94a3b8", "#ffffff"))


def _header(node: LineageNode) -> str:
    border, _ = _colors(node)
    if node.kind == "source":
        return row(cell(font(node.label, bold=True, size=11, color=border),
                        {**_LEFT, "COLSPAN": 2, "WIDTH": 120}))
    return row(
        cell(font(node.label, bold=True, size=11, color=TEXT), {**_LEFT, "WIDTH": 150}),
        cell(font(status_text(node), bold=True, size=9, color=border), {"ALIGN": "RIGHT"}),
    )


def status_text(node: LineageNode) -> str:
    """A node's status as its header says it: a group of mixed outcomes gives its counts.

    ``7 Completed · 1 Failed`` rather than the one status the group's border colour shows.
    """
    if node.kind == "group" and len(node.statuses) > 1:
        ordered = sorted(node.statuses, key=lambda pair: -pair[1])  # stable: ties keep order
        return " · ".join(f"{n} {status}" for status, n in ordered)
    return node.status


def _line(text: str, color: str = MUTED, fill: str | None = None, size: float = 9) -> str:
    attrs: dict[str, AttrValue] = {**_LEFT, "COLSPAN": 2, "BGCOLOR": fill}
    return row(cell(font(text, size=size, color=color), attrs))


def _histogram(node: LineageNode) -> str:
    total = sum(count for _, count in node.statuses) or 1
    cells = [
        cell("", {"BGCOLOR": STATUS_COLORS[status][0], "WIDTH": max(4, _BAR_WIDTH * n // total),
                  "HEIGHT": 8, "FIXEDSIZE": "TRUE"})
        for status, n in node.statuses
    ]
    bar = table([row(*cells)], {"BORDER": 0, "CELLBORDER": 0, "CELLSPACING": 1,
                                "CELLPADDING": 0})
    return row(cell(bar.markup, {"COLSPAN": 2, "ALIGN": "LEFT"}))


def _body(node: LineageNode) -> list[str]:
    if node.kind == "group":
        return [_line(node.detail[0]), _histogram(node)]
    if node.kind != "step":
        return [_line(line, TEXT) for line in node.detail]
    execution_id, outcome, *rest = node.detail
    rows = [_line(execution_id)]
    waited = next((r for r in rest if r.startswith("waited ")), None)
    if node.has_wait_for:
        wait_text = f"WaitFor · {waited[len('waited '):]}" if waited else "WaitFor"
        if node.status == "Waiting":
            wait_text = f"WaitFor · {outcome}"
        rows.append(_line(wait_text, _WAIT_TEXT, _WAIT_FILL))
    if node.status != "Waiting":
        color = STATUS_COLORS[node.status][0] if node.status in ("Failed", "Canceled") else (
            _EXECUTE_TEXT)
        rows.append(_line(f"Execute · {outcome}", color, _EXECUTE_FILL))
    rows += [_line(r, STATUS_COLORS["Failed"][0]) for r in rest if r is not waited]
    return rows


def node_attrs(node: LineageNode) -> dict[str, AttrValue]:
    """The DOT attributes of one node: an HTML-like card with status-coloured border."""
    border, fill = _colors(node)
    label = table([_header(node), *_body(node)], {
        "BORDER": 2 if node.kind in ("group", "end") else 1, "CELLBORDER": 0, "CELLSPACING": 0,
        "CELLPADDING": 3, "STYLE": "rounded", "COLOR": border, "BGCOLOR": fill,
    })
    classes = f"{node.kind} {node.status.lower()}"
    tooltip = ", ".join(node.execution_ids) if node.execution_ids else node.label
    return {"id": f"exec:{node.node_id}", "class": classes, "shape": "plain", "label": label,
            "tooltip": tooltip}


def edge_attrs(edge: LineageEdge, index: int) -> dict[str, AttrValue]:
    """The DOT attributes of one edge, styled by kind."""
    # A message edge does not constrain the layout, and Graphviz then places an ordinary
    # label where it made room for it, often far from the edge; an xlabel is placed after the
    # layout, next to the edge's middle.
    key = "taillabel" if edge.kind == "message" else "label"
    return {**_EDGE_STYLES[edge.kind], "id": f"edge:{index:04d}", "class": edge.kind,
            key: edge.label or None}


def _swatch(item: LegendItem) -> str:
    if item.kind == "edge":
        line = "╌╌▶" if item.dashed else "━━▶"
        return cell(font(line, color=item.color, size=9), {"ALIGN": "RIGHT"})
    return cell("", {"BGCOLOR": item.fill or "#ffffff", "COLOR": item.color, "BORDER": 1,
                     "WIDTH": 16, "HEIGHT": 11, "FIXEDSIZE": "TRUE"})


def legend_rows(graph: LineageGraph) -> list[str]:
    """Two legend rows for the title: every status (Completed included), then edge kinds."""
    nodes = [LegendItem("Source", SOURCE_COLORS[0], fill=SOURCE_COLORS[1])]
    nodes += [LegendItem(str(s), STATUS_COLORS[s][0], fill=STATUS_COLORS[s][1])
              for s in STATUS_ORDER]
    kinds = {e.kind for e in graph.edges}
    edges = [LegendItem(caption, EDGE_COLORS[kind], kind="edge", dashed=kind == "message")
             for kind, caption in _EDGE_CAPTIONS if kind in kinds]
    rows = []
    for items in (nodes, edges):
        cells = [c for item in items
                 for c in (_swatch(item), cell(font(item.label, size=9, color=TEXT),
                                               {"ALIGN": "LEFT"}))]
        inner = table([row(*cells)], {"BORDER": 0, "CELLSPACING": 3, "CELLPADDING": 1})
        rows.append(row(cell(inner.markup, {"ALIGN": "CENTER"})))
    return rows


def _title(graph: LineageGraph, legend: bool, left_out: int = 0) -> AttrValue:
    counts = graph.status_counts()
    total = sum(counts.values())
    summary = " · ".join(f"{counts[s]} {s}" for s in STATUS_ORDER if counts.get(s))
    status = graph.close_status or "RUNNING"
    lines = [font(graph.flow_type or graph.flow_id, bold=True, size=16, color=TEXT),
             font(f"Execution graph · run {graph.run_id} · {status} · {total} executions",
                  size=10, color=MUTED)]
    if summary:
        lines.append(font(summary, size=10, color=MUTED))
    if left_out:
        lines.append(font(f"Collapsed: {left_out:,} of {total:,} executions are not drawn "
                          f"(more than {MAX_DRAWN_NODES:,} nodes)", size=10,
                          color=STATUS_COLORS["Failed"][0]))
    rows = [row(cell(line)) for line in lines]
    return table(rows + (legend_rows(graph) if legend else []),
                 {"BORDER": 0, "CELLPADDING": 1})


def lineage_dot(graph: LineageGraph, *, rankdir: str = "TB", legend: bool = True) -> str:
    """The lineage graph as deterministic DOT text (collapsed above MAX_DRAWN_NODES nodes)."""
    drawn, left_out = trim_lineage(graph)
    dot = DotGraph(
        f"{graph.flow_type or graph.flow_id} execution",
        graph_attrs={"id": f"execution:{graph.run_id}", "rankdir": rankdir, "fontname": FONT,
                     "label": _title(graph, legend, left_out), "labelloc": "t",
                     "bgcolor": "#ffffff",
                     "pad": 0.3,
                     "nodesep": 0.35, "ranksep": 0.55, "newrank": True},
        node_defaults={"fontname": FONT, "fontsize": 10, "fontcolor": TEXT},
        edge_defaults={"fontname": FONT, "fontsize": 8.5, "arrowsize": 0.7},
    )
    for node in drawn.nodes:
        dot.node(node.node_id, node_attrs(node))
    for index, edge in enumerate(drawn.edges, start=1):
        dot.edge(edge.source, edge.target, edge_attrs(edge, index))
    dot.same_rank("min", [n.node_id for n in drawn.nodes if n.kind == "source"])
    return dot.source()


def summary_lines(graph: LineageGraph) -> Sequence[str]:
    """Plain-text lines describing the graph (for ``text/plain`` and CLI summaries)."""
    lines = [repr(graph)]
    for node in graph.nodes:
        if node.kind in ("step", "group"):
            lines.append(f"  {node.label:<36} {status_text(node)}")
    return lines
