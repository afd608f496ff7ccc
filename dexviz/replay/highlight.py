"""Graph highlighting at the cursor: render each graph shape once, then rewrite SVG classes.

Graphviz takes a few hundred milliseconds per layout, far over a step's budget, while the
picture only changes *where the cursor is*. So a graph is rendered once per DOT text and split
at the ``class`` attribute of every ``<g id="exec:…">``, ``<g id="step:…">``,
``<g id="channel:…">``, ``<g id="stub:…">`` (a Step's Channel stub) and ``<g id="edge:…">``
group (the ids the viz renderers write); a step joins the pieces again with extra classes:

- ``dx-selected``: the node of the selected event (its execution, or the Flow start/end);
- ``dx-active`` plus ``dx-phase-<phase>``: an execution active at the cursor;
- ``dx-holder``: an execution holding reserved messages (a token's holder);
- ``dx-future``: not created yet at the cursor (nodes, and edges touching them);
- ``dx-done``: created and no longer active;
- ``dx-unfocused``: with Focus, outside the selected execution's neighbourhood (definition
  graph; see ``focus.definition_focus_classes``).
"""

from __future__ import annotations

import html
import re
from collections import OrderedDict
from collections.abc import Mapping, Set
from dataclasses import dataclass

from dexviz.analysis.lineage import LineageGraph
from dexviz.history import Event, EventKind
from dexviz.replay._index import HistoryIndex

__all__ = [
    "CursorMarks",
    "LineageLayout",
    "MarkedSvg",
    "SvgCache",
    "definition_classes",
    "lineage_classes",
    "selected_node",
]

_GROUP = re.compile(r'<g id="((?:exec|step|channel|stub|edge):[^"]*)" class="([^"]*)"')
_PROLOG = re.compile(r"\A(?:\s*<\?xml[^>]*>|\s*<!DOCTYPE[^>]*>|\s*<!--.*?-->)*\s*", re.S)
_NEVER = 1 << 62


@dataclass(frozen=True)
class MarkedSvg:
    """A rendered SVG cut at the class attributes of its node and edge groups.

    Attributes:
        parts: The text around the class values (one more than ``ids``).
        ids: The group ids (unescaped), in document order.
        classes: Each group's own classes.
    """

    parts: tuple[str, ...]
    ids: tuple[str, ...]
    classes: tuple[str, ...]

    @classmethod
    def parse(cls, svg: str) -> MarkedSvg:
        """Cut ``svg`` (Graphviz output; its XML prolog and comments are dropped)."""
        text = _PROLOG.sub("", svg, count=1)
        parts, ids, classes = [], [], []
        position = 0
        for match in _GROUP.finditer(text):
            parts.append(text[position:match.start(2)])
            ids.append(html.unescape(match.group(1)))
            classes.append(match.group(2))
            position = match.end(2)
        parts.append(text[position:])
        return cls(tuple(parts), tuple(ids), tuple(classes))

    def with_classes(self, extra: Mapping[str, str]) -> str:
        """The SVG text with ``extra[id]`` appended to the classes of each listed group."""
        out = [self.parts[0]]
        for group_id, own, after in zip(self.ids, self.classes, self.parts[1:], strict=True):
            added = extra.get(group_id)
            out.append(f"{own} {added}" if added else own)
            out.append(after)
        return "".join(out)


class SvgCache:
    """Rendered graphs by DOT text, least recently used first out."""

    def __init__(self, size: int = 8) -> None:
        self._size = size
        self._items: OrderedDict[str, MarkedSvg] = OrderedDict()

    def get(self, dot: str) -> MarkedSvg:
        """The marked SVG of ``dot``, rendering it with Graphviz on a miss.

        Raises:
            GraphvizNotInstalledError: the ``dot`` program is missing.
            MissingExtraError: the graphviz package is missing.
        """
        found = self._items.get(dot)
        if found is not None:
            self._items.move_to_end(dot)
            return found
        from dexviz.viz.render import render

        marked = MarkedSvg.parse(render(dot, "svg").decode("utf-8"))
        self._items[dot] = marked
        while len(self._items) > self._size:
            self._items.popitem(last=False)
        return marked


@dataclass(frozen=True)
class CursorMarks:
    """What the graphs mark at the cursor.

    Attributes:
        index: The cursor (0-based event index).
        event: The selected event.
        active: Active execution id -> phase.
        holders: Executions holding reserved messages.
        closed: Whether the cursor's run has closed.
        queued_channels: Channels with queued messages.
        held_channels: Channels with reserved messages.
    """

    index: int
    event: Event
    active: Mapping[str, str]
    holders: Set[str]
    closed: bool
    queued_channels: Set[str]
    held_channels: Set[str]


def selected_node(event: Event) -> str | None:
    """The lineage node id an event is about (an execution, or a source or end node)."""
    if event.execution_id:
        return event.execution_id
    kind = str(event.kind)
    if kind == EventKind.FLOW_STARTED_OR_CONTINUED:
        return "__start__"
    if kind == EventKind.FLOW_CLOSED:
        return "__end__"
    if kind == EventKind.CHANNEL_EXTERNAL_PUBLISH:
        return "__client__"
    rpc = event.payload.get("rpc")
    return f"__rpc/{rpc}" if kind == EventKind.RPC_EXECUTION_COMPLETED and rpc else None


@dataclass(frozen=True)
class LineageLayout:
    """A lineage graph's SVG ids, members and creation points, computed once per graph.

    Attributes:
        nodes: ``(svg id, node id, member executions, kind)`` per node.
        first_created: Node id -> index of its first member's creation (huge if unknown).
        edges: ``(svg id, source node id, target node id)`` per edge.
        node_of: Execution id (and source/end id) -> node id.
    """

    nodes: tuple[tuple[str, str, tuple[str, ...], str], ...]
    first_created: Mapping[str, int]
    edges: tuple[tuple[str, str, str], ...]
    node_of: Mapping[str, str]

    @classmethod
    def of(cls, graph: LineageGraph, index: HistoryIndex) -> LineageLayout:
        """Precompute the layout of ``graph`` (a run's lineage graph) from ``index``."""
        nodes, first, node_of = [], {}, {}
        for node in graph.nodes:
            members = node.execution_ids
            nodes.append((f"exec:{node.node_id}", node.node_id, members, node.kind))
            node_of[node.node_id] = node.node_id
            for member in members:
                node_of[member] = node.node_id
            created = [index.created_at.get((graph.run_id, m), _NEVER) for m in members]
            first[node.node_id] = min(created) if created else (
                _NEVER if node.kind == "end" else -1)
        edges = tuple((f"edge:{number:04d}", edge.source, edge.target)
                      for number, edge in enumerate(graph.edges, start=1))
        return cls(tuple(nodes), first, edges, node_of)


def _node_classes(members: tuple[str, ...], marks: CursorMarks) -> list[str]:
    phases = [marks.active[m] for m in members if m in marks.active]
    classes = ["dx-active", *(f"dx-phase-{p}" for p in dict.fromkeys(phases))] if phases else [
        "dx-done"]
    if any(m in marks.holders for m in members):
        classes.append("dx-holder")
    return classes


def lineage_classes(layout: LineageLayout, marks: CursorMarks) -> dict[str, str]:
    """Extra classes for the lineage graph's groups at the cursor (see the module doc)."""
    selected = selected_node(marks.event)
    selected_id = layout.node_of.get(selected) if selected else None
    future: set[str] = set()
    out: dict[str, str] = {}
    for svg_id, node_id, members, kind in layout.nodes:
        if kind == "end":
            classes = ["dx-done"] if marks.closed else ["dx-future"]
        elif layout.first_created[node_id] > marks.index:
            classes = ["dx-future"]
        elif kind == "source":
            classes = []
        else:
            classes = _node_classes(members, marks)
        if "dx-future" in classes:
            future.add(node_id)
        if node_id == selected_id:
            classes.append("dx-selected")
        if classes:
            out[svg_id] = " ".join(classes)
    for svg_id, source, target in layout.edges:
        if source in future or target in future:
            out[svg_id] = "dx-future"
    return out


def definition_classes(marks: CursorMarks, step_of: Mapping[str, str]) -> dict[str, str]:
    """Extra classes for the definition graph: active, holder and selected Steps; Channels."""
    steps: dict[str, list[str]] = {}
    for execution_id, phase in marks.active.items():
        entry = steps.setdefault(f"step:{step_of.get(execution_id, '')}", ["dx-active"])
        entry.append(f"dx-phase-{phase}")
    for execution_id in marks.holders:
        steps.setdefault(f"step:{step_of.get(execution_id, '')}", []).append("dx-holder")
    if marks.event.step_type:
        steps.setdefault(f"step:{marks.event.step_type}", []).append("dx-selected")
    out = {key: " ".join(dict.fromkeys(value)) for key, value in steps.items()}
    for channel in marks.queued_channels:
        out[f"channel:{channel}"] = "dx-queued"
    for channel in marks.held_channels:
        out[f"channel:{channel}"] = (out.get(f"channel:{channel}", "") + " dx-held").strip()
    return out
