"""The lineage graph model of a run: one node per Step execution, as Dex Web's execution graph.

Dex Web's rules (spec: dex-visualization-anchor §1.3-1.4): one node per execution with the status
of its latest step-method event (Canceled sticky), an edge from ``from_execution_id`` to each
execution, source nodes for the Flow start (``__start__``) and RPCs (``__rpc/<name>``), and a
parent missing from the run falls back to the Flow start. Added here, as Dex Web lacks them:
message edges from the commit that published a message to the wait that consumed it, a Flow-end
node with the decision that closed the run, and siblings of one Step type collapsed into one node
(``EnterContractEdit ×8``) with a status histogram. Renderers take only this model.
"""

from __future__ import annotations

from collections import Counter

from dexviz.analysis._lineage_build import LineageBuilder
from dexviz.analysis.executions import Execution, RunSource, as_run
from dexviz.analysis.lineage_records import (
    STATUS_ORDER,
    LineageEdge,
    LineageGraph,
    LineageNode,
    StepTypeStats,
    group_status,
)

__all__ = [
    "STATUS_ORDER",
    "LineageEdge",
    "LineageGraph",
    "LineageNode",
    "StepTypeStats",
    "group_status",
    "lineage_graph",
    "step_type_stats",
]


def lineage_graph(
    source: RunSource,
    *,
    collapse_at: int | None = 3,
    messages: bool = True,
    run_id: str | None = None,
) -> LineageGraph:
    """Build the lineage graph model of one run.

    Args:
        source: A History (its last run, or ``run_id``) or a run's RunExecutions.
        collapse_at: Collapse siblings of one Step type (same parent node) into one node when
            there are at least this many; None never collapses.
        messages: Whether to add publish -> consume message edges.
        run_id: The run to read when ``source`` is a History.

    Raises:
        ValueError: ``collapse_at`` is below 2.
    """
    if collapse_at is not None and collapse_at < 2:
        raise ValueError(f"collapse_at must be at least 2 (or None), got {collapse_at}")
    run = as_run(source, run_id)
    nodes, edges = LineageBuilder(run, collapse_at, messages).build()
    return LineageGraph(run.flow_id, run.flow_type, run.run_id, nodes, edges,
                        run.close.status if run.close else None)


def step_type_stats(source: RunSource, *, run_id: str | None = None) -> dict[str, StepTypeStats]:
    """Per Step type of one run: execution count, status histogram, attempts, Execute time."""
    run = as_run(source, run_id)
    by_type: dict[str, list[Execution]] = {}
    for execution in run.values():
        by_type.setdefault(execution.step_type, []).append(execution)
    stats: dict[str, StepTypeStats] = {}
    for step_type, members in by_type.items():
        counts = Counter(str(e.status) for e in members)
        attempts = [a for e in members for a in e.attempts]
        execute_ns = sum((a.end_ns if a.end_ns is not None else run.end_ns) - a.start_ns
                         for a in attempts if a.method == "execute")
        stats[step_type] = StepTypeStats(
            step_type, len(members), tuple((str(s), counts[s]) for s in STATUS_ORDER if counts[s]),
            group_status(counts), len(attempts), sum(e.failed_attempts for e in members),
            execute_ns / 1e9,
        )
    return stats
