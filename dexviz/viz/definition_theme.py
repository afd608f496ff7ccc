"""Colours, shapes and card contents of the Flow Definition Graph picture.

The palette follows Dex's own definition renderer: slate transitions, rose Execute-failure
routes, amber WaitFor rows and wait-condition edges, green decision rows and resource edges,
purple RPCs, dashed red unknown targets.
"""

from __future__ import annotations

from collections.abc import Sequence

from dexviz.analysis.definition.model import Edge, FlowDefinitionGraph, Node
from dexviz.viz.dot import AttrValue, LegendItem, cell, font, row, wrap_lines

__all__ = [
    "CANCEL",
    "CARD_BORDER",
    "EDGE_STYLES",
    "FAILURE",
    "FONT",
    "HIGHLIGHT",
    "MUTED",
    "NODE_STYLES",
    "START",
    "STUB_STYLE",
    "TEXT",
    "card_rows",
    "legend_items",
]

FONT = "Helvetica,Arial,sans-serif"
"""The font list handed to Graphviz (fontconfig picks the first installed one)."""

TEXT = "#1e293b"
MUTED = "#64748b"
CARD_BORDER = "#94a3b8"
START = "#4f8127"
HIGHLIGHT = "#c16f24"
CANCEL = "#b63b3b"
FAILURE = "#c43b62"
_HEADER_FILL = "#f1f5f9"
_WAIT_FILL, _WAIT_TEXT = "#fff8e7", "#8a5a12"
_DECISION_FILL, _DECISION_TEXT = "#eef8ed", "#2f5d2a"
_CLOSE_TEXT = {
    "deadEnd": "#475569",
    "gracefulComplete": "#265c86",
    "forceComplete": "#265c86",
    "forceCompleteIfChannelsEmpty": "#265c86",
    "forceFail": CANCEL,
    "unknown": CANCEL,
}

EDGE_STYLES: dict[str, dict[str, AttrValue]] = {
    "transition": {"color": "#334155", "fontcolor": "#334155", "penwidth": 1.4},
    "failure_transition": {"color": FAILURE, "fontcolor": FAILURE, "penwidth": 2.2},
    "wait_condition": {"color": "#b7791f", "fontcolor": "#8a5a12", "style": "dashed"},
    "resource_publish": {"color": "#2f8f6f", "fontcolor": "#22604b", "style": "dotted",
                         "penwidth": 1.6},
    "resource_read": {"color": "#3b6fb6", "fontcolor": "#2c5490", "style": "dashed"},
    "resource_write": {"color": "#7c5ab0", "fontcolor": "#5b3f8a", "style": "dashed"},
}
"""DOT attributes per edge kind."""

NODE_STYLES: dict[str, dict[str, AttrValue]] = {
    "channel": {"shape": "cylinder", "style": "filled", "fillcolor": "#e6f2ee",
                "color": "#4d7b69", "caption": "CHANNEL", "margin": "0.15,0.06"},
    "attribute": {"shape": "note", "style": "filled", "fillcolor": "#f3effa",
                  "color": "#7c5ab0", "caption": "ATTRIBUTE", "margin": "0.15,0.06"},
    "rpc": {"shape": "hexagon", "style": "filled", "fillcolor": "#f5f1fb",
            "color": "#856bb7", "caption": "RPC", "margin": "0.1,0.04"},
    "unknown": {"shape": "box", "style": "dashed,rounded,filled", "fillcolor": "#fff5f4",
                "color": "#c95252", "caption": "UNKNOWN TARGET (dynamic)", "margin": "0.12,0.06"},
}
"""DOT attributes of the non-card node kinds (``caption`` is the small title line)."""

_ROW = {"ALIGN": "LEFT", "BALIGN": "LEFT"}
_NODE_CAPTIONS = (
    ("channel", "Channel"), ("attribute", "Attribute"), ("rpc", "RPC"),
    ("unknown", "Unknown target"),
)
_EDGE_CAPTIONS = (
    ("transition", "go_to / fan-out"), ("failure_transition", "Execute failure"),
    ("wait_condition", "wait condition"), ("resource_publish", "publish (Step → Channel)"),
    ("resource_read", "read (Channel → Step)"), ("resource_write", "write"),
)
_GLYPHS = {"resource_publish": "┈┈┈▶"}
STUB_STYLE: dict[str, AttrValue] = {
    "shape": "cylinder", "style": "filled", "fillcolor": "#e6f2ee", "color": "#4d7b69",
    "fontsize": 9, "fontcolor": "#22604b", "margin": "0.06,0.02", "height": 0.3,
}
"""A publish (or write) target drawn beside its Step; shape and colours come from the kind."""


def card_rows(
    graph: FlowDefinitionGraph, owner: Node, *, compact: bool,
    folded: Sequence[str] = (), folded_in: int = 0,
) -> tuple[list[str], dict[str, str]]:
    """The table rows of a Step (or timeout handler) card and the port of each child node.

    ``folded`` are text lines for connections not drawn as edges (see definition_fold);
    ``folded_in`` counts folded Execute-failure routes that end at this card.
    """
    rows, ports = _card_body(graph, owner, compact=compact)
    lines = [font(line, size=9, color=MUTED) for line in folded]
    if folded_in:
        lines.append(font(f"Execute-failure target of {folded_in} Steps", size=9,
                          color=FAILURE))
    if lines:
        rows.append(row(cell("<BR/>".join(lines), _ROW)))
    return rows, ports


def _card_body(
    graph: FlowDefinitionGraph, owner: Node, *, compact: bool
) -> tuple[list[str], dict[str, str]]:
    rows: list[str] = []
    if owner.start:
        rows.append(_badge("▶ START", START))
    if owner.kind == "timeout_handler":
        rows.append(_badge("TIMEOUT HANDLER", HIGHLIGHT))
    rows.append(row(cell(font(owner.name, bold=True, size=12),
                         {**_ROW, "BGCOLOR": _HEADER_FILL, "WIDTH": 200})))
    ports: dict[str, str] = {}
    if compact:
        return rows, {child.id: "" for child in graph.children(owner.id)}
    if owner.description:
        text = "<BR/>".join(font(line, size=9, color=MUTED, italic=True)
                            for line in wrap_lines(owner.description, 44, 2))
        rows.append(row(cell(text, _ROW)))
    children = graph.children(owner.id)
    for index, child in enumerate(c for c in children if c.wait is not None):
        ports[child.id] = f"w{index}"
        rows.append(row(cell(_wait_markup(child), {**_ROW, "BGCOLOR": _WAIT_FILL,
                                                   "PORT": f"w{index}"})))
    for index, child in enumerate(c for c in children if c.decision is not None):
        ports[child.id] = f"d{index}"
        rows.append(row(cell(_decision_markup(graph, child),
                             {**_ROW, "BGCOLOR": _DECISION_FILL, "PORT": f"d{index}"})))
    return rows, ports


def _badge(text: str, color: str) -> str:
    return row(cell(font(text, bold=True, size=8, color="#ffffff"),
                    {"ALIGN": "LEFT", "BGCOLOR": color}))


def _wait_markup(node: Node) -> str:
    assert node.wait is not None
    lines = [font("WaitFor ", size=9, color=_WAIT_TEXT)
             + font(node.wait.type, bold=True, size=10, color=_WAIT_TEXT)]
    lines += _guard_lines(node.condition)
    # Conditions of one ConditionCombination must all hold: one bullet per group, joined by +.
    groups: dict[object, list[str]] = {}
    for index, condition in enumerate(node.wait.conditions):
        key = index if condition.group is None else ("group", condition.group)
        groups.setdefault(key, []).append(condition.label)
    for labels in groups.values():
        lines.append(font("• " + " + ".join(labels), size=10, color=TEXT))
    return "<BR/>".join(lines)


def _guard_lines(condition: str | None) -> list[str]:
    if not condition:
        return []
    return [font(line, size=9, color=MUTED, italic=True)
            for line in wrap_lines(f"if {condition}", 46, 3)]


def _decision_markup(graph: FlowDefinitionGraph, node: Node) -> str:
    assert node.decision is not None
    color = _CLOSE_TEXT.get(node.decision.type, _DECISION_TEXT)
    head = font(node.name, bold=True, size=10, color=color)
    targets = [_target_text(graph, e) for e in graph.edges_from(node.id)]
    if targets:
        head += font(" → " + ", ".join(targets), size=10, color=TEXT)
    lines = [head, *_guard_lines(node.condition)]
    for channel_id in node.decision.checked_channels:
        lines.append(font(f"if empty: {graph.node(channel_id).name}", size=9, color=MUTED))
    for cancel in node.decision.cancellations:
        scope = " (siblings)" if cancel.scope == "siblings" else ""
        name = cancel.step_id.partition(":")[2]
        lines.append(font(f"cancels {name}{scope}", size=9, color=CANCEL))
    return "<BR/>".join(lines)


def _target_text(graph: FlowDefinitionGraph, edge: Edge) -> str:
    name = graph.node(edge.target).name
    return f"{name} {edge.multiplicity}" if edge.multiplicity else name


def legend_items(
    graph: FlowDefinitionGraph, edges: Sequence[Edge], *, compact: bool, hide_resources: bool,
    stubs: bool = False,
) -> list[LegendItem]:
    """The legend rows for what this picture actually shows."""
    kinds = {node.kind for node in graph.nodes}
    items = [LegendItem("Step", CARD_BORDER, fill="#ffffff")]
    if graph.start_step_id:
        items.append(LegendItem("Start Step", START, fill=START))
    if not compact and any(n.wait for n in graph.nodes):
        items.append(LegendItem("WaitFor (conditions)", "#d7ad59", fill=_WAIT_FILL))
    if not compact and any(n.decision for n in graph.nodes):
        items.append(LegendItem("Execute decision", "#c3d9c1", fill=_DECISION_FILL))
    for kind, caption in _NODE_CAPTIONS:
        if kind in kinds and not (hide_resources and kind in ("channel", "attribute")):
            style = NODE_STYLES[kind]
            items.append(LegendItem(caption, str(style["color"]), fill=str(style["fillcolor"])))
    if stubs:
        items.append(LegendItem("published to / written (beside the Step)",
                                str(STUB_STYLE["color"]), fill=str(STUB_STYLE["fillcolor"])))
    edge_kinds = {edge.kind for edge in edges}
    for kind, caption in _EDGE_CAPTIONS:
        if kind in edge_kinds:
            style = EDGE_STYLES[kind]
            items.append(LegendItem(caption, str(style["color"]), kind="edge",
                                    dashed=style.get("style") == "dashed",
                                    glyph=_GLYPHS.get(kind)))
    return items
