"""Concurrency: how many executions were active over a run, and the maximum.

Two measures: ``"running"`` counts method attempts in progress (WaitFor or Execute handlers
actually running: the parallelism of work), ``"active"`` counts executions alive in Dex's sense
(R31: from creation until the Execute commits, the execution fails terminally or is canceled,
waiting included). Changes are counted in event order, so attempts that start and end at the same
virtual instant one after another never add up.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from dexviz.analysis.executions import RunExecutions, RunSource, as_run
from dexviz.history import EventKind

__all__ = ["ConcurrencyProfile", "concurrency"]

Mode = Literal["running", "active"]


@dataclass(frozen=True)
class ConcurrencyProfile:
    """Active executions over time for one run.

    Attributes:
        mode: ``"running"`` (attempts in progress) or ``"active"`` (alive executions).
        start_ns: The run's start, for seconds.
        end_ns: The run's end (close, or last event).
        points: ``(time_ns, count)`` after each change, in event order; a step function.
        maximum: The largest count reached.
        maximum_at_ns: When it was first reached.
        maximum_ids: The executions counted at that moment.
    """

    mode: str
    start_ns: int
    end_ns: int
    points: tuple[tuple[int, int], ...]
    maximum: int
    maximum_at_ns: int
    maximum_ids: tuple[str, ...]

    def __repr__(self) -> str:
        at = (self.maximum_at_ns - self.start_ns) / 1e9
        return (f"ConcurrencyProfile(mode={self.mode!r}, maximum={self.maximum}, "
                f"at_s={at:.3f}, changes={len(self.points)})")

    def series(self) -> tuple[tuple[float, int], ...]:
        """The step function as ``(seconds since start, count)``, one point per instant.

        When several changes happen at one instant, the count after the last one is kept.
        """
        by_time: dict[int, int] = {}
        for time_ns, count in self.points:
            by_time[time_ns] = count
        return tuple(((t - self.start_ns) / 1e9, c) for t, c in by_time.items())

    def time_at_least(self, count: int) -> float:
        """Seconds during which at least ``count`` executions were counted."""
        total = 0
        for (t0, c), (t1, _) in zip(self.points, self.points[1:] + ((self.end_ns, 0),),
                                    strict=True):
            if c >= count:
                total += t1 - t0
        return total / 1e9


_ATTEMPT_ENDS = frozenset(
    str(k)
    for k in (
        EventKind.ATTEMPT_FAILED,
        EventKind.STEP_WAIT_FOR_COMPLETED,
        EventKind.STEP_WAIT_FOR_FAILED,
        EventKind.STEP_EXECUTE_COMPLETED,
        EventKind.STEP_EXECUTE_FAILED,
        EventKind.STEP_WAIT_FOR_PENDING,
        EventKind.STEP_EXECUTE_PENDING,
        EventKind.EXECUTION_CANCELED,
    )
)


def _running_changes(run: RunExecutions) -> Iterator[tuple[int, int, int, str]]:
    running: set[str] = set()
    for event in run.events:
        kind, execution_id = str(event.kind), event.execution_id
        if kind == EventKind.ATTEMPT_STARTED and execution_id and execution_id not in running:
            running.add(execution_id)
            yield event.time_ns, event.seq, +1, execution_id
        elif kind in _ATTEMPT_ENDS and execution_id in running:
            running.discard(execution_id)
            yield event.time_ns, event.seq, -1, execution_id
        elif kind == EventKind.FLOW_CLOSED:
            for left in sorted(running):
                yield event.time_ns, event.seq, -1, left
            running.clear()


def _active_changes(run: RunExecutions) -> Iterator[tuple[int, int, int, str]]:
    for execution in run.values():
        if execution.created_ns is None or execution.created_seq is None:
            continue
        yield execution.created_ns, execution.created_seq, +1, execution.execution_id
        end_seq = execution.finished_seq
        if end_seq is None:
            end_seq = run.close.seq if run.close else (run.events[-1].seq + 1)
        end_ns = execution.finished_ns if execution.finished_ns is not None else run.end_ns
        yield end_ns, end_seq, -1, execution.execution_id


def concurrency(source: RunSource, *, mode: Mode = "running",
                run_id: str | None = None) -> ConcurrencyProfile:
    """Count active executions over one run and find the maximum.

    Args:
        source: A History (its last run, or ``run_id``) or a run's RunExecutions.
        mode: ``"running"`` counts method attempts in progress; ``"active"`` counts executions
            alive per R31 (waiting included).
        run_id: The run to read when ``source`` is a History.

    Raises:
        ValueError: ``mode`` is not ``"running"`` or ``"active"``.
    """
    run = as_run(source, run_id)
    if mode == "running":
        changes = sorted(_running_changes(run))
    elif mode == "active":
        changes = sorted(_active_changes(run))
    else:
        raise ValueError(f"unknown concurrency mode: {mode!r} (must be 'running' or 'active')")
    live: dict[str, int] = {}
    points: list[tuple[int, int]] = []
    best, best_at = 0, run.start_ns
    best_ids: tuple[str, ...] = ()
    for time_ns, _, delta, execution_id in changes:
        live[execution_id] = live.get(execution_id, 0) + delta
        if live[execution_id] <= 0:
            del live[execution_id]
        count = sum(live.values())
        points.append((time_ns, count))
        if count > best:
            best, best_at, best_ids = count, time_ns, tuple(sorted(live))
    return ConcurrencyProfile(mode, run.start_ns, run.end_ns, tuple(points), best, best_at,
                              best_ids)
