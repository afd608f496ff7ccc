"""The execution records of a run: one frozen record per Step execution, with its attempts.

:mod:`dexviz.analysis.executions` builds them from a history; every execution view reads them.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from dexviz.history import Event

__all__ = [
    "Attempt",
    "AttemptOutcome",
    "Execution",
    "ExecutionStatus",
    "FlowClose",
    "MessageRef",
    "RunExecutions",
]


class ExecutionStatus(enum.StrEnum):
    """A Step execution's status, named and derived as Dex Web's execution graph does.

    Dex Web takes the status from the execution's latest step-method event (Pending, Failed,
    Completed, or Waiting when only the WaitFor completed; Canceled is sticky) and overlays live
    state for Active. dexviz reads the live part from its trace events instead.
    """

    ACTIVE = "Active"
    WAITING = "Waiting"
    PENDING = "Pending"
    COMPLETED = "Completed"
    FAILED = "Failed"
    CANCELED = "Canceled"


class AttemptOutcome(enum.StrEnum):
    """How one method attempt ended."""

    COMPLETED = "completed"
    FAILED = "failed"
    CANCELED = "canceled"
    PENDING = "pending"
    RUNNING = "running"


@dataclass(frozen=True)
class MessageRef:
    """A Channel message named by its physical Channel name and message id."""

    channel: str
    message_id: str


@dataclass(frozen=True)
class Attempt:
    """One attempt of one method (``wait_for`` or ``execute``) of a Step execution.

    ``end_ns`` is None only while the attempt is still running at the end of a live history.
    ``retry_at_ns`` is set when a failed attempt will be retried (the backoff ends then).
    ``stack_trace`` is a failed attempt's formatted traceback, from the handler down.
    """

    execution_id: str
    method: str
    number: int
    start_ns: int
    end_ns: int | None
    outcome: AttemptOutcome
    error_type: str | None = None
    error_message: str | None = None
    reason: str | None = None
    final: bool = False
    retry_at_ns: int | None = None
    retry_delay_ns: int | None = None
    stack_trace: str | None = None

    @property
    def duration_ns(self) -> int | None:
        """The attempt's length in ns, or None while it runs."""
        return None if self.end_ns is None else self.end_ns - self.start_ns


@dataclass(frozen=True)
class Execution:
    """Everything the history says about one Step execution (``Type-N``) of a run.

    Times are engine times in ns since the epoch. The three phases are the WaitFor method (first
    attempt start to its commit or failure), the condition wait (WaitFor commit to the satisfied
    wait) and the Execute method (first attempt start to its commit or failure); each is None
    when the phase never happened, and ends at the cancellation or Flow close that cut it short.
    """

    execution_id: str
    step_type: str
    run_id: str
    parent: str | None
    reason: str | None
    input: Any
    has_wait_for: bool
    created_ns: int | None
    created_seq: int | None
    status: ExecutionStatus
    outcome: str | None
    attempts: tuple[Attempt, ...] = ()
    wait_for_start_ns: int | None = None
    wait_for_end_ns: int | None = None
    wait_start_ns: int | None = None
    wait_end_ns: int | None = None
    execute_start_ns: int | None = None
    execute_end_ns: int | None = None
    finished_ns: int | None = None
    finished_seq: int | None = None
    wait: Mapping[str, Any] | None = None
    decision: Mapping[str, Any] | None = None
    next: tuple[str, ...] = ()
    consumed: tuple[MessageRef, ...] = ()
    published: tuple[MessageRef, ...] = ()
    satisfied_seq: int | None = None
    error_type: str | None = None
    error_message: str | None = None
    recovery: str | None = None
    canceled_by: str | None = None
    canceled_phase: str | None = None
    canceled_ns: int | None = None

    def attempts_of(self, method: str) -> tuple[Attempt, ...]:
        """The attempts of one method (``wait_for`` or ``execute``), in order."""
        return tuple(a for a in self.attempts if a.method == method)

    @property
    def failed_attempts(self) -> int:
        """How many attempts (of either method) failed."""
        return sum(1 for a in self.attempts if a.outcome is AttemptOutcome.FAILED)


@dataclass(frozen=True)
class FlowClose:
    """The run's FlowClosed event: status, error and outputs."""

    status: str
    time_ns: int
    seq: int
    error_type: str | None
    error_message: str | None
    outputs: tuple[Mapping[str, Any], ...]


class RunExecutions(Mapping[str, Execution]):
    """The Step executions of one run, by execution id in creation order, plus run facts.

    Attributes:
        flow_id: The Flow id.
        run_id: The run these executions belong to.
        flow_type: The Flow type from the start event ("" when the history lacks it).
        start_ns: Engine time of the run's start (its FlowStartedOrContinued event).
        end_ns: The FlowClosed time, or the last event's time for a run still going.
        close: The FlowClosed facts, or None while the run is open.
        events: The run's events, in order.
        spec: The Flow spec recorded at start (may be empty).
    """

    __slots__ = ("_by_id", "close", "end_ns", "events", "flow_id", "flow_type", "run_id", "spec",
                 "start_ns")

    def __init__(
        self,
        *,
        flow_id: str,
        run_id: str,
        flow_type: str,
        start_ns: int,
        end_ns: int,
        close: FlowClose | None,
        events: tuple[Event, ...],
        spec: Mapping[str, Any],
        executions: Mapping[str, Execution],
    ) -> None:
        self.flow_id = flow_id
        self.run_id = run_id
        self.flow_type = flow_type
        self.start_ns = start_ns
        self.end_ns = end_ns
        self.close = close
        self.events = events
        self.spec = spec
        self._by_id = dict(executions)

    def __getitem__(self, execution_id: str) -> Execution:
        return self._by_id[execution_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_id)

    def __len__(self) -> int:
        return len(self._by_id)

    def __repr__(self) -> str:
        status = self.close.status if self.close else "RUNNING"
        return (
            f"RunExecutions(flow_id={self.flow_id!r}, run_id={self.run_id!r}, "
            f"executions={len(self)}, status={status!r})"
        )

    def seconds(self, time_ns: int | None) -> float | None:
        """Seconds since the run's start for an engine time (None stays None)."""
        return None if time_ns is None else (time_ns - self.start_ns) / 1e9

    def step_types(self) -> tuple[str, ...]:
        """The Step types, in order of their first execution."""
        return tuple(dict.fromkeys(e.step_type for e in self.values()))
