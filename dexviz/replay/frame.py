"""What the replay shows at one event: the heading, the state panels, the graphs' marks.

One model that every view derives from: the widget sets its controls from a :class:`Frame`'s
parts, the static snapshot prints them, and the HTML report encodes one frame per event.
Nothing is recomputed per view: each value is the :class:`~dexviz.replay.session.Replay`'s own
answer at its cursor.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from dexviz.replay.graphs import GraphUnavailable
from dexviz.replay.panels import (
    active_table,
    attributes_table,
    channel_table,
    event_detail,
    heading,
)
from dexviz.replay.session import Replay

__all__ = ["PANELS", "Frame", "frame_at", "frames", "heading_html", "panels_at", "replay_of"]

PANELS: tuple[str, ...] = ("detail", "channels", "attributes", "active")
"""The state panels of a frame, in page order (the widget's right-hand column)."""


def heading_html(replay: Replay) -> str:
    """The position line: event n / N, time since the run's start, the event, the status."""
    event = replay.event
    status = replay.state.closed or "RUNNING"
    if replay.live:
        status += " · live"
    return heading(replay.index, len(replay), event, replay.index_.seconds(event), status)


def panels_at(replay: Replay) -> tuple[str, ...]:
    """HTML of each panel of :data:`PANELS` at ``replay``'s cursor, in that order."""
    state = replay.state
    return (event_detail(state.event, replay.index_), channel_table(state),
            attributes_table(state), active_table(state, replay.section_holders()))


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
    def of(cls, replay: Replay) -> Frame:
        """The frame at ``replay``'s cursor, from its own panels and highlight answers."""
        event = replay.event
        return cls(
            index=replay.index,
            run_id=event.run_id,
            kind=str(event.kind),
            heading=heading_html(replay),
            panels=panels_at(replay),
            lineage=replay.graph_classes("lineage"),
            definition=replay.graph_classes("definition"),
            cursor=_cursor(replay),
        )


def _cursor(replay: Replay) -> str:
    try:
        return replay.timeline_cursor()
    except GraphUnavailable:
        return ""


def replay_of(source: Replay) -> Replay:
    """A private Replay over ``source``'s history with its settings, for stepping freely.

    The user's Debugger keeps its cursor (and its widget is not redrawn once per event).
    """
    pictures = source.pictures
    return Replay(source.history, flow_source=pictures.flow_source,
                  collapse_at=pictures.collapse_at, token_channel=pictures.token_channel)


def frame_at(replay: Replay, index: int) -> Frame:
    """Move ``replay`` to event ``index`` and return the frame there."""
    replay.seek(index)
    return Frame.of(replay)


def frames(replay: Replay) -> Iterator[Frame]:
    """Every event's frame, first to last (``replay``'s cursor ends on the last event)."""
    for index in range(len(replay)):
        yield frame_at(replay, index)
