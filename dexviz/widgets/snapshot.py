"""Static HTML of the debugger at its cursor: the highlighted graph, the panels and the timeline.

For places where widgets cannot render (nbconvert, GitHub, a broken front end): one
self-contained document (or a fragment for a notebook output) with inline SVG and plain tables,
no script and nothing fetched from the network.
"""

from __future__ import annotations

import hashlib
from html import escape
from typing import TYPE_CHECKING

from dexviz.replay.focus import fit_note, scaled
from dexviz.replay.frame import heading_html, panels_at
from dexviz.replay.graphs import GraphUnavailable
from dexviz.replay.panels import event_list
from dexviz.replay.theme import CSS, LEGEND

if TYPE_CHECKING:
    from dexviz.replay.session import Replay

__all__ = ["compare_block", "graph_html", "heading_html", "panels_html", "snapshot_html",
           "timeline_html"]


ZOOMS: tuple[str, ...] = ("fit", "focus", "full", "double")
"""Graph sizes: fit the panel (text never below 9 px), the selected execution's
neighbourhood, natural size, and twice natural size; the panel scrolls to pan."""


def _check_zoom(zoom: str) -> str:
    if zoom not in ZOOMS:
        raise ValueError(f"zoom must be one of {list(ZOOMS)}, got {zoom!r}")
    return zoom


def graph_html(debugger: Replay, kind: str | None = None, zoom: str = "fit") -> str:
    """The graph's SVG marked at the cursor, or a hint saying why it cannot be drawn.

    Args:
        debugger: The debugger to draw.
        kind: ``lineage`` or ``definition`` (default: the debugger's choice).
        zoom: ``fit`` shows the whole picture in the panel and, where its smallest text
            falls below 9 px, a note naming the zooms that read it; ``focus`` draws the
            selected execution's neighbourhood at natural size (lineage) or fits the
            definition graph with the Steps and Channels outside the neighbourhood
            dimmed; ``full`` keeps the natural size; ``double`` twice it.

    Raises:
        ValueError: an unknown ``zoom``.
    """
    lineage = (kind or debugger.graph) == "lineage"
    # The definition graph stays whole under Focus, so it is fitted like "fit".
    shown = "fit dx-focus" if _check_zoom(zoom) == "focus" and not lineage else zoom
    box = f'<div class="dx-graph dx-zoom-{escape(shown)}">'
    try:
        svg = debugger.graph_svg(kind, focus=zoom == "focus")
        if shown.startswith("fit"):
            svg = fit_note(svg) + svg
        elif zoom == "double":
            svg = scaled(svg, 2)
        return f"{box}{svg}</div>"
    except GraphUnavailable as error:
        return f'{box}<p class="dx-hint">{escape(str(error))}</p></div>'


def timeline_html(debugger: Replay, zoom: str = "fit") -> str:
    """The timeline with its cursor at the selected event, or a hint why it cannot be drawn.

    The selected execution's bars are outlined in amber, as its node is in the graphs. With
    ``zoom="focus"`` only the selected execution's neighbourhood has lanes.

    Raises:
        ValueError: an unknown ``zoom``.
    """
    focus = _check_zoom(zoom) == "focus"
    try:
        picture = debugger.timeline(focus=focus)
    except GraphUnavailable as error:
        return f'<div class="dx-timeline"><p class="dx-hint">{escape(str(error))}</p></div>'
    event = debugger.event
    # A page (a notebook's outputs) may hold several snapshots: the rule outlining the selected
    # execution's bars is scoped to this one, by a name that depends only on what it shows.
    scope = "dx-tl-" + hashlib.sha1(f"{debugger.flow_id}\0{event.run_id}\0{event.seq}\0{zoom}"
                                    .encode(), usedforsecurity=False).hexdigest()[:12]
    selected = picture.selected_css(scope, event.execution_id)
    style = f"<style>{selected}</style>" if selected else ""
    return (f'<div class="dx-timeline {scope}">{style}'
            f"{picture.html(picture.cursor_css(event.time_ns))}</div>")


def panels_html(debugger: Replay, *, events: bool = True) -> str:
    """Every panel at the cursor: event detail, Channels, Attributes, active executions."""
    parts = list(panels_at(debugger))
    if events:
        parts.append(event_list(debugger.index_.labels, debugger.index))
    return "".join(parts)


def compare_block(debugger: Replay) -> str:
    """Compare mode's two columns (run a and run b at the aligned event), else ""."""
    from dexviz.replay.paired import Paired, compare_html

    paired = getattr(debugger, "paired", None)
    return compare_html(debugger, paired) if isinstance(paired, Paired) else ""


def snapshot_html(debugger: Replay, *, document: bool = True, zoom: str = "fit") -> str:
    """The debugger at its cursor as static HTML.

    Args:
        debugger: The debugger to draw.
        document: A complete ``<!DOCTYPE html>`` page (True) or a fragment with its own
            ``<style>`` for a notebook output (False).
        zoom: The graph's size (see :func:`graph_html`); ``focus`` also limits the
            timeline to the selected execution's neighbourhood.

    Raises:
        ValueError: an unknown ``zoom``.
    """
    graph = graph_html(debugger, zoom=zoom)
    body = (f'<div class="dexviz-debugger dx-static">{heading_html(debugger)}'
            f"{compare_block(debugger)}"
            f'<div class="dx-main"><div class="dx-left">{graph}{LEGEND}</div>'
            f'<div class="dx-right">{panels_html(debugger)}</div></div>'
            f"{timeline_html(debugger, zoom)}</div>")
    if not document:
        return f"<style>{CSS}</style>{body}"
    title = escape(f"dexviz debugger · {debugger.flow_id} · event {debugger.index + 1}")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}'
            f"</title><style>{CSS}</style></head><body>{body}</body></html>\n")
