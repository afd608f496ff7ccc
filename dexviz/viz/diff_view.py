"""RunDiff: a run comparison with its views — side-by-side timeline, difference table, frames.

The timeline draws both runs on one time axis (seconds since each run's start): one row per
aligned execution pair, run a's bar above run b's, the pairs that differ in red. It is plain
SVG inside HTML, so it needs no optional package; ``frames()`` needs pandas.
"""

from __future__ import annotations

import html
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dexviz._optional import require
from dexviz.analysis._diff_compare import changed_parts
from dexviz.analysis._diff_fold import ExecutionTrace, RunTrace
from dexviz.analysis.run_diff import Difference, RunComparison
from dexviz.history.output_files import write_output_text

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MAX_ROWS", "RunDiff"]

MAX_ROWS = 120
"""The most execution pairs the timeline draws (the differing ones come first past that)."""

_ROW, _BAR, _LEFT, _WIDTH = 26, 9, 230, 640
_A_COLOR, _B_COLOR, _DIFF_COLOR = "#265c86", "#0f7c86", "#d62728"


@dataclass(frozen=True)
class RunDiff:
    """Two runs aligned by Step execution lineage, what differs, and how to look at it.

    ``bool(diff)`` is True when the runs differ; ``first`` is the first divergence (None when
    they do not differ); ``differences`` lists every difference grouped by execution.
    ``aligned_event(i)`` gives, for event index ``i`` of run a, the aligned event index of run
    b (what a two-sided debugger cursor follows).
    """

    comparison: RunComparison

    @property
    def first(self) -> Difference | None:
        """The first divergence, or None when the runs do not differ."""
        return self.comparison.first

    @property
    def differences(self) -> tuple[Difference, ...]:
        """Every difference, grouped by execution, the groups in the order they first show."""
        return self.comparison.differences

    @property
    def pairs(self) -> tuple[tuple[str | None, str | None], ...]:
        """Every aligned execution pair (None for the side that lacks one)."""
        return self.comparison.pairs

    @property
    def aligned(self) -> Mapping[str, str]:
        """Execution id on run a -> the aligned execution id on run b."""
        return self.comparison.aligned

    @property
    def event_map(self) -> tuple[int | None, ...]:
        """For each event index of run a, the aligned event index of run b (or None)."""
        return self.comparison.event_map

    def aligned_event(self, index_a: int) -> int | None:
        """The event index on run b aligned with ``index_a`` of run a (or the nearest before)."""
        return self.comparison.aligned_event(index_a)

    def by_execution(self) -> dict[tuple[str | None, str | None], tuple[Difference, ...]]:
        """The differences per execution pair."""
        return self.comparison.by_execution()

    def __bool__(self) -> bool:
        """True when the runs differ."""
        return bool(self.comparison)

    def __len__(self) -> int:
        """The number of differences."""
        return len(self.comparison.differences)

    def summary(self, limit: int = 20) -> str:
        """The text summary: a verdict, the first divergence, then at most ``limit`` lines."""
        return "\n".join(self.comparison.summary(limit))

    def __repr__(self) -> str:
        first = self.first
        where = f", first={first.where()} {first.aspect}" if first else ""
        return f"RunDiff(differences={len(self)}{where})"

    def frames(self) -> pd.DataFrame:
        """One row per difference (pandas): aspect, executions, method, seqs, both values."""
        pandas = require("pandas", "table")
        rows = [_difference_row(d) for d in self.differences]
        columns = ["aspect", "execution_a", "execution_b", "step_type", "method", "seq_a",
                   "seq_b", "a", "b"]
        frame = pandas.DataFrame(rows, columns=columns)
        frame["aspect"] = frame["aspect"].astype("category")
        for name in ("seq_a", "seq_b"):
            frame[name] = frame[name].astype("Int64")
        return frame

    def _repr_html_(self) -> str:
        """The side-by-side timeline and the table of differences."""
        return diff_html(self.comparison)

    def to_html(self, path: str | Path) -> Path:
        """Write a self-contained HTML page of the comparison to ``path``; return the path."""
        body = diff_html(self.comparison)
        return write_output_text(
            path,
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>dexviz diff</title>"
            f"</head><body style=\"font-family:sans-serif\">{body}</body></html>\n",
        )


def _difference_row(difference: Difference) -> dict[str, Any]:
    a, b = changed_parts(difference.a, difference.b)
    return {"aspect": str(difference.aspect), "execution_a": difference.execution_a,
            "execution_b": difference.execution_b, "step_type": difference.step_type,
            "method": difference.method, "seq_a": difference.seq_a,
            "seq_b": difference.seq_b, "a": a, "b": b}


# ---------------------------------------------------------------------------- HTML


def diff_html(comparison: RunComparison) -> str:
    """The HTML of a comparison: a heading, the side-by-side timeline, the differences."""
    lines = [line for line in comparison.summary(0) if not line.startswith("  ... and ")]
    heading = (f"<p><b>{html.escape(lines[0])}</b><br>"
               f"{'<br>'.join(html.escape(line) for line in lines[1:])}</p>")
    return (f"<div class=\"dexviz-diff\">{heading}{timeline_svg(comparison)}"
            f"{_table(comparison)}</div>")


def _shown_pairs(comparison: RunComparison) -> list[tuple[str | None, str | None]]:
    differing = {key for key in comparison.by_execution()}
    pairs = list(comparison.pairs)
    if len(pairs) <= MAX_ROWS:
        return pairs
    first = [p for p in pairs if p in differing][:MAX_ROWS]
    rest = [p for p in pairs if p not in differing][: MAX_ROWS - len(first)]
    kept = set(first) | set(rest)
    return [p for p in pairs if p in kept]


def timeline_svg(comparison: RunComparison) -> str:
    """Both runs on one time axis, one row per execution pair, differing pairs in red."""
    a, b = comparison.a, comparison.b
    pairs = _shown_pairs(comparison)
    differing = set(comparison.by_execution())
    span = max(_end(a) - a.start_ns, _end(b) - b.start_ns, 1)
    height = 34 + _ROW * len(pairs)
    parts = [f"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{_LEFT + _WIDTH + 20}\" "
             f"height=\"{height + 10}\" font-size=\"11\" font-family=\"sans-serif\">",
             f"<text x=\"4\" y=\"14\" fill=\"{_A_COLOR}\">upper bar: run a</text>",
             f"<text x=\"110\" y=\"14\" fill=\"{_B_COLOR}\">lower bar: run b</text>",
             *_axis(span, height)]
    for row, pair in enumerate(pairs):
        parts.extend(_row(comparison, pair, row, span, pair in differing))
    if len(pairs) < len(comparison.pairs):
        parts.append(f"<text x=\"4\" y=\"{height + 8}\">{len(comparison.pairs) - len(pairs)} "
                     "more execution pairs not drawn</text>")
    parts.append("</svg>")
    return "".join(parts)


def _end(run: RunTrace) -> int:
    return run.events[-1].time_ns if run.events else run.start_ns


def _axis(span: int, height: int) -> Iterator[str]:
    for tick in range(5):
        x = _LEFT + _WIDTH * tick / 4
        label = span * tick / 4 / 1e9
        yield (f"<line x1=\"{x:.1f}\" y1=\"22\" x2=\"{x:.1f}\" y2=\"{height}\" "
               f"stroke=\"#ddd\"/><text x=\"{x:.1f}\" y=\"{height + 8}\" "
               f"text-anchor=\"middle\">{label:.3g} s</text>")


def _row(comparison: RunComparison, pair: tuple[str | None, str | None], row: int,
         span: int, differs: bool) -> Iterator[str]:
    top = 26 + row * _ROW
    left, right = pair
    label = left if right is None or left == right else right if left is None \
        else f"{left} ~ {right}"
    color = _DIFF_COLOR if differs else "#333"
    yield (f"<text x=\"4\" y=\"{top + 13}\" fill=\"{color}\">"
           f"{html.escape(str(label))}</text>")
    for offset, run, execution_id, ink in ((0, comparison.a, left, _A_COLOR),
                                           (_BAR + 1, comparison.b, right, _B_COLOR)):
        if execution_id is None:
            continue
        start, end = _interval(run, run.executions[execution_id])
        x = _LEFT + _WIDTH * start / span
        width = max(_WIDTH * (end - start) / span, 2)
        stroke = f" stroke=\"{_DIFF_COLOR}\" stroke-width=\"2\"" if differs else ""
        yield (f"<rect x=\"{x:.1f}\" y=\"{top + offset + 2}\" width=\"{width:.1f}\" "
               f"height=\"{_BAR}\" fill=\"{ink}\"{stroke}><title>"
               f"{html.escape(execution_id)}: {start / 1e9:.3f} s .. {end / 1e9:.3f} s"
               "</title></rect>")


def _interval(run: RunTrace, trace: ExecutionTrace) -> tuple[int, int]:
    ends = [c.time_ns for c in (trace.wait_for, trace.execute) if c is not None]
    # A failed method or a cancellation ends the bar where it happened, not at the run's end.
    for seq in [failure[0] for failure in trace.failures[-1:]] + (
            [trace.canceled[0]] if trace.canceled is not None else []):
        ends.append(run.events[_index_of(run, seq)].time_ns)
    end = max(ends) if ends else _end(run)
    return trace.created_ns - run.start_ns, end - run.start_ns


def _index_of(run: RunTrace, seq: int) -> int:
    return min(max(seq - run.events[0].seq, 0), len(run.events) - 1)


def _table(comparison: RunComparison, limit: int = 200) -> str:
    if not comparison.differences:
        return "<p>No differences.</p>"
    head = "".join(f"<th>{name}</th>" for name in
                   ("#a", "#b", "execution", "method", "what", "run a", "run b"))
    rows = []
    for difference in comparison.differences[:limit]:
        a, b = changed_parts(difference.a, difference.b)
        cells = (difference.seq_a, difference.seq_b, difference.where(),
                 difference.method or "", difference.aspect, a, b)
        rows.append("<tr>" + "".join(
            f"<td>{html.escape(_cell(value))}</td>" for value in cells) + "</tr>")
    more = len(comparison.differences) - limit
    tail = f"<p>... and {more} more differences</p>" if more > 0 else ""
    return (f"<table border=\"1\" style=\"border-collapse:collapse;font-size:12px\">"
            f"<tr>{head}</tr>{''.join(rows)}</table>{tail}")


def _cell(value: Any, limit: int = 160) -> str:
    text = "" if value is None else value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
