"""The run diff: two runs aligned by Step execution lineage, and every difference between them.

``compare_runs(a, b)`` folds each run once, pairs their executions by lineage (never by event
index or id), and compares each pair: input, the WaitFor's wait, consumed messages, the
decision, its output, publications, Attribute writes, timers, failures, cancellation and
(beyond a tolerance) timing. Differences come grouped by execution, the groups in the order
they first show in run a; ``first`` is the first divergence. ``dexviz.diff`` wraps this with
the views (``dexviz.viz.diff_view``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from dexviz.analysis._diff_compare import (
    METHOD_RESULT_ASPECTS,
    Aspect,
    Comparison,
    Difference,
    PairComparer,
    align,
)
from dexviz.analysis._diff_fold import RunTrace, fold_trace
from dexviz.analysis.executions import select_run
from dexviz.history import Event, History
from dexviz.history.collector import collector_paused

__all__ = [
    "DEFAULT_TOLERANCE_S",
    "METHOD_RESULT_ASPECTS",
    "Aspect",
    "Difference",
    "RunComparison",
    "compare_runs",
    "trace_run",
]

DEFAULT_TOLERANCE_S = 1.0
"""Timing differences up to this many seconds are not reported."""


def trace_run(history: History, run_id: str | None = None) -> RunTrace:
    """Fold one run of ``history`` (default: its last run) for the diff."""
    chosen, events = select_run(history, run_id)
    return fold_trace(chosen, events)


@dataclass(frozen=True)
class RunComparison:
    """Two runs aligned execution by execution, and what differs between them.

    Attributes:
        a: Side a's folded run.
        b: Side b's folded run.
        pairs: Every execution pair ``(id on a, id on b)``; None for a side that lacks it.
        differences: Every difference, grouped by execution; the groups in order of their first
            difference (by side a's seq), so ``differences[0]`` is the first divergence.
    """

    a: RunTrace = field(repr=False)
    b: RunTrace = field(repr=False)
    pairs: tuple[tuple[str | None, str | None], ...] = field(repr=False)
    differences: tuple[Difference, ...]

    @property
    def first(self) -> Difference | None:
        """The first divergence, or None when the runs do not differ."""
        return self.differences[0] if self.differences else None

    def __bool__(self) -> bool:
        """True when the runs differ."""
        return bool(self.differences)

    @property
    def aligned(self) -> Mapping[str, str]:
        """Execution id on side a -> its aligned execution id on side b."""
        return {left: right for left, right in self.pairs if left and right}

    def by_execution(self) -> dict[tuple[str | None, str | None], tuple[Difference, ...]]:
        """The differences per execution pair, in the order of ``differences``."""
        grouped: dict[tuple[str | None, str | None], list[Difference]] = {}
        for difference in self.differences:
            key = (difference.execution_a, difference.execution_b)
            grouped.setdefault(key, []).append(difference)
        return {key: tuple(found) for key, found in grouped.items()}

    @cached_property
    def event_map(self) -> tuple[int | None, ...]:
        """For each event index on side a, the index of the aligned event on side b (or None).

        An event is aligned with the event of the same kind, method and attempt of the aligned
        execution (the n-th such one); an event of no execution (Flow start and close, client
        publishes) with the n-th of its kind. This is what a two-sided cursor follows.
        """
        return _event_map(self.a.events, self.b.events, self.aligned)

    def aligned_event(self, index_a: int) -> int | None:
        """The index on side b aligned with event ``index_a`` of side a, or the nearest before.

        None only when nothing at or before ``index_a`` is aligned.
        """
        mapping = self.event_map
        if not 0 <= index_a < len(mapping):
            raise IndexError(f"side a has {len(mapping)} events; there is no index {index_a}")
        for index in range(index_a, -1, -1):
            found = mapping[index]
            if found is not None:
                return found
        return None

    def summary(self, limit: int = 20) -> list[str]:
        """Text lines: a verdict, the first divergence, then differences by execution."""
        a, b = self.a, self.b
        head = f"a: {a.flow_id} run {a.run_id} ({len(a.events)} events); " \
               f"b: {b.flow_id} run {b.run_id} ({len(b.events)} events)"
        if not self.differences:
            return [head, "no differences: the runs are the same, execution by execution"]
        first = self.differences[0]
        lines = [head, f"{len(self.differences)} difference(s) in "
                       f"{len(self.by_execution())} execution(s)",
                 f"first divergence: {first.describe()}"]
        lines.extend(f"  {d.describe()}" for d in self.differences[:limit])
        if len(self.differences) > limit:
            lines.append(f"  ... and {len(self.differences) - limit} more")
        return lines


def compare_runs(
    a: History,
    b: History,
    *,
    run_a: str | None = None,
    run_b: str | None = None,
    tolerance_s: float | None = DEFAULT_TOLERANCE_S,
    aspects: Iterable[Aspect | str] | None = None,
) -> RunComparison:
    """Align two runs by Step execution lineage and list every difference between them.

    Args:
        a: The first run's history (its last run is compared unless ``run_a`` names one).
        b: The second run's history.
        run_a: The run of ``a`` to compare.
        run_b: The run of ``b`` to compare.
        tolerance_s: Timing differences up to this many seconds are ignored; None ignores
            timing altogether.
        aspects: Compare only these aspects (default: all).

    Raises:
        ValueError: A history is empty or has no such run, or an aspect is unknown.
    """
    chosen = frozenset(Aspect) if aspects is None else frozenset(_aspect(x) for x in aspects)
    if tolerance_s is not None and tolerance_s < 0:
        raise ValueError(f"tolerance_s must be >= 0 or None, got {tolerance_s}")
    tolerance = None if tolerance_s is None else int(tolerance_s * 1e9)
    # The folds allocate many small objects that live on: collecting them midway is waste.
    with collector_paused():
        return compare_traces(trace_run(a, run_a), trace_run(b, run_b),
                              Comparison(chosen, tolerance))


def compare_traces(a: RunTrace, b: RunTrace, comparison: Comparison) -> RunComparison:
    """``compare_runs`` over runs already folded."""
    pairs, mapping = align(a, b)
    comparer = PairComparer(a, b, mapping, comparison)
    _compare_runs_as_a_whole(comparer, a, b)
    for left, right in pairs:
        comparer.pair(left, right)
    return RunComparison(a, b, tuple(pairs), _grouped(comparer.found))


def _aspect(value: Aspect | str) -> Aspect:
    try:
        return Aspect(value)
    except ValueError:
        known = ", ".join(a.value for a in Aspect)
        raise ValueError(f"unknown aspect {value!r} (known: {known})") from None


def _compare_runs_as_a_whole(comparer: PairComparer, a: RunTrace, b: RunTrace) -> None:
    if a.flow_type != b.flow_type:
        comparer.found.append(Difference(Aspect.FLOW, None, None, None, None, 1, 1,
                                         a.flow_type, b.flow_type))
    ca, cb = _close_facts(a), _close_facts(b)
    if ca != cb and Aspect.CLOSE in comparer.comparison.aspects:
        comparer.found.append(Difference(
            Aspect.CLOSE, None, None, None, None,
            a.close.seq if a.close else None, b.close.seq if b.close else None, ca, cb,
        ))


def _close_facts(run: RunTrace) -> dict[str, Any] | None:
    close = run.close
    if close is None:
        return None
    payload = close.payload
    outputs = [(o.get("step_type"), o.get("value")) for o in payload.get("outputs") or ()]
    return {"status": payload.get("status"), "error_type": payload.get("error_type"),
            "error_message": payload.get("error_message"), "outputs": outputs}


def _grouped(found: list[Difference]) -> tuple[Difference, ...]:
    groups: dict[tuple[str | None, str | None], list[Difference]] = {}
    for difference in sorted(found, key=lambda d: d.order):
        groups.setdefault((difference.execution_a, difference.execution_b), []).append(difference)
    return tuple(d for group in groups.values() for d in group)


def _event_key(event: Event, execution_id: str | None) -> tuple[Any, ...]:
    return (execution_id, str(event.kind), event.method, event.attempt)


def _event_map(events_a: tuple[Event, ...], events_b: tuple[Event, ...],
               aligned: Mapping[str, str]) -> tuple[int | None, ...]:
    index_b: dict[tuple[Any, ...], list[int]] = {}
    for index, event in enumerate(events_b):
        index_b.setdefault(_event_key(event, event.execution_id), []).append(index)
    taken: dict[tuple[Any, ...], int] = {}
    mapped: list[int | None] = []
    for event in events_a:
        own = event.execution_id
        key = _event_key(event, aligned.get(own) if own else None)
        if own and own not in aligned:
            mapped.append(None)
            continue
        count = taken.get(key, 0)
        taken[key] = count + 1
        candidates = index_b.get(key, ())
        mapped.append(candidates[count] if count < len(candidates) else None)
    return tuple(mapped)
