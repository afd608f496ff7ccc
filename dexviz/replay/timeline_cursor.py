"""The run's timeline as SVG with a movable cursor, drawn once per run and history length.

The timeline figure (``dexviz.viz.timeline``) is rendered to SVG once; where its time axis lies
is read from matplotlib's transforms, so moving the cursor only moves an HTML element laid over
the picture instead of drawing the figure again (or resending it to the browser).

The picture fills its panel's width but never shrinks below the width at which its smallest
text is still 9 px (``focus.readable_width``): a narrower panel scrolls sideways instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dexviz.analysis.executions import RunExecutions
from dexviz.replay.focus import readable_width
from dexviz.replay.theme import SELECTED_COLOR

__all__ = ["TimelinePicture", "timeline_picture"]


@dataclass(frozen=True)
class TimelinePicture:
    """A timeline SVG and where its time axis lies, as fractions of the picture.

    The cursor is an HTML element laid over the SVG (``.dx-tl`` is positioned, the SVG fills
    its width), so moving it changes a few characters of CSS, never the SVG.

    Attributes:
        svg: The timeline as SVG text.
        start_ns: Engine time of the run's start (x = 0 s).
        x0: Where 0 s lies, as a fraction of the picture's width.
        per_second: Width fraction per second.
        top: The plot's top edge, as a fraction of the picture's height.
        bottom: The plot's bottom edge, as a fraction of the picture's height.
        min_width: The narrowest CSS width (px) keeping the smallest text at 9 px (None when
            the SVG has no sized text).
    """

    svg: str
    start_ns: int
    x0: float
    per_second: float
    top: float
    bottom: float
    min_width: int | None = None

    def cursor_css(self, time_ns: int) -> str:
        """``left``, ``top`` and ``height`` (in %) of the cursor at ``time_ns``."""
        x = self.x0 + (time_ns - self.start_ns) / 1e9 * self.per_second
        left = min(max(x, 0.0), 1.0) * 100
        return (f"left:{left:.3f}%;top:{self.top * 100:.3f}%;"
                f"height:{(self.bottom - self.top) * 100:.3f}%")

    def selected_css(self, scope: str, execution_id: str | None) -> str:
        """CSS outlining one execution's bars in amber, in the picture under class ``scope``.

        "" when ``execution_id`` is None (the event is about no execution). The bars are the
        SVG groups with ids ``lane:<id>:<style>`` and ``instant:<id>:<style>``; a collapsed
        lane stands for several executions and is not outlined.
        """
        if not execution_id:
            return ""
        quoted = execution_id.replace("\\", "\\\\").replace('"', '\\"')
        groups = ", ".join(f'.dexviz-debugger .{scope} g[id^="{kind}:{quoted}:"]'
                           for kind in ("lane", "instant"))
        return (f"{groups} {{ filter: drop-shadow(0 0 2px {SELECTED_COLOR}) "
                f"drop-shadow(0 0 1px {SELECTED_COLOR}); }}")

    def html(self, cursor: str = "") -> str:
        """The picture inside a positioned box with a cursor element (``cursor`` is its CSS).

        The box is at least ``min_width`` wide, so the cursor's percentages stay on the
        picture when the panel scrolls.
        """
        style = f' style="{cursor}"' if cursor else ""
        box = f' style="min-width:{self.min_width}px"' if self.min_width else ""
        return (f'<div class="dx-tl"{box}>{self.svg}<div class="dx-cursor"{style}></div></div>')


def timeline_picture(run: RunExecutions, channel: str | None = None, width: float = 11.0,
                     executions: Iterable[str] | None = None) -> TimelinePicture:
    """Draw ``run``'s timeline once and locate its time axis in the SVG.

    Args:
        run: The run's execution records.
        channel: A token Channel whose holdings get their own lanes.
        width: Figure width in inches.
        executions: Draw only these executions' lanes (Focus); by default every one.

    Raises:
        MissingExtraError: matplotlib is not installed.
    """
    from dexviz.viz.timeline import timeline, timeline_svg

    figure = timeline(run, channel=channel, width=width, executions=executions)
    svg = timeline_svg(figure)
    ax = figure.axes[0]
    scale = 72.0 / figure.dpi
    height = figure.get_figheight() * 72.0
    (x_zero, _), (x_one, _) = ax.transData.transform([(0.0, 0.0), (1.0, 0.0)])
    box = ax.get_window_extent()
    width = figure.get_figwidth() * 72.0
    svg = svg[svg.index("<svg"):]
    return TimelinePicture(
        svg=svg,
        start_ns=run.start_ns,
        x0=float(x_zero) * scale / width,
        per_second=float(x_one - x_zero) * scale / width,
        top=1.0 - float(box.y1) * scale / height,
        bottom=1.0 - float(box.y0) * scale / height,
        min_width=readable_width(svg),
    )
