"""``execution_graph()``: a run's lineage graph, ready to show, save or inspect.

The same rendering API as the definition graph (``to_dot``, ``save``, ``_repr_mimebundle_``).
With the Flow's source known (recorded in the history's start event, or passed in), the view
also offers the definition graph with each Step's execution count and statuses overlaid.
"""

from __future__ import annotations

from dexviz.analysis.executions import RunExecutions, RunSource, as_run
from dexviz.analysis.lineage import LineageGraph, lineage_graph
from dexviz.viz._lineage_dot import lineage_dot, summary_lines
from dexviz.viz.render import GraphView

__all__ = ["ExecutionGraphView", "RANKDIRS", "execution_graph"]

RANKDIRS: tuple[str, ...] = ("TB", "LR", "BT", "RL")
"""Accepted layout directions."""


class ExecutionGraphView(GraphView):
    """The lineage graph of one run: one node per Step execution (or collapsed group).

    Attributes:
        model: The :class:`LineageGraph` (nodes, edges, statuses).
        run: The execution records it was built from.
        rankdir: The layout direction.
        legend: Whether the legend is drawn.
    """

    def __init__(self, model: LineageGraph, run: RunExecutions, *, rankdir: str = "TB",
                 legend: bool = True) -> None:
        if rankdir not in RANKDIRS:
            raise ValueError(f"rankdir must be one of {list(RANKDIRS)}, got {rankdir!r}")
        self.model = model
        self.run = run
        self.rankdir = rankdir
        self.legend = legend

    def to_dot(self) -> str:
        """The picture as deterministic DOT text."""
        return lineage_dot(self.model, rankdir=self.rankdir, legend=self.legend)

    def summary(self) -> str:
        """A plain-text summary: one line per node with its status."""
        return "\n".join(summary_lines(self.model))

    def definition_overlay(self, source: object | None = None) -> GraphView | None:
        """The definition graph with execution counts and statuses per Step, or None.

        Args:
            source: The Flow's source (a path, module or Flow class); by default the
                ``source_file`` recorded in the history, if that file still exists.

        Raises:
            DefinitionSourceError: the source cannot be analysed (names file and line).
        """
        from dexviz.viz._overlay_dot import DefinitionOverlayView

        return DefinitionOverlayView.for_run(self.run, source)

    def __repr__(self) -> str:
        model = self.model
        groups = sum(1 for n in model.nodes if n.kind == "group")
        return (f"ExecutionGraphView(flow={model.flow_type!r}, run_id={model.run_id!r}, "
                f"executions={len(self.run)}, nodes={len(model.nodes)}, groups={groups}, "
                f"edges={len(model.edges)}, status={model.close_status or 'RUNNING'!r})")


def execution_graph(
    source: RunSource,
    *,
    collapse_at: int | None = 3,
    messages: bool = True,
    rankdir: str = "TB",
    legend: bool = True,
    run_id: str | None = None,
) -> ExecutionGraphView:
    """Build the lineage graph view of one run (default: the history's last run).

    Args:
        source: A History (live or loaded with ``History.load``) or a run's RunExecutions.
        collapse_at: Collapse this many or more same-type siblings into one ``Type ×N`` node;
            None draws every execution.
        messages: Draw publish -> consume message edges.
        rankdir: ``"TB"`` (top to bottom) or ``"LR"`` (also ``BT``, ``RL``).
        legend: Draw the legend (every status, Completed included, and the edge kinds).
        run_id: The run to draw when ``source`` is a History.

    Raises:
        ValueError: an empty history, an unknown run, ``collapse_at`` below 2 or a bad rankdir.
    """
    run = as_run(source, run_id)
    model = lineage_graph(run, collapse_at=collapse_at, messages=messages)
    return ExecutionGraphView(model, run, rankdir=rankdir, legend=legend)
