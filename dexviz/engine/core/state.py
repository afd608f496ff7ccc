"""The engine's private runtime state: one FlowRun per Flow id, its executions and queues."""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from dexviz.engine.core.waiters import WaiterSet
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


DEFAULT_OPTIONS = StepOptions()
"""Shared by every execution without options of its own (StepOptions is immutable)."""

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


_NO_RESERVED: Mapping[str, list[Message]] = MappingProxyType({})


class Execution:
    """One Step execution ``Type-N`` and everything the engine tracks about it.

    A plain ``__slots__`` class: one is created per Step transition, so its containers (timers,
    reserved and consumed messages, locals, SubFlow ids) are created on first use, and
    ``active`` is a stored flag kept in step with ``phase``.
    """

    __slots__ = (
        "execution_id", "step", "input", "from_execution_id", "options", "_phase", "active",
        "method", "attempt", "attempt_token", "first_started_ns", "method_snapshot", "wait",
        "wait_registered_ns", "satisfied_conditions", "_reserved", "_consumed_values", "task",
        "pending_unit", "parent_key", "__dict__",
    )  # fmt: skip

    # Rarely set (timers, locals, SubFlows, failures, heartbeats, timeouts, cancellation): not
    # slots but class defaults, stored in the instance ``__dict__`` only once set, so the
    # common execution carries none of them (the dict is created on the first such write).
    _timers: list[TimerState] | None = None
    _locals: dict[str, Any] | None = None
    _subflow_ids: list[str] | None = None
    recovery_error: RecoveryErrorInfo | None = None
    wait_for_failed = False
    cancel_requested = False
    last_heartbeat: Any = None
    has_heartbeat = False
    method_timeout: Any = None
    counted = True
    last_beat_ns = 0
    heartbeat_timer: Any = None
    last_failure: Any = None

    def __init__(
        self,
        execution_id: str,
        step: StepDefinition,
        input: Any,
        from_execution_id: str,
        options: StepOptions,
        phase: Phase | None = None,
    ) -> None:
        self.execution_id = execution_id
        self.step = step
        self.input = input
        self.from_execution_id = from_execution_id
        self.options = options
        self._phase = Phase.QUEUED
        self.active = True
        if phase is not None:
            self.phase = phase
        self.method = ""
        self.attempt = 0
        self.attempt_token = 0
        self.first_started_ns = 0
        self.method_snapshot: dict[str, Any] | None = None
        self.wait: Wait | None = None
        self.wait_registered_ns = 0
        self.satisfied_conditions: tuple[int, ...] = ()
        self._reserved: dict[str, list[Message]] | None = None
        self._consumed_values: dict[str, list[Any]] | None = None
        self.task: Any = None
        self.pending_unit: Any = None
        self.parent_key = ""

    def __repr__(self) -> str:
        return f"Execution({self.execution_id}, {self._phase.value})"

    @property
    def phase(self) -> Phase:
        """Where the execution is in its lifecycle."""
        return self._phase

    @phase.setter
    def phase(self, phase: Phase) -> None:
        self._phase = phase
        # Identity tests: Enum hashing runs in Python, and this runs on every transition.
        self.active = phase is not Phase.DONE and phase is not Phase.CANCELED

    @property
    def step_type(self) -> str:
        """The execution's Step type."""
        return self.step.step_type

    @property
    def timers(self) -> list[TimerState]:
        """The Timer conditions of the current Wait (created on first use)."""
        if self._timers is None:
            self._timers = []
        return self._timers

    @timers.setter
    def timers(self, value: list[TimerState]) -> None:
        self._timers = value

    @property
    def started_timers(self) -> list[TimerState] | tuple[()]:
        """The timers started so far, without creating the container."""
        return self._timers or ()

    @property
    def reserved(self) -> dict[str, list[Message]]:
        """Messages taken by the satisfied Wait and held until Execute commits, per Channel."""
        if self._reserved is None:
            self._reserved = {}
        return self._reserved

    @reserved.setter
    def reserved(self, value: dict[str, list[Message]]) -> None:
        self._reserved = value

    @property
    def held_messages(self) -> Mapping[str, list[Message]]:
        """The reserved messages per Channel, read-only and without creating the container."""
        return self._reserved or _NO_RESERVED

    @property
    def holds_messages(self) -> bool:
        """Whether the execution holds reserved messages (without creating the container)."""
        return bool(self._reserved)

    @property
    def consumed_values_read(self) -> dict[str, list[Any]] | None:
        """The consumed values if any were set, else None (reading creates no container)."""
        return self._consumed_values

    @property
    def waits_on_subflows(self) -> bool:
        """Whether the current Wait started SubFlows (reading creates no container)."""
        return bool(self._subflow_ids)

    @property
    def consumed_values(self) -> dict[str, list[Any]]:
        """The values of the messages the Wait consumed, per Channel, for Execute."""
        if self._consumed_values is None:
            self._consumed_values = {}
        return self._consumed_values

    @consumed_values.setter
    def consumed_values(self, value: dict[str, list[Any]]) -> None:
        self._consumed_values = value

    @property
    def locals(self) -> dict[str, Any]:
        """Step-execution locals set by WaitFor."""
        if self._locals is None:
            self._locals = {}
        return self._locals

    @locals.setter
    def locals(self, value: dict[str, Any]) -> None:
        self._locals = value

    @property
    def subflow_ids(self) -> list[str]:
        """The Flow ids of the SubFlows the current Wait started."""
        if self._subflow_ids is None:
            self._subflow_ids = []
        return self._subflow_ids

    @subflow_ids.setter
    def subflow_ids(self, value: list[str]) -> None:
        self._subflow_ids = value


# What ``FlowRun.queues_view`` reads while a run has no queue yet (never written to).
_NO_QUEUES: Mapping[str, deque[Message]] = MappingProxyType({})
_new = object.__new__


class FlowRun:
    """The live state of one Flow id's current run.

    A plain ``__slots__`` class (one per Flow, kept while it waits): what every run sets is a
    slot; what only some runs set (a failure, a close time, retries, a config, RPC counts,
    more than one Step type or Channel) is a class default, stored in the instance ``__dict__``
    only once set, so a parked Flow carries none of it.
    """

    __slots__ = (
        "flow_id", "run_id", "definition", "started_ns", "status", "_attributes", "_queues",
        "executions", "_first_type", "_first_count", "_first_channel", "_first_waiters",
        "_completions", "closing", "active_count", "message_count", "seq", "start_options",
        "start_input", "message_ids", "graceful_requested", "__dict__",
    )  # fmt: skip

    # Rarely set: class defaults until written (see the class docstring).
    error_type: FlowErrorType | None = None
    error_message: str | None = None
    failure: str | None = None
    closed_ns: int | None = None
    config: Any = None
    request_id: str | None = None
    attempt: int = 1
    retry_pending: bool = False
    admitted_rpcs: int = 0
    pending_close: Any = None
    # The ``Type-N`` counters of a second and later Step types, and the waiter index of a
    # second and later Channels (the first of each lives in two slots).
    _more_counts: dict[str, int] | None = None
    _more_waiters: dict[str, WaiterSet[Execution]] | None = None

    def __init__(self, flow_id: str, run_id: str, definition: FlowDefinition, started_ns: int):
        self.flow_id = flow_id
        self.run_id = run_id
        self.definition = definition
        self.started_ns = started_ns
        self.status = FlowStatus.RUNNING
        # Attributes, queues and completions are created on first use (see the properties
        # below): a parked Flow usually has none, and empty containers cost ~60 bytes each.
        self._attributes: dict[str, Any] | None = None
        self._queues: dict[str, deque[Message]] | None = None
        self.executions: dict[str, Execution] = {}
        self._first_type: str | None = None
        self._first_count = 0
        self._first_channel: str | None = None
        self._first_waiters: WaiterSet[Execution] | None = None
        self._completions: list[StepCompletion] | None = None
        self.closing = False
        self.active_count = 0
        self.message_count = 0
        self.seq = 0
        self.start_options: Any = None
        self.start_input: Any = None
        self.message_ids: Callable[[], str] | None = None
        self.graceful_requested = False

    def __repr__(self) -> str:
        return f"FlowRun({self.flow_id!r}, {self.status.name}, seq={self.seq})"

    @property
    def attributes(self) -> dict[str, Any]:
        """The run's Attribute values by physical name (created on first use)."""
        found = self._attributes
        if found is None:
            found = self._attributes = {}
        return found

    @attributes.setter
    def attributes(self, value: dict[str, Any]) -> None:
        self._attributes = value

    @property
    def has_attributes(self) -> bool:
        """Whether any Attribute is set (without creating the container)."""
        return bool(self._attributes)

    @property
    def queues(self) -> dict[str, deque[Message]]:
        """The message queues by physical Channel name (created on first use)."""
        found = self._queues
        if found is None:
            found = self._queues = {}
        return found

    @queues.setter
    def queues(self, value: dict[str, deque[Message]]) -> None:
        self._queues = value

    @property
    def queues_view(self) -> Mapping[str, deque[Message]]:
        """The queues for reading only: a shared empty mapping while none exists."""
        return self._queues or _NO_QUEUES

    @property
    def completions(self) -> list[StepCompletion]:
        """The Step outputs of the run, in completion order (created on first use)."""
        found = self._completions
        if found is None:
            found = self._completions = []
        return found

    @completions.setter
    def completions(self, value: list[StepCompletion]) -> None:
        self._completions = value

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
        if step_type == self._first_type:
            number = self._first_count = self._first_count + 1
        elif self._first_type is None:
            self._first_type = step_type
            number = self._first_count = 1
        else:
            more = self._more_counts
            if more is None:
                more = self._more_counts = {}
            number = more.get(step_type, 0) + 1
            more[step_type] = number
        return f"{step_type}-{number}"

    def waiters_of(self, channel: str) -> WaiterSet[Execution] | None:
        """The executions waiting on a physical Channel name, if any were indexed."""
        if channel == self._first_channel:
            return self._first_waiters
        more = self._more_waiters
        return None if more is None else more.get(channel)

    def add_waiter(self, channel: str, ex: Execution) -> None:
        """Index ``ex`` as waiting on a physical Channel name."""
        found = self.waiters_of(channel)
        if found is None:
            found = WaiterSet()
            if self._first_channel is None:
                self._first_channel, self._first_waiters = channel, found
            else:
                if self._more_waiters is None:
                    self._more_waiters = {}
                self._more_waiters[channel] = found
        found.add(ex)

    @property
    def waiters(self) -> dict[str, WaiterSet[Execution]]:
        """The waiter index by physical Channel name (a new dict of the same WaiterSets)."""
        found: dict[str, WaiterSet[Execution]] = {}
        if self._first_channel is not None and self._first_waiters is not None:
            found[self._first_channel] = self._first_waiters
        if self._more_waiters:
            found.update(self._more_waiters)
        return found

    @property
    def counters(self) -> dict[str, int]:
        """The last ``Type-N`` number given out per Step type (a copy; see raise_counter)."""
        found = {} if self._first_type is None else {self._first_type: self._first_count}
        if self._more_counts:
            found.update(self._more_counts)
        return found

    @counters.setter
    def counters(self, value: dict[str, int]) -> None:
        self._first_type, self._first_count, self._more_counts = None, 0, None
        for step_type, number in value.items():
            self.raise_counter(step_type, number)

    def raise_counter(self, step_type: str, number: int) -> None:
        """Make sure ``Type-N`` ids of ``step_type`` continue after ``number`` (recovery)."""
        if step_type == self._first_type or self._first_type is None:
            self._first_type = step_type
            self._first_count = max(self._first_count, number)
        else:
            more = self._more_counts
            if more is None:
                more = self._more_counts = {}
            more[step_type] = max(more.get(step_type, 0), number)

    def next_message(self, channel: str, value: Any) -> Message:
        """Create a message with a new id; ``number`` keeps the publication order."""
        self.message_count += 1
        number = self.message_count
        message = _new(Message)  # Message(...) without its __init__ call: one per publication
        message.message_id = self.message_ids() if self.message_ids is not None else f"msg-{number}"
        message.number = number
        message.channel = channel
        message.value = value
        return message
