"""``explore(strategy="stateful")``: run the breadth-first stateful search and report it."""

from __future__ import annotations

import resource
import sys
from typing import Any

from dexviz.explore.parallel import expander_for
from dexviz.explore.progress import Progress
from dexviz.explore.report import ExplorationReport, StatefulCounts
from dexviz.explore.schedule import Setup, clock
from dexviz.explore.stateful import Frontier, search
from dexviz.explore.violation import Violation, replay

__all__ = ["stateful_report"]

REDUCTIONS = ("seen-set (each distinct state expanded once)",)
"""The reductions the stateful search applies, as the report names them."""


def _stop_reason(frontier: Frontier, max_states: int | None, deadline: float | None) -> str | None:
    if max_states is not None and frontier.distinct >= max_states:
        return "max_schedules"
    if deadline is not None and clock() > deadline:
        return "time_budget"
    return None


def _peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports KiB, macOS bytes.
    return round(peak / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)


def stateful_report(
    setup: Setup, workers: int, cluster: Any, max_states: int | None, deadline: float | None,
    started: float, bar: Progress,
) -> ExplorationReport:
    """Search ``setup``'s states breadth first; the report of what it found."""
    frontier = Frontier()

    def stop(seen: Frontier) -> str | None:
        bar.update(seen.transitions, seen.distinct, 0 if seen.violation is None else 1,
                   seen.merged)
        return _stop_reason(seen, max_states, deadline)

    with expander_for(setup, workers, cluster) as expander:
        stopped = search(expander, frontier, setup.max_depth, stop)
        used = expander.workers
    violations: tuple[Violation, ...] = ()
    if frontier.violation is not None:
        result = replay(setup, frontier.violation)
        violations = (Violation.of(setup, result, len(result.steps), 0),)
    wall = clock() - started
    counts = StatefulCounts(
        frontier.distinct, frontier.transitions, frontier.merged, frontier.depth, used,
        REDUCTIONS, round(frontier.transitions / wall, 1) if wall > 0 else 0.0, _peak_rss_mb(),
    )
    return ExplorationReport(
        "stateful", frontier.transitions, len(frontier.states), 0, stopped is None, wall,
        violations, frozenset(frontier.terminal), tuple(c.name for c in setup.checks), None,
        stopped, frontier.depth_bounded, frontier.graph, frontier.merged, counts,
    )
