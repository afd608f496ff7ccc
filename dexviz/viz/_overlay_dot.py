"""The definition graph with a run overlaid: each Step card shows its executions and statuses.

The picture is the definition graph's own DOT (``definition_dot``) with every Step card
statement replaced by the same card (``card_rows``) plus overlay rows: the execution count, a
status histogram bar, attempts and Execute time, and a border in the Step's precedence status
colour (dashed grey for Steps the run never executed). Ports are kept, so edges attach as before.
"""

from __future__ import annotations

from dexviz.analysis.definition import FlowDefinitionGraph, analyze_flow
from dexviz.analysis.definition.model import Node
from dexviz.analysis.executions import RunExecutions
from dexviz.analysis.lineage import StepTypeStats, step_type_stats
from dexviz.analysis.sources import recorded_source
from dexviz.history._plural import plural
from dexviz.viz.definition_dot import DefinitionDotOptions, definition_dot
from dexviz.viz.definition_theme import card_rows
from dexviz.viz.dot import AttrValue, cell, font, format_attrs, quote, row, table
from dexviz.viz.palette import STATUS_COLORS
from dexviz.viz.render import GraphView

__all__ = ["DefinitionOverlayView", "overlay_dot"]

_MUTED = "#64748b"
_BAR = 190


def _bar(stats: StepTypeStats) -> str:
    cells = [cell("", {"BGCOLOR": STATUS_COLORS[s][0], "HEIGHT": 8, "FIXEDSIZE": "TRUE",
                       "WIDTH": max(4, _BAR * n // stats.count)}) for s, n in stats.statuses]
    inner = table([row(*cells)], {"BORDER": 0, "CELLSPACING": 1, "CELLPADDING": 0})
    return row(cell(inner.markup, {"ALIGN": "LEFT"}))


def _overlay_rows(stats: StepTypeStats | None, run_id: str) -> list[str]:
    left = {"ALIGN": "LEFT", "BALIGN": "LEFT", "BGCOLOR": "#f8fafc"}
    if stats is None:
        return [row(cell(font(f"not executed in run {run_id}", size=9, color=_MUTED,
                              italic=True), left))]
    histogram = " · ".join(f"{n} {s}" for s, n in stats.statuses)
    head = font(f"▣ {plural(stats.count, 'execution')}", bold=True, size=10,
                color=STATUS_COLORS[stats.status][0])
    rows = [row(cell(head + font(f"  {histogram}", size=9, color=_MUTED), left)), _bar(stats)]
    detail = plural(stats.attempts, "attempt")
    if stats.failed_attempts:
        detail += f", {stats.failed_attempts} failed"
    detail += f" · Execute {stats.execute_s:.1f} s in total"
    rows.append(row(cell(font(detail, size=9, color=_MUTED), left)))
    return rows


def _card_statement(model: FlowDefinitionGraph, step: Node, stats: StepTypeStats | None,
                    run_id: str, options: DefinitionDotOptions) -> str:
    rows, _ = card_rows(model, step, compact=options.collapse)
    color = STATUS_COLORS[stats.status][0] if stats else "#94a3b8"
    label = table(rows + _overlay_rows(stats, run_id), {
        "BORDER": 2, "CELLBORDER": 0, "CELLSPACING": 0, "CELLPADDING": 5,
        "STYLE": "rounded" if stats else "rounded,dashed", "COLOR": color, "BGCOLOR": "#ffffff",
    })
    status = stats.status.lower() if stats else "not-run"
    attrs: dict[str, AttrValue] = {
        "id": step.id, "class": f"step overlay {status}", "shape": "plain", "label": label,
        "tooltip": f"{step.name}: {plural(stats.count if stats else 0, 'execution')}",
    }
    return f"  {quote(step.id)}{format_attrs(attrs)};"


def overlay_dot(model: FlowDefinitionGraph, run: RunExecutions,
                options: DefinitionDotOptions | None = None) -> str:
    """The definition graph's DOT with ``run``'s per-Step statistics on every Step card.

    Raises:
        RuntimeError: the definition DOT no longer has one statement per Step card (a change
            in ``definition_dot`` this overlay must follow).
    """
    options = options or DefinitionDotOptions()
    stats = step_type_stats(run)
    lines = definition_dot(model, options).split("\n")
    for step in model.steps:
        prefix = f"  {quote(step.id)} ["
        index = next((i for i, line in enumerate(lines) if line.startswith(prefix)), None)
        if index is None:
            raise RuntimeError(f"the definition DOT has no card statement for {step.id!r}")
        lines[index] = _card_statement(model, step, stats.get(step.name), run.run_id, options)
    return "\n".join(lines)


class DefinitionOverlayView(GraphView):
    """The definition graph of a Flow with one run's execution counts and statuses overlaid.

    Attributes:
        model: The Flow's definition graph.
        run: The run whose executions are overlaid.
        options: How the definition graph is drawn.
    """

    def __init__(self, model: FlowDefinitionGraph, run: RunExecutions,
                 options: DefinitionDotOptions | None = None) -> None:
        self.model = model
        self.run = run
        self.options = options or DefinitionDotOptions()

    @classmethod
    def for_run(
        cls, run: RunExecutions, source: object | None = None
    ) -> DefinitionOverlayView | None:
        """Analyse ``source`` (default: the source file recorded in the run) and overlay ``run``.

        Returns None when no source is given and none is recorded (or it no longer exists).
        """
        chosen = source if source is not None else recorded_source(run.spec)
        if chosen is None:
            return None
        qualname = run.spec.get("qualname")
        flow = qualname.rsplit(".", 1)[-1] if isinstance(qualname, str) and qualname else None
        return cls(analyze_flow(chosen, flow), run)

    def to_dot(self) -> str:
        """The picture as deterministic DOT text."""
        return overlay_dot(self.model, self.run, self.options)

    def __repr__(self) -> str:
        return (f"DefinitionOverlayView(flow={self.model.flow_name!r}, run_id={self.run.run_id!r},"
                f" steps={len(self.model.steps)}, executions={len(self.run)})")
