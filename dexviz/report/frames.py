"""What the replay shows at each event, taken from a Debugger so file and widget agree.

A :class:`Frame` holds, for one event, exactly what the Debugger's widget shows there: the
heading, the four state panels (built by ``dexviz.widgets.panels`` from the folded state), the
extra SVG classes of both graphs (``Debugger.graph_classes``) and the timeline cursor's CSS.
Nothing is recomputed here: each value is the Debugger's own answer at that cursor.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from dexviz.widgets.debugger import Debugger
from dexviz.widgets.graphs import GraphUnavailable
from dexviz.widgets.panels import active_table, attributes_table, channel_table, event_detail
from dexviz.widgets.snapshot import heading_html

__all__ = ["PANELS", "Frame", "frame_at", "frames", "replay_debugger"]

PANELS: tuple[str, ...] = ("detail", "channels", "attributes", "active")
"""The state panels of a frame, in page order (the widget's right-hand column)."""


@dataclass(frozen=True)
class Frame:
    """The replay at one event.

    Attributes:
        index: The event's 0-based position in the history.
        run_id: The run the event belongs to (its lineage graph and timeline are shown).
        kind: The event's kind.
        heading: The position line (event n / N, time, kind, execution, status).
        panels: HTML of each panel of :data:`PANELS`, in that order.
        lineage: Lineage-graph SVG group id -> classes added at this event.
        definition: Definition-graph SVG group id -> classes added at this event.
        cursor: CSS placing the timeline cursor ("" when no timeline can be drawn).
    """

    index: int
    run_id: str
    kind: str
    heading: str
    panels: tuple[str, ...]
    lineage: Mapping[str, str]
    definition: Mapping[str, str]
    cursor: str

    @classmethod
    def of(cls, debugger: Debugger) -> Frame:
        """The frame at ``debugger``'s cursor, from its own panels and highlight answers."""
        state = debugger.state
        panels = (event_detail(state.event, debugger.index_), channel_table(state),
                  attributes_table(state), active_table(state, debugger.section_holders()))
        return cls(
            index=debugger.index,
            run_id=state.event.run_id,
            kind=str(state.event.kind),
            heading=heading_html(debugger),
            panels=panels,
            lineage=debugger.graph_classes("lineage"),
            definition=debugger.graph_classes("definition"),
            cursor=_cursor(debugger),
        )


def _cursor(debugger: Debugger) -> str:
    try:
        return debugger.timeline_cursor()
    except GraphUnavailable:
        return ""


def replay_debugger(source: Debugger) -> Debugger:
    """A private Debugger over ``source``'s history with its settings, for stepping freely.

    The user's Debugger keeps its cursor (and its widget is not redrawn once per event).
    """
    pictures = source.pictures
    return Debugger(source.history, flow_source=pictures.flow_source,
                    collapse_at=pictures.collapse_at, token_channel=pictures.token_channel)


def frame_at(debugger: Debugger, index: int) -> Frame:
    """Move ``debugger`` to event ``index`` and return the frame there."""
    debugger.seek(index)
    return Frame.of(debugger)


def frames(debugger: Debugger) -> Iterator[Frame]:
    """Every event's frame, first to last (``debugger``'s cursor ends on the last event)."""
    for index in range(len(debugger)):
        yield frame_at(debugger, index)
