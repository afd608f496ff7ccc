"""Write a run's files: its history, lineage graph, timeline and executions table (for the CLI).

``write_run_outputs(history, out_dir)`` writes ``history.jsonl``, ``graph.svg`` (``graph.dot``
when Graphviz's ``dot`` is not installed), ``timeline.svg`` and ``executions.csv``; with a token
``channel`` the timeline gets its holding lanes and ``exclusive-sections.txt`` the overlap
report. Every file is deterministic: the same history gives the same bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dexviz._optional import MissingExtraError
from dexviz.analysis.exclusive import ExclusiveReport, exclusive_sections
from dexviz.analysis.executions import RunExecutions, build_executions
from dexviz.analysis.failures import RunFailure, run_failure
from dexviz.analysis.sections import SectionReport, measured_sections
from dexviz.history import History
from dexviz.history.output_files import output_file, write_output_text
from dexviz.viz.execution_view import execution_graph
from dexviz.viz.frames import frames
from dexviz.viz.render import GraphvizNotInstalledError
from dexviz.viz.timeline import save_timeline, timeline

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "RunSummary", "run_timeline", "section_overlap_lines", "summarize_run", "write_run_outputs",
]  # fmt: skip


def _jsonable(value: Any) -> Any:
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return value


def _write_graph(run: RunExecutions, folder: Path) -> Path:
    view = execution_graph(run)
    try:
        return view.save(folder / "graph.svg")
    except (GraphvizNotInstalledError, MissingExtraError):
        # Without Graphviz the DOT text still describes the graph; `dot -Tsvg` renders it later.
        return view.save(folder / "graph.dot")


def _write_csv(run: RunExecutions, folder: Path) -> Path:
    table = frames(run).executions.copy()
    for column in ("input", "next", "consumed", "published"):
        table[column] = table[column].map(_jsonable)
    target = folder / "executions.csv"
    with output_file(target) as temporary:
        table.to_csv(temporary, index=False, lineterminator="\n")
    return target


def run_timeline(run: RunExecutions, channel: str | None = None) -> Figure:
    """The timeline the CLI draws: by branch with the token lane, by Step type without one."""
    return timeline(run, channel=channel, group_by="branch" if channel else "step_type")


def write_run_outputs(
    history: History, out_dir: str | PathLike[str], *, channel: str | None = None
) -> dict[str, Path]:
    """Write a run's files into ``out_dir`` (created if needed) and return them by name.

    Args:
        history: The Flow's history (its last run is drawn; all of it is saved).
        out_dir: The folder to write into.
        channel: A token Channel: adds holding lanes to the timeline and writes
            ``exclusive-sections.txt``.

    Returns:
        ``{"history": ..., "graph": ..., "timeline": ..., "executions": ...}`` plus
        ``"exclusive"`` when ``channel`` is given.

    Each file is written whole or not at all (see :mod:`dexviz.history.output_files`).

    Raises:
        MissingExtraError: matplotlib or pandas is missing (``pip install "dexviz[all]"``).
        ValueError: an empty history, or a ``channel`` the Flow does not declare.
        OutputWriteError: a file could not be written (the error names it).
    """
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    run = build_executions(history)
    written = {"history": history.save(folder / "history.jsonl")}
    written["graph"] = _write_graph(run, folder)
    written["timeline"] = save_timeline(run_timeline(run, channel), folder / "timeline.svg")
    written["executions"] = _write_csv(run, folder)
    if channel is not None:
        report = exclusive_sections(run, channel)
        lines = [str(report), *section_overlap_lines(report, measured_sections(run, channel))]
        written["exclusive"] = write_output_text(folder / "exclusive-sections.txt",
                                                 "\n".join(lines) + "\n")
    return written


@dataclass(frozen=True)
class RunSummary:
    """What the CLI prints about a run: status, counts, why it failed, the section verdict."""

    flow_type: str
    run_id: str
    status: str
    events: int
    executions: int
    duration_s: float
    report: ExclusiveReport | None
    failure: RunFailure | None = None
    max_rows: int | None = None
    """At most this many rows per table of the section report (None: all of them)."""
    clock: str = "virtual"
    """Which clock the duration was measured on: ``virtual`` (simulation) or ``wall clock``."""
    sections: SectionReport | None = None
    """The sections the explorer's ``exclusive`` check measures (with a token Channel)."""

    @property
    def ok(self) -> bool:
        """False when two holdings, or two measured sections, of the token Channel overlap."""
        holdings_ok = self.report is None or self.report.ok
        return holdings_ok and (self.sections is None or not self.sections.overlaps)

    def __str__(self) -> str:
        lines = [f"{self.flow_type} run {self.run_id}: {self.status} after {self.duration_s:.3f} s"
                 f" ({self.clock}), {self.executions} executions, {self.events} events"]
        if self.failure is not None:
            lines.append(f"  why: {self.failure.describe()}")
        if self.report is not None:
            lines.append(self.report.describe(self.max_rows))
            if self.sections is not None:
                lines.extend(section_overlap_lines(self.report, self.sections, self.max_rows))
        return "\n".join(lines)


def section_overlap_lines(report: ExclusiveReport, sections: SectionReport,
                          max_rows: int | None = None) -> list[str]:
    """The overlaps of measured sections the holdings do not show (a token given back early).

    At most ``max_rows`` of them (a last line says how many were left out); None: all.
    """
    shown = {o.execution_ids for o in report.overlaps}
    start = report.start_ns
    lines = [
        f"  SECTIONS OVERLAP {o.first.holder} and {o.second.holder}: both inside from "
        f"{(o.start_ns - start) / 1e9:.3f} s to {(o.end_ns - start) / 1e9:.3f} s "
        "(a chain still worked after giving the token back)"
        for o in sections.overlaps if (o.first.holder, o.second.holder) not in shown
    ]
    if max_rows is not None and len(lines) > max_rows:
        lines = [*lines[:max_rows], f"  ... and {len(lines) - max_rows} more not shown"]
    return lines


def summarize_run(
    history: History, *, channel: str | None = None, max_rows: int | None = None
) -> RunSummary:
    """Summarise the history's last run (with the exclusive-section report for ``channel``).

    With ``channel`` the summary also measures the sections the explorer's ``exclusive`` check
    measures, and names the overlaps of sections that the holdings alone do not show.

    ``max_rows`` bounds the rows of each table of the section report when the summary is
    printed (a note says how many were left out); ``exclusive-sections.txt`` always has them all.
    """
    run = build_executions(history)
    start = history.start
    live = start is not None and start.payload.get("mode") == "live"
    return RunSummary(
        run.flow_type or run.flow_id, run.run_id, run.close.status if run.close else "RUNNING",
        len(run.events), len(run), (run.end_ns - run.start_ns) / 1e9,
        exclusive_sections(run, channel) if channel else None,
        run_failure(run), max_rows, "wall clock" if live else "virtual",
        measured_sections(run, channel) if channel else None,
    )
