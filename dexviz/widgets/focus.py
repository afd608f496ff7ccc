"""Readable pictures in the Debugger: the focus neighbourhood, and the narrowest readable width.

"Fit" shrinks a graph to its panel, which for a wide run makes its text unreadable. Two
remedies live here: :func:`readable_width` is the narrowest CSS width at which the smallest
text of an SVG is still :data:`MIN_TEXT_PX` pixels (the panel scrolls beyond it), and
:func:`neighbourhood` cuts the lineage graph down to one execution, its parent and children,
and the executions it exchanged messages with, to be drawn at natural size.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

from dexviz.analysis.lineage import LineageGraph

__all__ = ["MIN_TEXT_PX", "neighbourhood", "readable_width", "scaled", "with_min_width"]

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
