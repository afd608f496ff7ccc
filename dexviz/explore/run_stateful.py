"""``explore(strategy="stateful")``: run the breadth-first stateful search and report it."""

from __future__ import annotations

import resource
import sys
from typing import Any

from dexviz.explore.caches import release_caches
from dexviz.explore.parallel import expander_for
from dexviz.explore.progress import Progress
from dexviz.explore.report import ExplorationReport, StatefulCounts
from dexviz.explore.schedule import clock
from dexviz.explore.schedule_records import Setup
from dexviz.explore.search_gc import young_generation
from dexviz.explore.stateful import Frontier, search
from dexviz.explore.violation import Violation, replay

__all__ = ["stateful_report"]

def reductions(setup: Setup) -> tuple[str, ...]:
    """The reductions a stateful search of ``setup`` applies, as the report names them."""
    applied = [
        "seen-set (each distinct state expanded once)",
        "canonical numbering (executions named by lineage, not Type-N)",
    ]
    if setup.symmetry is not None:
        groups = ", ".join(str(len(g)) for g in setup.symmetry.groups)
        applied.append(f"symmetry (declared groups of {groups} values)")
    return tuple(applied)


def _stop_reason(frontier: Frontier, max_states: int | None, deadline: float | None) -> str | None:
    if max_states is not None and frontier.distinct >= max_states:
        return "max_schedules"
    if deadline is not None and clock() > deadline:
        return "time_budget"
    return None


def _peak_rss_mb() -> float:
    """This process's peak resident memory plus the largest worker process's, in MiB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # Linux reports KiB, macOS bytes.
    return round((own + workers) / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)


def stateful_report(
    setup: Setup, workers: int, cluster: Any, max_states: int | None, deadline: float | None,
    started: float, bar: Progress,
) -> ExplorationReport:
    """Search ``setup``'s states breadth first; the report of what it found."""
    try:
        with young_generation():
            return _search_report(setup, workers, cluster, max_states, deadline, started, bar)
    finally:
        # The caches hold the search's snapshots by identity: let them go with the search.
        release_caches()


def _search_report(
    setup: Setup, workers: int, cluster: Any, max_states: int | None, deadline: float | None,
    started: float, bar: Progress,
) -> ExplorationReport:
    frontier = Frontier()

    def stop(seen: Frontier) -> str | None:
        bar.update_states(seen.distinct, seen.transitions, seen.merged, seen.frontier,
                          0 if seen.violation is None else 1)  # fmt: skip
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
        reductions(setup), _rate(frontier.transitions, wall), _peak_rss_mb(),
        tuple(frontier.pruned_by.items()), _rate(frontier.distinct, wall), frontier.frontier,
    )  # fmt: skip
    return ExplorationReport(
        "stateful", frontier.transitions, len(frontier.states), 0, stopped is None, wall,
        violations, frozenset(frontier.terminal), tuple(c.name for c in setup.checks), None,
        stopped, frontier.depth_bounded, frontier.graph, frontier.merged, counts,
    )  # fmt: skip


def _rate(count: int, seconds: float) -> float:
    return round(count / seconds, 1) if seconds > 0 else 0.0
