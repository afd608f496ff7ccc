"""The one-file HTML replay of a Flow run: a static page at one event plus a small script.

The page is complete without JavaScript: the graphs (inline SVG), the panels, the failed
attempts, the event list and the timeline are written at the shown event (the last one by
default). The inline script then replays any event from the JSON data island. Nothing is
fetched: no font, no CDN, no kernel.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from os import PathLike
from pathlib import Path

from dexviz.engine import SimulationRun
from dexviz.history import History
from dexviz.history._plural import plural
from dexviz.history.output_files import write_output_text
from dexviz.replay.focus import fit_note
from dexviz.replay.frame import PANELS, Frame, frames
from dexviz.replay.graphs import GraphUnavailable
from dexviz.replay.highlight import MarkedSvg
from dexviz.replay.paired import COMPARE_CSS, Paired
from dexviz.replay.session import GRAPH_KINDS, Replay
from dexviz.replay.theme import CSS, LEGEND
from dexviz.report.compare import CompareSource, compare_blocks, compare_title, paired_with
from dexviz.report.encode import GraphIds, encode_frames, script_json
from dexviz.report.failures import failed_attempts
from dexviz.report.script import REPORT_CSS, REPORT_JS
from dexviz.report.text import safe_history

__all__ = ["CompareSource", "ReplaySource", "report_html", "write_report"]

ReplaySource = History | SimulationRun | Replay
"""What a replay can be made from: a History, a simulated run, or a Debugger (its settings)."""


@dataclass(frozen=True)
class _Drawn:
    """One graph drawn at the shown event: its section HTML and its ids for the script."""

    html: str
    ids: GraphIds | None


def _graph_ids(key: str, svg: str, extra: Mapping[str, str]) -> GraphIds:
    """Ids and own classes of ``svg``'s groups (``svg`` was marked with ``extra``)."""
    marked = MarkedSvg.parse(svg)
    base = []
    for group_id, classes in zip(marked.ids, marked.classes, strict=True):
        added = extra.get(group_id)
        base.append(classes[: -len(added) - 1] if added else classes)
    return GraphIds(key, marked.ids, tuple(base))


def _section(kind: str, key: str, title: str, body: str, run: int | None = None) -> str:
    run_attr = f' data-run="{run}"' if run is not None else ""
    return (f'<section class="dx-graph-section" data-kind="{kind}"{run_attr}>'
            f"<h2>{escape(title)}</h2>"
            f'<div class="dx-graph dx-zoom-fit" data-graph-key="{key}">{body}</div></section>')


def _fitted(svg: str) -> str:
    """``svg`` with the note shown (while fitted) when its text is below 9 px."""
    return fit_note(svg) + svg


def _hint(error: GraphUnavailable) -> str:
    return f'<p class="dx-hint">{escape(str(error))}</p>'


def _draw(debugger: Replay, kind: str, key: str, title: str, run: int | None) -> _Drawn:
    """The graph of ``kind`` at ``debugger``'s cursor, or a hint why it cannot be drawn."""
    try:
        svg = debugger.graph_svg(kind)
    except GraphUnavailable as error:
        return _Drawn(_section(kind, key, title, _hint(error), run), None)
    ids = _graph_ids(key, svg, debugger.graph_classes(kind))
    return _Drawn(_section(kind, key, title, _fitted(svg), run), ids)


def _timeline(debugger: Replay, run: int) -> str:
    try:
        body = debugger.timeline().html(debugger.timeline_cursor())
    except GraphUnavailable as error:
        body = _hint(error)
    return (f'<section class="dx-timeline-section" data-run="{run}"><h2>Timeline</h2>'
            f'<div class="dx-timeline">{body}</div></section>')


def _last_of_runs(history: History, runs: Sequence[str]) -> dict[str, int]:
    last: dict[str, int] = {}
    for index, event in enumerate(history):
        last[event.run_id] = index
    return {run: last[run] for run in runs}


def _pictures(debugger: Replay, shown: int) -> tuple[str, str, dict[str, GraphIds]]:
    """Every run's graph sections and timeline, and the ids the script marks.

    Each run is drawn at its last event, the shown event's run at ``shown``.
    """
    runs = debugger.history.run_ids
    sections, timelines, ids = [], [], {}
    for number, (run, last) in enumerate(_last_of_runs(debugger.history, runs).items()):
        debugger.seek(shown if debugger.history[shown].run_id == run else last)
        title = "Lineage graph" + (f" · run {number + 1} ({run})" if len(runs) > 1 else "")
        drawn = _draw(debugger, "lineage", f"l{number}", title, number)
        sections.append(drawn.html)
        if drawn.ids is not None:
            ids[drawn.ids.key] = drawn.ids
        timelines.append(_timeline(debugger, number))
    debugger.seek(shown)
    definition = _draw(debugger, "definition", "d", "Flow definition graph", None)
    sections.append(definition.html)
    if definition.ids is not None:
        ids["d"] = definition.ids
    return "".join(sections), "".join(timelines), ids


def _controls(debugger: Replay, shown: int) -> str:
    kinds = "".join(f'<option value="{escape(k)}">{escape(k)}</option>'
                    for k in debugger.index_.kinds)
    graphs = "".join(f'<button type="button" data-show-graph="{g}">{g.capitalize()}</button>'
                     for g in GRAPH_KINDS)
    last = len(debugger) - 1
    return (
        '<div class="dx-controls" role="toolbar" aria-label="replay controls">'
        '<button type="button" id="dx-first" title="first event (Home)">« First</button>'
        '<button type="button" id="dx-prev" title="previous event (←)">◀ Prev</button>'
        '<button type="button" id="dx-next" title="next event (→)">Next ▶</button>'
        '<button type="button" id="dx-last" title="last event (End)">Last »</button>'
        f'<input type="range" id="dx-slider" min="0" max="{last}" value="{shown}" '
        'aria-label="event">'
        f'<span class="dx-counter" id="dx-counter">{shown + 1} / {last + 1}</span>'
        '<span class="dx-sep"></span><label for="dx-kind">jump to</label>'
        f'<select id="dx-kind"><option value="">(any event kind)</option>{kinds}</select>'
        '<button type="button" id="dx-find-prev" title="previous event of this kind">◀</button>'
        '<button type="button" id="dx-find-next" title="next event of this kind">▶</button>'
        f'<span class="dx-sep"></span>{graphs}<span class="dx-sep"></span>{ZOOM_BUTTONS}</div>'
    )


ZOOM_BUTTONS = "".join(
    f'<button type="button" data-zoom="{zoom}" title="{tip}"'
    f' aria-pressed="{str(zoom == "fit").lower()}">{label}</button>'
    for zoom, label, tip in (("fit", "Fit", "the whole graph in the page"),
                             ("full", "1:1", "natural size (scroll to pan)"),
                             ("double", "2×", "twice the natural size")))
"""The graphs' sizes, as the widget's zoom buttons: Fit, 1:1 and 2×."""


def _event_list(labels: Sequence[str], shown: int) -> str:
    rows = "".join(
        f'<li data-i="{i}" id="event-{i}"{_current(i, shown)}>{escape(label)}</li>'
        for i, label in enumerate(labels))
    return (f'<div class="dx-panel dx-events"><div class="dx-title">Events ({len(labels)})'
            f'</div><ol class="dx-eventlist">{rows}</ol></div>')


def _current(index: int, shown: int) -> str:
    return ' class="dx-current"' if index == shown else ""


def _title(history: History, status: str) -> tuple[str, str]:
    spec = history.flow_spec
    flow_type = str(spec.get("flow_type") or spec.get("qualname") or "Flow")
    first, last = history[0], history[-1]
    seconds = (last.time_ns - first.time_ns) / 1e9
    sub = (f"Flow id {history.flow_id} · {status} · {plural(len(history), 'event')} · "
           f"{seconds:.3f} s of engine time · {plural(len(history.run_ids), 'run')}")
    return flow_type, sub


def _body(debugger: Replay, frame: Frame, graph: str, pictures: tuple[str, str],
          compare: tuple[Paired, str] | None = None) -> str:
    """The page body at ``frame`` (the script's slots hold the frame's fragments).

    In compare mode (``compare``: the pairing and the block at ``frame``) the compare block
    sits under the heading, and the title says which run is compared.
    """
    sections, timelines = pictures
    status = debugger.state_at(-1).closed or "RUNNING"
    flow_type, sub = _title(debugger.history, status)
    mode, block = "replay", ""
    if compare is not None:
        mode = "compare"
        sub = f"{sub} · {compare_title(compare[0])}"
        block = f'<div id="dx-compare">{compare[1]}</div>'
    panels = "".join(f'<div data-panel="{name}">{html}</div>'
                     for name, html in zip(PANELS, frame.panels, strict=True))
    return (
        f'<div class="dexviz-debugger dexviz-report dx-static" id="dx-report" '
        f'data-index="{frame.index}" data-graph="{escape(graph)}">'
        f"<h1>{escape(flow_type)} · {mode}</h1><div class=\"dx-sub\">{escape(sub)}</div>"
        f"{_controls(debugger, frame.index)}"
        f'<div id="dx-heading">{frame.heading}</div>{block}'
        f'<div class="dx-main"><div class="dx-left">{sections}{LEGEND}{timelines}</div>'
        f'<div class="dx-right">{panels}{failed_attempts(debugger.history)}'
        f"{_event_list(debugger.index_.labels, frame.index)}</div></div>"
        '<div class="dx-foot">Written by dexviz: one self-contained file. Keys: ← → step, '
        "Home/End first/last event.</div></div>"
    )


def report_html(source: ReplaySource, *, token_channel: str | None = None,
                flow_source: object | None = None, collapse_at: int | str | None = "auto",
                graph: str | None = None, start: int = -1,
                compare: CompareSource | None = None) -> str:
    """The one-file HTML replay of a run, as text.

    Args:
        source: A History, a SimulationRun, or a Debugger (whose settings are used and whose
            cursor does not move; a Debugger in compare mode brings its compared run).
        token_channel: A token Channel whose holdings the timeline draws in their own lanes
            (ignored for a Debugger, which has its own).
        flow_source: The Flow's source for the definition graph (default: the recorded file).
        collapse_at: Lineage collapsing, as for :class:`~dexviz.replay.session.Replay`.
        graph: The graph shown first, ``"lineage"`` or ``"definition"``.
        start: The event the page shows before any script runs (default: the last one).
        compare: A second run (History or SimulationRun) stepped with this one, as
            ``Debugger(source, compare=...)`` does: at every event the page shows both runs'
            state at the aligned event, side by side, and what differs there.

    Raises:
        ValueError: an empty history, an unknown graph, ``start`` outside the history, an
            empty ``compare`` run.
        TypeError: ``source`` is not a History, SimulationRun or Debugger, or ``compare`` is
            not a History or SimulationRun.
    """
    debugger, graph = _replay_of(source, token_channel, flow_source, collapse_at, graph)
    if graph not in GRAPH_KINDS:
        raise ValueError(f"graph must be one of {list(GRAPH_KINDS)}, got {graph!r}")
    size = len(debugger)
    shown = start + size if start < 0 else start
    if not 0 <= shown < size:
        raise ValueError(f"start={start} is outside the history of {size} events")
    paired, blocks = _compare_mode(source, compare, debugger, collapse_at)
    all_frames = list(frames(debugger))
    sections, timelines, ids = _pictures(debugger, shown)
    pair = None if paired is None or blocks is None else (paired, blocks[shown])
    body = _body(debugger, all_frames[shown], graph, (sections, timelines), pair)
    data = encode_frames(all_frames, debugger.history.run_ids, ids, blocks)
    title = escape(f"dexviz {'compare' if paired else 'replay'} · {debugger.flow_id}")
    css = CSS + REPORT_CSS + (COMPARE_CSS if paired else "")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{title}</title><style>{css}</style></head><body>{body}"
            f'<script type="application/json" id="dx-data">{script_json(data)}</script>'
            f"<script>{REPORT_JS}</script></body></html>\n")


def _compare_mode(source: ReplaySource, compare: CompareSource | None, debugger: Replay,
                  collapse_at: int | str | None) -> tuple[Paired | None, list[str] | None]:
    """The pairing with the compared run and each event's compare block (None without one).

    A Debugger in compare mode brings its compared run when ``compare`` is not given.
    """
    other: object = compare
    if other is None and isinstance(getattr(source, "paired", None), Paired):
        other = getattr(source, "paired")  # noqa: B009 - read only where it exists
    if other is None:
        return None, None
    paired = paired_with(debugger, other, collapse_at)
    return paired, list(compare_blocks(debugger, paired))


def _replay_of(source: ReplaySource, token_channel: str | None, flow_source: object | None,
               collapse_at: int | str | None, graph: str | None) -> tuple[Replay, str]:
    """The replay the page is drawn from, and the graph it shows first."""
    # Every text is made safe to show once, before anything is drawn (report.text).
    if isinstance(source, Replay):
        pictures = source.pictures
        debugger = Replay(safe_history(source.history), flow_source=pictures.flow_source,
                          collapse_at=pictures.collapse_at,
                          token_channel=pictures.token_channel)
        return debugger, graph or source.graph or "lineage"
    if isinstance(source, History | SimulationRun):
        history = source.history if isinstance(source, SimulationRun) else source
        debugger = Replay(safe_history(history), flow_source=flow_source,
                          collapse_at=collapse_at, token_channel=token_channel)
        return debugger, graph or "lineage"
    raise TypeError(f"a replay is made from a History, a SimulationRun or a Debugger, "
                    f"got {type(source).__name__}")


def write_report(source: ReplaySource, path: str | PathLike[str], *,
                 token_channel: str | None = None, flow_source: object | None = None,
                 collapse_at: int | str | None = "auto", graph: str | None = None,
                 start: int = -1, compare: CompareSource | None = None) -> Path:
    """Write the one-file HTML replay of ``source`` to ``path`` and return the path.

    The options are those of :func:`report_html` (``compare``: a second run stepped with it).
    The file is written whole or not at all.

    Raises:
        OutputWriteError: the file could not be written (an OSError naming it).
    """
    text = report_html(source, token_channel=token_channel, flow_source=flow_source,
                       collapse_at=collapse_at, graph=graph, start=start, compare=compare)
    return write_output_text(path, text)
