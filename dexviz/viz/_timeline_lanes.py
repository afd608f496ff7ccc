"""Timeline lanes and styles: which segments go in which lane, and how each style looks."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from dexviz._optional import require
from dexviz.analysis.exclusive import ExclusiveReport
from dexviz.analysis.executions import RunExecutions
from dexviz.analysis.intervals import Segment, SegmentKind, execution_segments, lane_groups
from dexviz.analysis.lineage import group_status
from dexviz.analysis.sections import SectionReport
from dexviz.history import EventKind
from dexviz.viz.palette import OVERLAP_COLOR, SEGMENT_COLORS, STATUS_COLORS, TOKEN_COLOR

_INK = "#2f3a36"
INSTANT_TOKEN = "#7fb0d6"
"""The marker of a holding that lasted no time (a handoff within one commit)."""
SECTION_FILL = "#e4edf5"
"""The fill of a measured section's box (behind the holding bar)."""
_INSTANT_CAPTIONS = ((False, "held for no time (handed on at once)"),
                     (True, "took it at the last event"))
TIMER_COLOR = "#8a5a12"
"""The marker of a timer firing."""


@dataclass(frozen=True)
class Style:
    """How one kind of segment is drawn, and its legend caption."""

    color: str
    edge: str
    hatch: str | None
    height: float
    zorder: int
    caption: str


STYLES: dict[str, Style] = {
    "queued": Style(SEGMENT_COLORS["queued"], "none", None, 0.16, 2, "queued"),
    "wait_for": Style(SEGMENT_COLORS["wait_for"], "white", None, 0.7, 3, "WaitFor attempt"),
    "waiting": Style(SEGMENT_COLORS["waiting"], "#d39732", None, 0.42, 2, "condition wait"),
    "execute": Style(SEGMENT_COLORS["execute"], "white", None, 0.7, 3, "Execute attempt"),
    "failed": Style(SEGMENT_COLORS["failed"], "white", "////", 0.7, 4, "failed attempt"),
    "backoff": Style(SEGMENT_COLORS["backoff"], "#c95252", "//", 0.5, 2, "retry backoff"),
    "canceled": Style(SEGMENT_COLORS["canceled"], "white", "\\\\\\\\", 0.7, 4,
                      "canceled attempt"),
    "pending": Style(SEGMENT_COLORS["pending"], "white", None, 0.7, 3, "pending at close"),
    "running": Style(SEGMENT_COLORS["running"], "white", None, 0.7, 3, "running"),
}
"""Segment style -> look, in legend order."""

_BY_OUTCOME = {"completed": None, "failed": "failed", "canceled": "canceled",
               "pending": "pending", "running": "running"}


def style_of(segment: Segment) -> str:
    """The style name of a segment (a method attempt's outcome picks failed, canceled ...)."""
    if segment.kind in (SegmentKind.WAIT_FOR, SegmentKind.EXECUTE):
        return _BY_OUTCOME.get(segment.outcome or "") or str(segment.kind)
    return str(segment.kind)


@dataclass
class Lane:
    """One timeline lane: an execution, or a collapsed group of them."""

    label: str
    group: str
    status: str | None
    collapsed: bool
    segments: list[Segment] = field(default_factory=list)
    canceled_ns: list[int] = field(default_factory=list)
    timers_ns: list[int] = field(default_factory=list)

    def by_style(self) -> dict[str, list[tuple[int, int]]]:
        """``style -> [(start_ns, end_ns)]`` in STYLES order, segments in time order."""
        spans: dict[str, list[tuple[int, int]]] = {}
        for segment in self.segments:
            spans.setdefault(style_of(segment), []).append((segment.start_ns, segment.end_ns))
        return {style: spans[style] for style in STYLES if style in spans}


def _collapsed_label(group: str, ids: Sequence[str], group_by: str) -> str:
    if group_by == "branch":
        return f"{group} +{len(ids) - 1}" if len(ids) > 1 else group
    return f"{group} ×{len(ids)}"


def build_lanes(run: RunExecutions, group_by: str, collapse_above: int,
                only: Collection[str] | None = None) -> list[Lane]:
    """The lanes of a run: one per execution, or one per group above ``collapse_above``.

    With ``only``, just those executions get lanes (and count against ``collapse_above``).
    """
    groups = lane_groups(run, group_by)
    if only is not None:
        groups = [(g, kept) for g, ids in groups if (kept := [i for i in ids if i in only])]
    collapsed = sum(len(ids) for _, ids in groups) > collapse_above
    timers: dict[str, list[int]] = {}
    for event in run.events:
        if event.kind == EventKind.TIMER_FIRED and event.execution_id:
            timers.setdefault(event.execution_id, []).append(event.time_ns)
    lanes: list[Lane] = []
    for group, ids in groups:
        members = [run[i] for i in ids]
        if collapsed:
            lane = Lane(_collapsed_label(group, ids, group_by), group,
                        group_status(str(e.status) for e in members), True)
            lanes.append(lane)
        for execution in members:
            if not collapsed:
                lane = Lane(execution.execution_id, group, str(execution.status), False)
                lanes.append(lane)
            lane.segments.extend(execution_segments(execution, run.end_ns))
            if execution.canceled_ns is not None:
                lane.canceled_ns.append(execution.canceled_ns)
            lane.timers_ns.extend(timers.get(execution.execution_id, ()))
    return lanes


def legend_handles(lanes: Sequence[Lane], report: ExclusiveReport | None,
                   sections: SectionReport | None = None) -> list[Any]:
    """Legend entries for the styles drawn, cancellations, token holdings and sections."""
    patches = require("matplotlib.patches", "plot")
    lines = require("matplotlib.lines", "plot")
    used = {style for lane in lanes for style in lane.by_style()}
    handles: list[Any] = [
        patches.Patch(facecolor=s.color, edgecolor=s.edge if s.hatch else s.color, hatch=s.hatch,
                      label=s.caption)
        for name, s in STYLES.items() if name in used
    ]
    if any(b == a for lane in lanes for style, spans in lane.by_style().items()
           if style != "queued" for a, b in spans):
        handles.append(lines.Line2D([], [], color=_INK, marker="|", markersize=8,
                                    markeredgewidth=2, linestyle="none",
                                    label="took no time"))
    if any(lane.canceled_ns for lane in lanes):
        handles.append(lines.Line2D([], [], color=STATUS_COLORS["Canceled"][0], marker="x",
                                    linestyle="none", label="canceled"))
    if any(lane.timers_ns for lane in lanes):
        handles.append(lines.Line2D([], [], color=TIMER_COLOR, marker="v", linestyle="none",
                                    label="timer fired"))
    if report is not None:
        handles.append(patches.Patch(facecolor=TOKEN_COLOR,
                                     label=f"holds {report.channel} (bar: holder)"))
        instant = {h.end == "open" for h in report.intervals if h.duration_ns == 0}
        # A token taken at a live history's last event is held, not handed on.
        for label in [c for is_open, c in _INSTANT_CAPTIONS if is_open in instant]:
            handles.append(lines.Line2D([], [], color=INSTANT_TOKEN, marker="D",
                                        markeredgecolor="white", linestyle="none", label=label))
    if sections is not None:
        if any(s.outlasts_holding for s in sections.sections):
            handles.append(patches.Patch(facecolor=SECTION_FILL, edgecolor=TOKEN_COLOR,
                                         linestyle="--",
                                         label="in section (until last Step finished)"))
        if any(s.inside for s in sections.sections):
            handles.append(lines.Line2D([], [], color=TOKEN_COLOR, marker=">", linestyle="none",
                                        label="still in section"))
        if sections.overlaps:
            handles.append(patches.Patch(facecolor=OVERLAP_COLOR, alpha=0.45, hatch="xx",
                                         label="sections overlap"))
    return handles
