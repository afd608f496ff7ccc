"""Time intervals: the segments a timeline draws per execution, and interval overlap helpers.

A segment is one stretch of one execution's life: queued, a WaitFor attempt, the condition wait,
an Execute attempt, a retry backoff. Endpoints are engine times in ns; a segment cut short by a
cancellation or the Flow's close ends there, and one still open in a live history ends at the
run's last event.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from dexviz.analysis.executions import Attempt, AttemptOutcome, Execution, RunExecutions

__all__ = [
    "Segment",
    "SegmentKind",
    "branch_roots",
    "execution_segments",
    "lane_groups",
    "overlap_windows",
    "overlapping_pairs",
    "run_segments",
]


class SegmentKind(enum.StrEnum):
    """What an execution was doing during a segment."""

    QUEUED = "queued"
    WAIT_FOR = "wait_for"
    WAITING = "waiting"
    EXECUTE = "execute"
    BACKOFF = "backoff"


@dataclass(frozen=True)
class Segment:
    """One stretch of one execution: ``kind`` from ``start_ns`` to ``end_ns``.

    ``attempt`` and ``outcome`` are set for method attempts (``wait_for``/``execute``) and for a
    backoff (the attempt it follows); ``outcome`` is an AttemptOutcome value.
    """

    execution_id: str
    step_type: str
    kind: SegmentKind
    start_ns: int
    end_ns: int
    attempt: int | None = None
    outcome: str | None = None

    @property
    def duration_ns(self) -> int:
        """The segment's length in ns."""
        return self.end_ns - self.start_ns


def _attempt_segments(execution: Execution, run_end_ns: int) -> Iterator[Segment]:
    attempts = execution.attempts
    for index, attempt in enumerate(attempts):
        kind = SegmentKind.WAIT_FOR if attempt.method == "wait_for" else SegmentKind.EXECUTE
        end = attempt.end_ns if attempt.end_ns is not None else run_end_ns
        yield Segment(execution.execution_id, execution.step_type, kind, attempt.start_ns, end,
                      attempt.number, str(attempt.outcome))
        backoff = _backoff(execution, attempt, attempts[index + 1:], run_end_ns)
        if backoff is not None:
            yield backoff


def _backoff(
    execution: Execution, attempt: Attempt, later: Sequence[Attempt], run_end_ns: int
) -> Segment | None:
    if attempt.outcome is not AttemptOutcome.FAILED or attempt.final or attempt.end_ns is None:
        return None
    following = next((a for a in later if a.method == attempt.method), None)
    if following is not None:
        end = following.start_ns
    else:
        cut = execution.canceled_ns if execution.canceled_ns is not None else run_end_ns
        end = min(attempt.retry_at_ns, cut) if attempt.retry_at_ns is not None else cut
    if end <= attempt.end_ns:
        return None
    return Segment(execution.execution_id, execution.step_type, SegmentKind.BACKOFF,
                   attempt.end_ns, end, attempt.number, str(attempt.outcome))


def execution_segments(execution: Execution, run_end_ns: int) -> list[Segment]:
    """The segments of one execution, sorted by start time (then kind order).

    Args:
        execution: The execution record.
        run_end_ns: Where open segments end (the Flow close, or the last event of a live run).
    """
    segments = list(_attempt_segments(execution, run_end_ns))
    first_start = min((a.start_ns for a in execution.attempts), default=None)
    if execution.created_ns is not None:
        queued_end = first_start if first_start is not None else (
            execution.finished_ns if execution.finished_ns is not None else run_end_ns
        )
        if queued_end > execution.created_ns:
            segments.append(Segment(execution.execution_id, execution.step_type,
                                    SegmentKind.QUEUED, execution.created_ns, queued_end))
    if execution.wait_start_ns is not None:
        end = execution.wait_end_ns if execution.wait_end_ns is not None else run_end_ns
        segments.append(Segment(execution.execution_id, execution.step_type, SegmentKind.WAITING,
                                execution.wait_start_ns, end))
    order = list(SegmentKind)
    return sorted(segments, key=lambda s: (s.start_ns, order.index(s.kind), s.attempt or 0))


def run_segments(run: RunExecutions) -> list[Segment]:
    """Every segment of every execution of a run, execution by execution in creation order."""
    segments: list[Segment] = []
    for execution in run.values():
        segments.extend(execution_segments(execution, run.end_ns))
    return segments


def overlapping_pairs(
    intervals: Iterable[tuple[tuple[int, int], tuple[int, int]]],
) -> list[tuple[int, int]]:
    """Index pairs ``(i, j)``, ``i < j``, of half-open intervals that overlap.

    Each interval is ``(start, end)`` where both ends are comparable keys, typically
    ``(time_ns, seq)`` so that two holders handing over at the same instant do not count as
    overlapping while two that both hold before either releases do. A sweep over sorted starts
    keeps this O(n log n + overlaps).

    Examples:
        >>> overlapping_pairs([((0, 0), (2, 0)), ((2, 0), (3, 0)), ((1, 0), (4, 0))])
        [(0, 2), (1, 2)]
    """
    indexed = sorted(enumerate(intervals), key=lambda item: item[1][0])
    open_: list[tuple[int, tuple[tuple[int, int], tuple[int, int]]]] = []
    pairs: list[tuple[int, int]] = []
    for index, (start, end) in indexed:
        open_ = [(i, iv) for i, iv in open_ if iv[1] > start]
        pairs.extend((min(i, index), max(i, index)) for i, _ in open_ if start < end)
        if start < end:
            open_.append((index, (start, end)))
    return sorted(pairs)


class Timed(Protocol):
    """A stretch of a run with engine-time and event-order ends (a holding, a section)."""

    @property
    def start_ns(self) -> int: ...
    @property
    def start_seq(self) -> int: ...
    @property
    def end_ns(self) -> int: ...
    @property
    def end_seq(self) -> int: ...


T = TypeVar("T", bound=Timed)


def overlap_windows(items: Sequence[T]) -> list[tuple[T, T, int, int]]:
    """Each overlapping pair of ``items`` with the stretch both cover.

    Returns ``(first, second, start_ns, end_ns)`` per pair, in ``overlapping_pairs``' order;
    ends compare by ``(time_ns, seq)``.
    """
    keys = [((t.start_ns, t.start_seq), (t.end_ns, t.end_seq)) for t in items]
    windows = []
    for i, j in overlapping_pairs(keys):
        a, b = items[i], items[j]
        windows.append((a, b, max(a.start_ns, b.start_ns), min(a.end_ns, b.end_ns)))
    return windows


def branch_roots(run: RunExecutions) -> dict[str, str]:
    """Map each execution to the root of its branch.

    A branch starts at an execution whose parent created several executions (a fan-out) or
    that has no parent in the run; an only child belongs to its parent's branch. In the
    contract-edit run each reviewer's EnterContractEdit -> EditContract -> SaveContractEdit
    (and its ReleaseContractEditToken) is one branch.
    """
    roots: dict[str, str] = {}
    for execution in run.values():
        parent = run.get(execution.parent or "")
        if parent is None or len(parent.next) != 1:
            roots[execution.execution_id] = execution.execution_id
        else:
            roots[execution.execution_id] = roots.get(parent.execution_id, parent.execution_id)
    return roots


def lane_groups(run: RunExecutions, group_by: str = "step_type") -> list[tuple[str, list[str]]]:
    """Group a run's executions for timeline lanes: ``(group name, execution ids)`` in order.

    Args:
        run: The run's executions.
        group_by: ``"step_type"`` (groups in order of each type's first execution) or
            ``"branch"`` (one group per branch, see :func:`branch_roots`).

    Raises:
        ValueError: ``group_by`` is neither.
    """
    if group_by == "step_type":
        keys = {e.execution_id: e.step_type for e in run.values()}
    elif group_by == "branch":
        keys = branch_roots(run)
    else:
        raise ValueError(f"unknown group_by: {group_by!r} (must be 'step_type' or 'branch')")
    groups: dict[str, list[str]] = {}
    for execution_id, key in keys.items():
        groups.setdefault(key, []).append(execution_id)
    return list(groups.items())
