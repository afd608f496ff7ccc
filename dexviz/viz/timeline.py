"""The execution timeline: a time-proportional Gantt chart of one run, drawn with matplotlib.

One lane per execution (grouped by Step type or by branch), with segments for the queue, each
WaitFor attempt, the condition wait, each Execute attempt (failed ones red and hatched), retry
backoff, and cancellation marks; optional lanes for a token Channel's holdings, with a dashed box
where the section the explorer's ``exclusive`` check measures (until the chain's last Step
finished) lasts longer, and any overlap of sections drawn in red and stated in the title. The
x axis is seconds since the Flow's start. Above ``collapse_above`` executions the lanes
collapse to one per group. The Figure is built with ``matplotlib.figure.Figure`` (no pyplot
state); every artist carries a ``gid`` (``lane:<lane>:<style>``, ``holding:<channel>:<holder>``,
``section:<channel>:<holder>``, ``overlap:<a>:<b>``) so tests and tools can find what was
drawn. In the SVG, a lane's failed attempts carry a ``<title>`` (the hover text): each
failure's error and stack trace.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Iterable, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import escape as xml_escape

from dexviz._optional import require
from dexviz.analysis.exclusive import ExclusiveReport, exclusive_sections
from dexviz.analysis.executions import RunExecutions, RunSource, as_run
from dexviz.analysis.names import check_name
from dexviz.analysis.sections import SectionReport, measured_sections
from dexviz.history._plural import plural
from dexviz.history.output_files import output_file, write_output_text
from dexviz.viz._timeline_lanes import STYLES, TIMER_COLOR, Lane, build_lanes, legend_handles
from dexviz.viz._timeline_tokens import SMALL_PT, Scale, abbreviations, draw_tokens, pack_rows
from dexviz.viz._timeline_tokens import verdict as token_verdict
from dexviz.viz.palette import CLOSE_COLORS, STATUS_COLORS, TOKEN_COLOR

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["save_timeline", "timeline", "timeline_svg"]

_INK = "#2f3a36"
_BAND = "#f3f6f5"
# Text stays text in the SVG (smaller, searchable; the viewer supplies the glyphs).
_SVG_RC = {"svg.hashsalt": "dexviz", "svg.id": "dexviz-timeline", "svg.fonttype": "none"}
_LANE_IN = 0.26
# The smallest text of the figure (lane labels, legend, bar captions), in points. A viewer
# that fits the picture to a panel keeps it at 9 px by a minimum width that depends on it.
_SMALL_PT = SMALL_PT
_TOP_IN, _BOTTOM_IN = 0.75, 0.85


def timeline(
    source: RunSource,
    *,
    group_by: str = "step_type",
    channel: str | None = None,
    collapse_above: int = 40,
    width: float = 11.0,
    title: str | None = None,
    run_id: str | None = None,
    executions: Iterable[str] | None = None,
) -> Figure:
    """Draw one run's executions over time and return the matplotlib Figure.

    Args:
        source: A History (its last run, or ``run_id``) or a run's RunExecutions.
        group_by: ``"step_type"`` or ``"branch"`` (a fan-out's branches, each chain together).
        channel: A token Channel whose holdings get their own lanes (overlaps in red).
        collapse_above: With more executions than this, draw one lane per group instead.
        width: Figure width in inches (the height follows the number of lanes).
        title: The title; by default the Flow type, run and (with ``channel``) the verdict.
        run_id: The run to draw when ``source`` is a History.
        executions: Draw only these executions' lanes (the time axis and any token lanes
            stay the whole run's); the title says how many of the run's are shown.

    Raises:
        MissingExtraError: matplotlib is not installed (``pip install "dexviz[plot]"``).
        ValueError: an unknown ``group_by``, a ``channel`` the Flow does not declare, or
            ``executions`` empty or naming an execution the run does not have.
    """
    figure_module = require("matplotlib.figure", "plot")
    run = as_run(source, run_id)
    report = exclusive_sections(run, channel) if channel else None
    # The sections the explorer's exclusive check measures: the rows and the verdict follow them.
    sections = measured_sections(run, channel) if channel else None
    only = None if executions is None else _chosen(run, executions)
    lanes = build_lanes(run, group_by, collapse_above, only)
    rows = pack_rows(sections.sections) if sections else []
    height = _TOP_IN + _BOTTOM_IN + _LANE_IN * (len(lanes) + len(rows) + 0.5)
    figure: Figure = _figure_class(figure_module)(figsize=(width, height))
    ax = figure.add_subplot()
    # _decorate sets both limits; autoscaling after every bar made large runs quadratic.
    ax.set_autoscale_on(False)
    _place_axes(figure, lanes, report, width, height)
    scale = Scale(run.start_ns, run.end_ns,
                  width * (figure.subplotpars.right - figure.subplotpars.left))
    _draw_lanes(ax, lanes, len(rows) + (1 if rows else 0), scale)
    if report is not None and sections is not None:
        draw_tokens(ax, report, rows, sections, scale)
    if title is None:
        title = _title(run, lanes, None if only is None else len(only))
        if report is not None and sections is not None:
            title += _token_line(report, sections, scale)
    _decorate(figure, ax, run, lanes, rows, (report, sections), scale, title)
    figure.dexviz_hovers = failure_hovers(run, lanes)  # type: ignore[attr-defined]
    return figure


def _chosen(run: RunExecutions, executions: Iterable[str]) -> frozenset[str]:
    """The executions to draw, each checked to be one of the run's (with a "did you mean")."""
    chosen = frozenset(executions)
    if not chosen:
        raise ValueError("executions= is empty: name at least one execution to draw")
    unknown = sorted(i for i in chosen if i not in run)
    if unknown:
        check_name(unknown[0], run.keys(), "execution", f"run {run.run_id!r}")
    return chosen


def failure_hovers(run: RunExecutions, lanes: Sequence[Lane]) -> dict[str, str]:
    """``{svg group id: hover text}``: each lane's failed attempts with their stack traces."""
    hovers: dict[str, str] = {}
    for lane in lanes:
        execution = run.get(lane.label)
        failed = [a for a in execution.attempts if a.outcome.value == "failed"] if execution else []
        texts = [
            f"{a.execution_id} {a.method} attempt {a.number} failed: "
            f"{a.error_type}: {a.error_message}\n{a.stack_trace or ''}".rstrip()
            for a in failed
        ]
        if texts:
            # Bars and the markers of attempts that took no time both get the text.
            for kind in ("lane", "instant"):
                hovers[f"{kind}:{lane.label}:failed"] = "\n\n".join(texts)
    return hovers


@functools.cache
def _figure_class(figure_module: Any) -> type[Figure]:
    """A Figure subclass that shows itself in a notebook even when pyplot was never imported.

    The notebook's inline backend registers its PNG formatter only when pyplot loads; a
    registered formatter still takes precedence over this ``_repr_png_``.
    """

    class TimelineFigure(figure_module.Figure):  # type: ignore[misc]
        """A timeline Figure with a PNG representation for notebooks."""

        def _repr_png_(self) -> bytes:
            buffer = io.BytesIO()
            self.savefig(buffer, format="png", dpi=100)
            return buffer.getvalue()

    return TimelineFigure


def _place_axes(figure: Figure, lanes: Sequence[Lane], report: ExclusiveReport | None,
                width: float, height: float) -> None:
    """Margins from the longest lane label (a fixed layout: no constrained-layout pass)."""
    labels = [lane.label for lane in lanes] + ([f"{report.channel} holder (2)"] if report else [])
    label_in = max((len(text) for text in labels), default=10) * _SMALL_PT * 0.6 / 72 + 0.25
    figure.subplots_adjust(left=min(label_in / width, 0.45), right=0.985,
                           top=1 - _TOP_IN / height, bottom=_BOTTOM_IN / height)


def _draw_lanes(ax: Axes, lanes: Sequence[Lane], offset: int, scale: Scale) -> None:
    for index, lane in enumerate(lanes):
        y = offset + index
        for style, spans in lane.by_style().items():
            look = STYLES[style]
            height = look.height
            ax.broken_barh(
                [(scale.s(a), (b - a) / 1e9) for a, b in spans], (y - height / 2, height),
                facecolors=look.color, edgecolors=look.edge, linewidths=0.6, hatch=look.hatch,
                alpha=0.55 if lane.collapsed else 1.0, gid=f"lane:{lane.label}:{style}",
                zorder=look.zorder,
            )
            instants = [scale.s(a) for a, b in spans if b == a and style != "queued"]
            if instants:
                ax.scatter(instants, [y] * len(instants), marker="|", s=110, linewidths=2.2,
                           color=look.color, zorder=look.zorder + 3,
                           gid=f"instant:{lane.label}:{style}")
        if lane.canceled_ns:
            ax.scatter([scale.s(t) for t in lane.canceled_ns], [y] * len(lane.canceled_ns),
                       marker="x", s=40, linewidths=1.5, color=STATUS_COLORS["Canceled"][0],
                       zorder=6, gid=f"canceled:{lane.label}")
        if lane.timers_ns:
            ax.scatter([scale.s(t) for t in lane.timers_ns], [y - 0.42] * len(lane.timers_ns),
                       marker="v", s=22, color=TIMER_COLOR, zorder=6,
                       gid=f"timer:{lane.label}")


def _label_color(lane: Lane) -> str:
    if lane.status in ("Failed", "Canceled", "Pending", "Waiting", "Active"):
        return STATUS_COLORS[lane.status][0]
    return _INK


def _y_axis(ax: Axes, lanes: Sequence[Lane], rows: Sequence[Any], channel: str | None) -> None:
    offset = len(rows) + (1 if rows else 0)
    labels = [f"{channel} holder" + (f" ({i + 1})" if i else "") for i in range(len(rows))]
    ticks = list(range(len(rows)))
    if rows:
        ax.axhline(len(rows), color="#9aa5a1", linewidth=0.8)
    ticks += [offset + i for i in range(len(lanes))]
    labels += [lane.label for lane in lanes]
    ax.set_yticks(ticks, labels=labels, fontsize=_SMALL_PT)
    colors = [TOKEN_COLOR] * len(rows) + [_label_color(lane) for lane in lanes]
    for tick, color in zip(ax.get_yticklabels(), colors, strict=True):
        tick.set_color(color)
    ax.set_ylim(offset + len(lanes) - 0.5, -0.5 if rows else offset - 0.5)
    _bands(ax, lanes, offset)


def _bands(ax: Axes, lanes: Sequence[Lane], offset: int) -> None:
    start, shade = 0, False
    for index in range(1, len(lanes) + 1):
        if index == len(lanes) or lanes[index].group != lanes[start].group:
            if shade:
                ax.axhspan(offset + start - 0.5, offset + index - 0.5, color=_BAND, zorder=0,
                           linewidth=0)
            start, shade = index, not shade


def _title(run: RunExecutions, lanes: Sequence[Lane], shown: int | None) -> str:
    status = run.close.status if run.close else "RUNNING"
    count = plural(len(run), "execution") if shown is None else (
        f"{shown} of {plural(len(run), 'execution')} shown")
    text = f"{run.flow_type or run.flow_id} · run {run.run_id} · {count} · {status}"
    if lanes and lanes[0].collapsed:
        text += " · lanes collapsed"
    return text


def _token_line(report: ExclusiveReport, sections: SectionReport, scale: Scale) -> str:
    """The title's second line: the Channel's holdings and whether two sections overlapped."""
    return (f"\n{report.channel}: {plural(len(report.intervals), 'holding')}, "
            f"{token_verdict(sections, scale)}{abbreviations(report.intervals, scale)}")


def _decorate(figure: Figure, ax: Axes, run: RunExecutions, lanes: Sequence[Lane],
              rows: Sequence[Any],
              tokens: tuple[ExclusiveReport | None, SectionReport | None], scale: Scale,
              title: str) -> None:
    report, sections = tokens
    _y_axis(ax, lanes, rows, report.channel if report else None)
    ax.set_xlim(-0.01 * scale.end_s, scale.end_s * 1.02)
    ax.ticklabel_format(axis="x", style="plain", useOffset=False)
    ax.set_xlabel("seconds since Flow start", fontsize=8.5)
    ax.tick_params(axis="x", labelsize=8)
    ax.grid(axis="x", color="#e3e8e6", linewidth=0.6)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    if run.close is not None:
        color = CLOSE_COLORS.get(run.close.status, (_INK, ""))[0]
        ax.axvline(scale.s(run.close.time_ns), color=color, linestyle="--", linewidth=1,
                   gid="flow-close")
    ax.set_title(title, fontsize=10, loc="left", color=_INK)
    handles = legend_handles(lanes, report, sections)
    figure.legend(handles=handles, loc="lower center", ncols=min(len(handles), 6),
                  frameon=False, fontsize=_SMALL_PT)


def timeline_svg(figure: Figure) -> str:
    """The Figure as SVG text, byte-identical for identical figures (fixed ids, no date)."""
    mpl = require("matplotlib", "plot")
    buffer = io.StringIO()
    with mpl.rc_context(_SVG_RC):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return _with_hovers(buffer.getvalue(), getattr(figure, "dexviz_hovers", {}))


def _with_hovers(svg: str, hovers: Mapping[str, str]) -> str:
    """Give each group in ``hovers`` a ``<title>``: the text a browser shows on hover."""
    for gid, text in hovers.items():
        opening = f'<g id="{xml_escape(gid, {chr(34): "&quot;"})}">'
        svg = svg.replace(opening, f"{opening}\n   <title>{xml_escape(text)}</title>", 1)
    return svg


def save_timeline(figure: Figure, path: str | PathLike[str]) -> Path:
    """Write the Figure to ``path`` (``.svg`` deterministic; ``.png``/``.pdf`` by matplotlib).

    The file is written whole or not at all.

    Raises:
        ValueError: the suffix is not ``.svg``, ``.png`` or ``.pdf``.
        OutputWriteError: the file could not be written (an OSError naming it).
    """
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix == ".svg":
        write_output_text(target, timeline_svg(figure))
    elif suffix in (".png", ".pdf"):
        mpl = require("matplotlib", "plot")
        with mpl.rc_context(_SVG_RC), output_file(target) as temporary:
            figure.savefig(temporary, format=suffix[1:], dpi=150,
                           metadata={"Creator": None, "Software": None}
                           if suffix == ".png" else {"CreationDate": None})
    else:
        raise ValueError(f"cannot save {target.name!r}: use a .svg, .png or .pdf suffix")
    return target
