"""The timeline's token lanes: each holding of a token Channel inside its measured section.

A holder's row shows its holding (a solid bar: from taking the token until publishing it back).
Where the section the explorer's ``exclusive`` check measures lasts longer (the chain's last
Step finished after the release, or is still running), a dashed box around the bar shows the
whole section; a section that ends at its release is its holding, and gets no box (one artist
per holding keeps large runs fast). Where two sections overlap the rows get a red hatch, or a
red line when they overlap at one instant; the title line states the overlap from the history.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from dexviz.analysis.exclusive import ExclusiveReport, Holding
from dexviz.analysis.sections import Section, SectionReport
from dexviz.history._plural import plural
from dexviz.viz._timeline_lanes import INSTANT_TOKEN, SECTION_FILL
from dexviz.viz.palette import OVERLAP_COLOR, TOKEN_COLOR

if TYPE_CHECKING:
    from matplotlib.axes import Axes

SMALL_PT = 7.5
"""The smallest text of the figure (lane labels, legend, bar captions), in points."""
# The average advance of a caption character at SMALL_PT (DejaVu Sans is ~0.6 em wide).
_CAPTION_CHAR_PT = 4.5


class Scale:
    """Converts engine ns to seconds since the run's start and estimates bar widths in points."""

    def __init__(self, start_ns: int, end_ns: int, width_in: float) -> None:
        self.start_ns = start_ns
        # A run where everything happened at t=0 still gets a readable 0..1 s axis.
        self.end_s = (end_ns - start_ns) / 1e9 or 1.0
        self.points_per_s = (width_in * 72) / (self.end_s * 1.03)  # the x axis spans 1.03x

    def s(self, time_ns: int) -> float:
        """Seconds since the run's start."""
        return (time_ns - self.start_ns) / 1e9


def pack_rows(sections: Sequence[Section]) -> list[list[Section]]:
    """Pack sections into as few rows as possible, none overlapping within a row.

    Sections that never overlap fit in one row; each overlap forces another row.
    """
    rows: list[list[Section]] = []
    for section in sorted(sections, key=lambda s: (s.start_ns, s.start_seq)):
        start = (section.start_ns, section.start_seq)
        for row in rows:
            last = row[-1]
            if (last.end_ns, last.end_seq) <= start:
                row.append(section)
                break
        else:
            rows.append([section])
    return rows


def verdict(sections: SectionReport, scale: Scale) -> str:
    """``no two holders overlap`` or ``2 holders overlap at t=2.000 s``, from the sections."""
    if not sections.overlaps:
        return "no two holders overlap"
    first = min(o.start_ns for o in sections.overlaps)
    text = f"{len(sections.holders)} holders overlap"
    pairs = len(sections.overlaps)
    if pairs > 1:
        text += f" ({plural(pairs, 'pair')}), first"
    return f"{text} at t={scale.s(first):.3f} s"


def holding_texts(holdings: Sequence[Holding], scale: Scale) -> dict[str, str]:
    """Bar captions naming the holder: its full id (``EnterContractEdit-7``) where it fits.

    A narrower bar gets the Step type's capitals and the number (``ECE-7``; the title then
    spells the abbreviation out), then only the number; a bar too narrow for any is left
    blank rather than overprinted.
    """
    def fits(text: str, holding: Holding) -> bool:
        return len(text) * _CAPTION_CHAR_PT + 2 <= holding.duration_ns / 1e9 * scale.points_per_s

    texts = {}
    for holding in holdings:
        step_type, _, number = holding.holder.rpartition("-")
        for text in (holding.holder, f"{_initials(step_type)}-{number}", number):
            if fits(text, holding):
                texts[holding.holder] = text
                break
    return texts


def _initials(step_type: str) -> str:
    return "".join(c for c in step_type if c.isupper()) or step_type[:3]


def abbreviations(holdings: Sequence[Holding], scale: Scale) -> str:
    """`` · ECE = EnterContractEdit`` for each Step type a bar caption shortens, or ""."""
    shortened = {}
    for holder, text in holding_texts(holdings, scale).items():
        step_type = holder.rpartition("-")[0]
        if text != holder and step_type and text.startswith(f"{_initials(step_type)}-"):
            shortened[_initials(step_type)] = step_type
    return "".join(f" · {short} = {full}" for short, full in sorted(shortened.items()))


def draw_tokens(ax: Axes, report: ExclusiveReport, rows: Sequence[Sequence[Section]],
                overlaps: SectionReport, scale: Scale) -> None:
    """Draw each row's sections and holdings, then the overlaps of sections across rows."""
    row_of: dict[str, int] = {}
    texts = holding_texts(report.intervals, scale)
    for y, row in enumerate(rows):
        for section in row:
            row_of[section.holder] = y
            if section.outlasts_holding:
                _draw_section(ax, report.channel, section, y, scale)
            _draw_holding(ax, section.holding, y, texts.get(section.holder), scale)
    for overlap in overlaps.overlaps:
        ys = [row_of[overlap.first.holder], row_of[overlap.second.holder]]
        low, span = min(ys) - 0.45, max(ys) - min(ys) + 0.9
        gid = f"overlap:{overlap.first.holder}:{overlap.second.holder}"
        start, width = scale.s(overlap.start_ns), (overlap.end_ns - overlap.start_ns) / 1e9
        ax.broken_barh([(start, width)], (low, span), facecolors=OVERLAP_COLOR, alpha=0.45,
                       hatch="xx", edgecolors=OVERLAP_COLOR, zorder=6, gid=gid)
        if overlap.end_ns == overlap.start_ns:
            # Both inside at one instant (virtual time did not move): a bar would be invisible.
            ax.vlines([start], low, low + span, colors=OVERLAP_COLOR, linewidths=2.5, zorder=8,
                      gid=f"instant:{gid}")


def _draw_section(ax: Axes, channel: str, section: Section, y: int, scale: Scale) -> None:
    start, end = scale.s(section.start_ns), scale.s(section.end_ns)
    ax.broken_barh([(start, end - start)], (y - 0.45, 0.9), facecolors=SECTION_FILL,
                   edgecolors=TOKEN_COLOR, linewidths=0.8, linestyles="--", zorder=2,
                   gid=f"section:{channel}:{section.holder}")
    if section.inside:
        ax.scatter([end], [y], marker=">", s=30, color=TOKEN_COLOR, zorder=7,
                   gid=f"inside:{channel}:{section.holder}")


def _draw_holding(ax: Axes, holding: Holding, y: int, text: str | None, scale: Scale) -> None:
    start = scale.s(holding.start_ns)
    ax.broken_barh([(start, holding.duration_ns / 1e9)], (y - 0.35, 0.7),
                   facecolors=TOKEN_COLOR, edgecolors="white", linewidths=0.8,
                   gid=f"holding:{holding.channel}:{holding.holder}", zorder=3)
    if holding.duration_ns == 0:
        ax.scatter([start], [y], marker="D", s=28, color=INSTANT_TOKEN, edgecolors="white",
                   linewidths=0.8, zorder=7, gid=f"instant:holding:{holding.holder}")
    if text is not None:
        ax.text(start + holding.duration_ns / 2e9, y, text, ha="center", va="center",
                fontsize=SMALL_PT, color="white", zorder=7)
