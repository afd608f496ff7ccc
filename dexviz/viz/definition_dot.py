"""DOT text for a Flow Definition Graph: Step cards, resource nodes, styled edges and a legend.

Each Step is one card (an HTML-like table): a START bar on the start Step, the Step name, its
docstring's first line, one amber row per WaitFor return and one green row per Execute
decision. Transitions leave from the decision row and wait conditions arrive at the wait row
(table ports), so the SVG has exactly one node per Step and per Channel. Node and edge ids are
the model's (``step:EditContract``, ``channel:contractEditToken``, ``edge:0001``) and classes
name the kind (``step start``), so tests and CSS can find them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dexviz.analysis.definition.model import Edge, FlowDefinitionGraph, Node
from dexviz.viz.definition_fold import FoldedEdges, fold_hub_edges
from dexviz.viz.definition_theme import (
    CANCEL,
    CARD_BORDER,
    EDGE_STYLES,
    FONT,
    HIGHLIGHT,
    MUTED,
    NODE_STYLES,
    START,
    STUB_STYLE,
    TEXT,
    card_rows,
    legend_items,
)
from dexviz.viz.dot import AttrValue, DotGraph, cell, font, legend_label, row, table

__all__ = ["RANKDIRS", "DefinitionDotOptions", "definition_dot"]

RANKDIRS: tuple[str, ...] = ("TB", "LR", "BT", "RL")
"""Accepted layout directions (top-to-bottom, left-to-right, ...)."""

_RESOURCES = ("channel", "attribute")
_CARDS = ("step", "timeout_handler")


@dataclass(frozen=True)
class DefinitionDotOptions:
    """How to draw a definition graph.

    Attributes:
        rankdir: ``TB`` (default) or ``LR`` (also ``BT``, ``RL``).
        hide_resources: Leave out Channel and Attribute nodes and their edges.
        highlight: Step names to outline (e.g. the Steps a run is in).
        collapse: Draw compact Step boxes (name only) and merge parallel edges.
        legend: Draw the legend.
    """

    rankdir: str = "TB"
    hide_resources: bool = False
    highlight: frozenset[str] = frozenset()
    collapse: bool = False
    legend: bool = True

    def __post_init__(self) -> None:
        if self.rankdir not in RANKDIRS:
            raise ValueError(f"rankdir must be one of {list(RANKDIRS)}, got {self.rankdir!r}")

    def check(self, graph: FlowDefinitionGraph) -> None:
        """Raise ValueError if ``highlight`` names a Step the graph does not have."""
        names = {step.name for step in graph.steps}
        unknown = sorted(self.highlight - names)
        if unknown:
            raise ValueError(
                f"cannot highlight {unknown}: {graph.flow_name} has no such Step "
                f"(Steps: {sorted(names)})"
            )


def definition_dot(
    graph: FlowDefinitionGraph, options: DefinitionDotOptions | None = None
) -> str:
    """The graph as DOT text; the same graph and options always give the same text."""
    options = options or DefinitionDotOptions()
    options.check(graph)
    edges = [e for e in graph.edges if _drawn(e, graph, options)]
    folded = fold_hub_edges(graph, edges)
    dot = _new_graph(graph, options, folded)
    ports: dict[str, tuple[str, str | None]] = {}
    for node in graph.nodes:
        if node.kind in _CARDS:
            ports.update(_add_card(dot, graph, node, options, folded))
        elif node.kind in ("rpc", "unknown") or (
            node.kind in _RESOURCES and not options.hide_resources
        ):
            dot.node(node.id, _simple_node_attrs(graph, node, folded))
    edges = [e for e in edges if e.id not in folded.ids]
    stubs: set[str] = set()
    for attrs, tail, head in _styled_edges(graph, edges, ports, options):
        if attrs.get("constraint") is False:
            head = _publish_stub(dot, graph, head[0], tail[0], stubs)
            del attrs["constraint"]
            attrs["label"] = None  # the stub names the Channel
        dot.edge(tail[0], head[0], attrs, source_port=tail[1], target_port=head[1])
    if options.legend:
        _add_legend(dot, graph, edges, options, stubs=bool(stubs))
    return dot.source()


def _publish_stub(
    dot: DotGraph, graph: FlowDefinitionGraph, resource_id: str, owner_id: str, stubs: set[str]
) -> _Endpoint:
    """A small copy of a Channel (or Attribute) beside the Step that publishes (writes) it.

    The resource node sits above the Steps that wait on it or read it, so an edge from a later
    Step back up to it would loop round the picture; the stub keeps the edge short.
    """
    stub = f"stub:{resource_id}@{owner_id}"
    if stub not in stubs:
        stubs.add(stub)
        node = graph.node(resource_id)
        style = NODE_STYLES[node.kind]
        look = {**STUB_STYLE, "shape": style["shape"], "fillcolor": style["fillcolor"],
                "color": style["color"]}
        what = "Channel, published to" if node.kind == "channel" else "Attribute, written"
        dot.node(stub, {**look, "id": stub, "class": f"{node.kind}-stub", "label": node.name,
                        "tooltip": f"{node.name}: the {what} here"})
    return (stub, None)


def _new_graph(
    graph: FlowDefinitionGraph, options: DefinitionDotOptions, folded: FoldedEdges
) -> DotGraph:
    steps = len(graph.steps)
    channels = len(graph.nodes_of("channel"))
    subtitle = f"Flow definition · {steps} Step{'s' * (steps != 1)}"
    if channels:
        subtitle += f" · {channels} Channel{'s' * (channels != 1)}"
    title = [font(graph.flow_name, bold=True, size=16, color=TEXT),
             font(subtitle, size=10, color=MUTED)]
    if folded.ids:
        title.append(font(f"{len(folded.ids)} edges of busy nodes are listed in the cards",
                          size=10, color=MUTED))
    errors = sum(d.severity == "error" for d in graph.diagnostics)
    if errors:
        title.append(font(f"{errors} error{'s' * (errors != 1)}: see .model.diagnostics",
                          size=10, color=CANCEL))
    return DotGraph(
        graph.flow_name,
        graph_attrs={
            "id": f"flow:{graph.flow_name}", "rankdir": options.rankdir, "fontname": FONT,
            "label": table([row(cell(t)) for t in title], {"BORDER": 0, "CELLPADDING": 1}),
            "labelloc": "t", "bgcolor": "#ffffff", "pad": 0.3, "nodesep": 0.5,
            "ranksep": 0.6, "newrank": True,
        },
        node_defaults={"fontname": FONT, "fontsize": 11, "fontcolor": TEXT},
        edge_defaults={"fontname": FONT, "fontsize": 9, "arrowsize": 0.8},
    )


def _add_card(
    dot: DotGraph, graph: FlowDefinitionGraph, owner: Node, options: DefinitionDotOptions,
    folded: FoldedEdges,
) -> dict[str, tuple[str, str | None]]:
    rows, ports = card_rows(graph, owner, compact=options.collapse,
                           folded=folded.lines_for(owner.id),
                           folded_in=folded.count_for(owner.id))
    highlighted = owner.name in options.highlight and owner.kind == "step"
    border = HIGHLIGHT if highlighted else START if owner.start else CARD_BORDER
    label = table(rows, {
        "BORDER": 3 if highlighted else 2 if owner.start else 1, "CELLBORDER": 0,
        "CELLSPACING": 0, "CELLPADDING": 5, "STYLE": "rounded", "COLOR": border,
        "BGCOLOR": "#ffffff",
    })
    classes = [owner.kind.replace("_", "-")]
    classes += ["start"] * owner.start + ["highlight"] * highlighted
    dot.node(owner.id, {"id": owner.id, "class": " ".join(classes), "shape": "plain",
                        "label": label, "tooltip": owner.description or owner.name})
    return {
        child: (owner.id, None if options.collapse else port) for child, port in ports.items()
    }


def _simple_node_attrs(
    graph: FlowDefinitionGraph, node: Node, folded: FoldedEdges
) -> dict[str, AttrValue]:
    style = dict(NODE_STYLES[node.kind])
    caption = style.pop("caption")
    assert isinstance(caption, str)
    name = font(node.name, bold=True, size=11)
    lines = [font(caption, size=8, color=str(style["color"])), name]
    if node.resource is not None and node.resource.value_type:
        kind = f"{node.resource.value_type}{' map' if node.resource.is_map else ''}"
        lines.append(font(kind, size=8, color=MUTED))
    if folded.count_for(node.id):
        lines.append(font(f"{folded.count_for(node.id)} uses listed in the cards", size=8,
                          color=MUTED))
    for child in graph.children(node.id):
        # An RPC's cancellations have no card row to live in; list them under its name.
        cancels = [] if child.decision is None else child.decision.cancellations
        if cancels:
            names = ", ".join(c.step_id.partition(":")[2] for c in cancels)
            lines.append(font(f"cancels {names}", size=8, color=CANCEL))
    label = table([row(cell(line)) for line in lines], {"BORDER": 0, "CELLPADDING": 0})
    return {**style, "id": node.id, "class": node.kind, "label": label,
            "tooltip": node.description or node.name}


def _drawn(edge: Edge, graph: FlowDefinitionGraph, options: DefinitionDotOptions) -> bool:
    if not options.hide_resources:
        return True
    ends = (graph.node(edge.source).kind, graph.node(edge.target).kind)
    return not any(kind in _RESOURCES for kind in ends)


_Endpoint = tuple[str, str | None]


def _styled_edges(
    graph: FlowDefinitionGraph, edges: list[Edge], ports: Mapping[str, _Endpoint],
    options: DefinitionDotOptions,
) -> list[tuple[dict[str, AttrValue], _Endpoint, _Endpoint]]:
    fed = {e.source for e in edges if e.kind in ("wait_condition", "resource_read")}
    drawn: dict[tuple[str, _Endpoint, _Endpoint], tuple[Edge, list[str]]] = {}
    for edge in edges:
        tail = _endpoint(graph, edge.source, ports)
        head = _endpoint(graph, edge.target, ports)
        text = _edge_text(graph, edge, options)
        key = (edge.kind, tail, head)
        if key in drawn and options.collapse:
            if text not in drawn[key][1]:
                drawn[key][1].append(text)
            continue
        drawn.setdefault(key if options.collapse else (edge.id, tail, head), (edge, [text]))
    result = []
    for (_, tail, head), (edge, texts) in drawn.items():
        attrs = _edge_attrs(edge, "\n".join(t for t in texts if t))
        if edge.kind in ("resource_publish", "resource_write") and edge.target in fed:
            attrs["constraint"] = False  # keep the Channel above the Steps that wait on it
        result.append((attrs, tail, head))
    return result


def _endpoint(
    graph: FlowDefinitionGraph, node_id: str, ports: Mapping[str, _Endpoint]
) -> _Endpoint:
    if node_id in ports:
        return ports[node_id]
    node = graph.node(node_id)
    if node.kind in ("wait", "decision") and node.parent_id is not None:
        return (node.parent_id, None)
    return (node_id, None)


def _edge_text(graph: FlowDefinitionGraph, edge: Edge, options: DefinitionDotOptions) -> str:
    # A publish is labelled with its Channel (a stub shows the name itself, see below).
    label = graph.node(edge.target).name if edge.kind == "resource_publish" else edge.label or ""
    if edge.multiplicity:
        label = f"{label} {edge.multiplicity}".strip()
    if edge.kind == "wait_condition" and not options.collapse:
        prefix = graph.node(edge.source).name
        label = label[len(prefix):].lstrip(".") if label.startswith(prefix) else label
    if options.collapse and edge.condition:
        label += f"\nif {edge.condition}"
    return label


def _edge_attrs(edge: Edge, label: str) -> dict[str, AttrValue]:
    style: dict[str, AttrValue] = dict(EDGE_STYLES[edge.kind])
    classes = edge.kind.replace("_", "-")
    if edge.label == "fan-out":
        classes += " fan-out"
    return {**style, "id": edge.id, "class": classes, "label": label or None}


def _add_legend(
    dot: DotGraph, graph: FlowDefinitionGraph, edges: list[Edge], options: DefinitionDotOptions,
    *, stubs: bool = False,
) -> None:
    items = legend_items(graph, edges, compact=options.collapse,
                         hide_resources=options.hide_resources, stubs=stubs)
    # With newrank the unconnected legend sits in the first rank, beside the title.
    dot.node("legend", {"id": "legend", "class": "legend", "shape": "plain",
                        "label": legend_label("Legend", items)})
