"""The recovery fold's records: one run, its executions, messages and Timers at its last commit.

Plain JSON-ready values (no engine objects) that :func:`dexviz.engine.core.recovery_fold.fold_run`
builds from a run's stored events and :mod:`dexviz.engine.recovery` turns back into a live run.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from dexviz.history.phases import ExecutionPhase


@dataclass(slots=True)
class StoredMessage:
    """One Channel message as the history recorded it; ``number`` keeps publication order."""

    message_id: str
    number: int
    channel: str
    value: Any


@dataclass(slots=True)
class StoredTimer:
    """A Timer condition's stored deadline and whether it fired (or was skipped)."""

    condition_id: str | None
    duration_s: float
    fire_at_ns: int
    done: bool = False


@dataclass
class ExecutionFold(ExecutionPhase):
    """One execution as of the last commit: its phase, and its attempt, Timers and locals.

    The phase, wait and reserved messages are :class:`ExecutionPhase`'s; the rest is what a
    restart needs besides: the attempt in progress, its Timers, locals and recovery error.
    """

    method: str = ""
    attempt: int = 0
    attempt_open: bool = False
    first_started_ns: int = 0
    retry_at_ns: int | None = None
    wait_registered_ns: int = 0
    timers: dict[int, StoredTimer] = field(default_factory=dict)
    satisfied_conditions: tuple[int, ...] = ()
    locals: dict[str, Any] = field(default_factory=dict)
    recovery_error: tuple[str, str] | None = None


@dataclass
class RunFold:
    """One run of a Flow id as of its last commit (JSON-ready values)."""

    run_id: str
    flow_type: str = ""
    started_ns: int = 0
    start_input: Any = None
    timeout_s: float | None = None
    timeout_policy: str | None = None
    retry_policy: Any = None
    start_delay_s: float = 0.0
    start_execution_id: str | None = None
    deadline_ns: int | None = None
    previous: RunFold | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    queues: dict[str, deque[StoredMessage]] = field(default_factory=dict)
    held: dict[str, StoredMessage] = field(default_factory=dict)
    executions: dict[str, ExecutionFold] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    completions: list[tuple[str, str, Any]] = field(default_factory=list)
    graceful_requested: bool = False
    message_count: int = 0
    closed: dict[str, Any] | None = None
    closed_ns: int | None = None
    last_seq: int = 0
    last_time_ns: int = 0
    failed_routes: dict[str, tuple[str, str]] = field(default_factory=dict)
    _returning: list[StoredMessage] = field(default_factory=list)

    @property
    def is_open(self) -> bool:
        """Whether the run had not closed at its last commit."""
        return self.closed is None

    def queue(self, channel: str) -> deque[StoredMessage]:
        """The queue of a physical Channel name, created on first use."""
        found = self.queues.get(channel)
        if found is None:
            found = self.queues[channel] = deque()
        return found
