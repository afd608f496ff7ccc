"""Readable pictures in the Debugger: Focus in every view, and the narrowest readable width.

"Fit" shrinks a graph to its panel, which for a wide run makes its text unreadable. Two
remedies live here: :func:`readable_width` is the narrowest CSS width at which the smallest
text of an SVG is still :data:`MIN_TEXT_PX` pixels (the panel scrolls beyond it), and
:func:`neighbourhood` cuts the lineage graph down to one execution, its parent and children,
and the executions it exchanged messages with, to be drawn at natural size.

:class:`Focus` is that neighbourhood as every view uses it: the lineage graph draws only it,
the timeline only its executions' lanes, and the definition graph dims what lies outside it
(:func:`definition_focus_classes`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from dexviz.analysis.definition.model import FlowDefinitionGraph
from dexviz.analysis.lineage import LineageGraph

__all__ = [
    "MIN_TEXT_PX",
    "Focus",
    "definition_focus_classes",
    "fit_note",
    "neighbourhood",
    "readable_width",
    "scaled",
    "with_min_width",
]

MIN_TEXT_PX = 9.0
"""The smallest text size, in CSS pixels, a fitted graph may show."""

_VIEWBOX = re.compile(r'<svg\b[^>]*\bviewBox="[-\d.]+[ ,]+[-\d.]+[ ,]+([\d.]+)[ ,]+[\d.]+"')
_FONT = re.compile(r'<text\b[^>]*\bfont-size="([\d.]+)"')
# matplotlib writes the size into the style: ``font-size: 8px`` (or ``font: 8px 'DejaVu Sans'``).
_STYLE_FONT = re.compile(r'<text\b[^>]*\bstyle="[^"]*?\bfont(?:-size)?:\s*([\d.]+)px')
_SVG_TAG = re.compile(r"<svg\b")


def readable_width(svg: str, min_px: float = MIN_TEXT_PX) -> int | None:
    """The CSS width (px) at which the SVG's smallest text renders at ``min_px``.

    Text sizes are read from ``font-size`` attributes (Graphviz) and from ``style`` rules
    (matplotlib's timeline). None when the SVG has no viewBox or no sized text. Text scales
    with the picture: at a rendered width ``w`` a font of ``f`` user units over a viewBox
    ``W`` wide is ``f*w/W`` px.
    """
    box = _VIEWBOX.search(svg)
    sizes = [float(size) for size in _FONT.findall(svg) + _STYLE_FONT.findall(svg)]
    if box is None or not sizes or min(sizes) <= 0:
        return None
    # One pixel more than the exact width: browsers lay the width out in whole device pixels.
    return math.ceil(min_px * float(box.group(1)) / min(sizes)) + 1


def with_min_width(svg: str, min_px: float = MIN_TEXT_PX) -> str:
    """``svg`` whose root may shrink to fit, but never below its readable width."""
    width = readable_width(svg, min_px)
    if width is None:
        return svg
    return _SVG_TAG.sub(f'<svg style="min-width:{width}px"', svg, count=1)


_NATURAL = re.compile(r'<svg\b[^>]*?\bwidth="([\d.]+)(pt|px)?"')


def fit_note(svg: str, min_px: float = MIN_TEXT_PX) -> str:
    """HTML that says, while ``svg`` is fitted too small to read, which zoom reads it.

    "Fit" shows the whole picture however wide; below its readable width its smallest text
    falls under ``min_px``. A container query on the graph's box (``.dx-graph``) shows the
    note exactly then, so it needs no script (a notebook's HTML output runs none). The rule's
    class names the width, so two graphs of one width share it harmlessly. "" when the text
    is readable at every width the picture is drawn (or its sizes are unknown).
    """
    readable = readable_width(svg, min_px)
    natural = _NATURAL.search(svg)
    if readable is None or natural is None:
        return ""
    natural_px = float(natural.group(1)) * (4 / 3 if natural.group(2) != "px" else 1)
    note = (f'<p class="dx-small-text dx-below-{readable}">Text is below {min_px:g} px at '
            f"this size: 1:1 (natural size), 2× or Focus shows it readable; the box then "
            "scrolls.</p>")
    if natural_px < readable:  # even at natural size: always small
        return note.replace("dx-small-text", "dx-small-text dx-always", 1)
    # More specific than the theme's hiding rule: a later Debugger's theme <style> in the same
    # notebook must not hide this one's note again.
    rule = (f"@container (max-width: {readable - 1}px) {{ .dexviz-debugger .dx-graph "
            f".dx-small-text.dx-below-{readable} {{ display: block; }} }}")
    return f"<style>{rule}</style>{note}"


_SIZE = re.compile(r'(<svg\b[^>]*?\b)(width|height)="([\d.]+)(pt|px)?"')


def scaled(svg: str, factor: float) -> str:
    """``svg`` with its root's width and height multiplied by ``factor`` (the viewBox stays)."""
    for _ in range(2):  # width, then height (each match rewrites one attribute)
        svg = _SIZE.sub(lambda m: f'{m.group(1)}{m.group(2)}X="{float(m.group(3)) * factor:g}'
                        f'{m.group(4) or ""}"', svg, count=1)
    return svg.replace('widthX="', 'width="', 1).replace('heightX="', 'height="', 1)


def neighbourhood(graph: LineageGraph, node_id: str) -> LineageGraph:
    """The part of ``graph`` around one node, with the edges among what is kept.

    Kept: the node (an execution, or a source or end node), its parents and children, and the
    executions it exchanged messages with. ``graph`` should be drawn uncollapsed, so an
    execution is its own node.

    Raises:
        KeyError: no such execution or node in the graph.
    """
    try:
        centre = graph.node_of(node_id).node_id
    except KeyError:
        centre = graph.node(node_id).node_id
    keep = {centre}
    for edge in graph.edges:
        if centre in (edge.source, edge.target):
            keep.update((edge.source, edge.target))
    nodes = tuple(n for n in graph.nodes if n.node_id in keep)
    edges = tuple(e for e in graph.edges if e.source in keep and e.target in keep)
    return replace(graph, nodes=nodes, edges=edges)


@dataclass(frozen=True)
class Focus:
    """The focus neighbourhood of one lineage node, as the Debugger's views show it.

    Attributes:
        centre: The lineage node focused on (an execution id, or a source or end node id).
        executions: The neighbourhood's executions (the centre's own first), in graph order.
        step_types: Their Step types: the definition graph's Steps kept in view.
        channels: The Channels the centre exchanged messages over.
    """

    centre: str
    executions: tuple[str, ...]
    step_types: frozenset[str]
    channels: frozenset[str]

    @classmethod
    def around(cls, graph: LineageGraph, node_id: str, step_of: Mapping[str, str]) -> Focus:
        """The focus around ``node_id`` in an uncollapsed lineage graph.

        Args:
            graph: The run's lineage graph, drawn uncollapsed (an execution per node).
            node_id: An execution id, or a source or end node id.
            step_of: Execution id -> Step type.

        Raises:
            KeyError: no such execution or node in the graph.
        """
        part = neighbourhood(graph, node_id)
        centre = node_id
        members = [m for node in part.nodes for m in node.execution_ids]
        ordered = tuple(dict.fromkeys([m for m in members if m == centre] + members))
        channels = frozenset(e.label for e in part.edges
                             if e.kind == "message" and centre in (e.source, e.target))
        return cls(centre, ordered, frozenset(step_of[m] for m in ordered if m in step_of),
                   channels)


def _owners(model: FlowDefinitionGraph) -> dict[str, str]:
    """Definition node id -> the Step or Channel node it belongs to (waits, decisions ...)."""
    parent = {node.id: node.parent_id for node in model.nodes}
    owners = {}
    for node_id in parent:
        owner = node_id
        while parent.get(owner):
            owner = str(parent[owner])
        owners[node_id] = owner
    return owners


def definition_focus_classes(model: FlowDefinitionGraph, ids: Iterable[str],
                             focus: Focus) -> dict[str, str]:
    """``{svg id: "dx-unfocused"}`` for the definition graph's groups outside ``focus``.

    Kept in view: the focus's Steps and Channels, and the edges and Channel stubs
    (``stub:channel:<name>@step:<type>``) whose two ends are kept. Only Steps and Channels are
    ever dimmed as nodes; an end that is neither (an Attribute, an RPC) counts as kept.
    """
    kept = {f"step:{s}" for s in focus.step_types} | {f"channel:{c}" for c in focus.channels}
    owners = _owners(model)

    def keeps(end: str) -> bool:
        return end in kept or not end.startswith(("step:", "channel:"))

    ends = {e.id: (owners.get(e.source, e.source), owners.get(e.target, e.target))
            for e in model.edges}
    out = {}
    for svg_id in ids:
        if svg_id.startswith("stub:"):
            resource, _, owner = svg_id.removeprefix("stub:").partition("@")
            inside = keeps(resource) and keeps(owner)
        else:
            inside = all(keeps(end) for end in ends.get(svg_id, (svg_id,)))
        if not inside:
            out[svg_id] = "dx-unfocused"
    return out
