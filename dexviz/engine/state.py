"""The engine's private runtime state: one FlowRun per Flow id, its executions and queues."""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dexviz.sdk.definitions import FlowDefinition, StepDefinition
from dexviz.sdk.options import StepOptions
from dexviz.sdk.results import FlowErrorType, FlowStatus, RecoveryErrorInfo, StepCompletion
from dexviz.sdk.wait import Wait


class Phase(enum.Enum):
    """Where a Step execution is in its lifecycle."""

    QUEUED = "queued"
    WAIT_FOR = "wait_for"
    WAITING = "waiting"
    EXECUTE = "execute"
    DONE = "done"
    CANCELED = "canceled"


ACTIVE_PHASES = frozenset({Phase.QUEUED, Phase.WAIT_FOR, Phase.WAITING, Phase.EXECUTE})


@dataclass(slots=True)
class Message:
    """One queued Channel message; ``number`` orders messages by publication."""

    message_id: str
    number: int
    channel: str
    value: Any


@dataclass(slots=True)
class TimerState:
    """One Timer condition of a waiting execution."""

    index: int
    condition_id: str | None
    duration_s: float
    fire_at_ns: int = 0
    done: bool = False
    handle: Any = None


@dataclass(slots=True)
class Execution:
    """One Step execution ``Type-N`` and everything the engine tracks about it."""

    execution_id: str
    step: StepDefinition
    input: Any
    from_execution_id: str
    options: StepOptions
    phase: Phase = Phase.QUEUED
    method: str = ""
    attempt: int = 0
    attempt_token: int = 0
    first_started_ns: int = 0
    method_snapshot: dict[str, Any] | None = None
    wait: Wait | None = None
    timers: list[TimerState] = field(default_factory=list)
    wait_registered_ns: int = 0
    satisfied_conditions: tuple[int, ...] = ()
    reserved: dict[str, list[Message]] = field(default_factory=dict)
    consumed_values: dict[str, list[Any]] = field(default_factory=dict)
    locals: dict[str, Any] = field(default_factory=dict)
    recovery_error: RecoveryErrorInfo | None = None
    wait_for_failed: bool = False
    cancel_requested: bool = False
    last_heartbeat: Any = None
    has_heartbeat: bool = False
    task: Any = None
    pending_unit: Any = None
    method_timeout: Any = None
    subflow_ids: list[str] = field(default_factory=list)
    counted: bool = True
    parent_key: str = ""
    last_beat_ns: int = 0
    heartbeat_timer: Any = None

    @property
    def step_type(self) -> str:
        """The execution's Step type."""
        return self.step.step_type

    @property
    def active(self) -> bool:
        """Active from creation until its Execute commits, it fails terminally, or is canceled."""
        return self.phase in ACTIVE_PHASES


class WaiterSet:
    """The executions waiting on one Channel: O(1) add, remove and random pick."""

    __slots__ = ("items", "_positions")

    def __init__(self) -> None:
        self.items: list[Execution] = []
        self._positions: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.items)

    def add(self, ex: Execution) -> None:
        """Add ``ex`` (once)."""
        if ex.execution_id not in self._positions:
            self._positions[ex.execution_id] = len(self.items)
            self.items.append(ex)

    def discard(self, ex: Execution) -> None:
        """Remove ``ex`` if present, moving the last item into its slot."""
        position = self._positions.pop(ex.execution_id, None)
        if position is None:
            return
        last = self.items.pop()
        if position < len(self.items):
            self.items[position] = last
            self._positions[last.execution_id] = position


@dataclass
class FlowRun:
    """The live state of one Flow id's current run."""

    flow_id: str
    run_id: str
    definition: FlowDefinition
    started_ns: int
    status: FlowStatus = FlowStatus.RUNNING
    error_type: FlowErrorType | None = None
    error_message: str | None = None
    failure: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    queues: dict[str, deque[Message]] = field(default_factory=dict)
    executions: dict[str, Execution] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    waiters: dict[str, WaiterSet] = field(default_factory=dict)
    completions: list[StepCompletion] = field(default_factory=list)
    graceful_requested: bool = False
    closing: bool = False
    active_count: int = 0
    message_count: int = 0
    seq: int = 0
    closed_ns: int | None = None
    config: Any = None
    request_id: str | None = None
    start_options: Any = None
    start_input: Any = None
    attempt: int = 1
    retry_pending: bool = False
    message_ids: Callable[[], str] | None = None
    admitted_rpcs: int = 0
    pending_close: Any = None

    @property
    def flow_type(self) -> str:
        """The Flow type."""
        return self.definition.flow_type

    @property
    def is_open(self) -> bool:
        """Whether the run still accepts work (not closed and not closing)."""
        return self.status is FlowStatus.RUNNING and not self.closing

    def queue(self, channel: str) -> deque[Message]:
        """The queue of a physical Channel name, created on first use."""
        found = self.queues.get(channel)
        if found is None:
            found = self.queues[channel] = deque()
        return found

    def next_execution_id(self, step_type: str) -> str:
        """Give out the next ``Type-N`` id (numbers are never reused, R15)."""
        number = self.counters.get(step_type, 0) + 1
        self.counters[step_type] = number
        return f"{step_type}-{number}"

    def next_message(self, channel: str, value: Any) -> Message:
        """Create a message with a new id; ``number`` keeps the publication order."""
        self.message_count += 1
        number = self.message_count
        message_id = self.message_ids() if self.message_ids is not None else f"msg-{number}"
        return Message(message_id, number, channel, value)
