"""The recovery fold: one run's stored events folded into the state its last commit left.

Every state change the engine makes is described by the events of the commit that makes it, so
the state of a run at its last commit is a pure function of its events. This module computes it
as plain JSON-ready data (no engine objects); :mod:`dexviz.engine.recovery` turns it back into a
live run.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from dexviz.history.event import Event
from dexviz.history.kinds import EventKind


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
class ExecutionFold:
    """One execution as of the last commit: its phase and what it holds.

    ``phase`` is ``queued``, ``wait_for``, ``execute``, ``waiting``, ``satisfied`` (its wait took
    its messages; Execute has not committed), ``done`` or ``canceled``.
    """

    execution_id: str
    step_type: str
    input: Any
    from_execution_id: str
    phase: str = "queued"
    method: str = ""
    attempt: int = 0
    attempt_open: bool = False
    first_started_ns: int = 0
    retry_at_ns: int | None = None
    wait: dict[str, Any] | None = None
    wait_registered_ns: int = 0
    timers: dict[int, StoredTimer] = field(default_factory=dict)
    reserved: list[str] = field(default_factory=list)
    satisfied_conditions: tuple[int, ...] = ()
    locals: dict[str, Any] = field(default_factory=dict)
    wait_for_failed: bool = False
    recovery_error: tuple[str, str] | None = None

    @property
    def active(self) -> bool:
        """Whether the execution had not finished at the last commit."""
        return self.phase not in ("done", "canceled")


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


_WRITERS = frozenset(
    {
        EventKind.STEP_WAIT_FOR_COMPLETED,
        EventKind.STEP_EXECUTE_COMPLETED,
        EventKind.RPC_EXECUTION_COMPLETED,
    }
)
_CANCEL_BATCH = frozenset({EventKind.EXECUTION_CANCELED, EventKind.MESSAGE_RETURNED})


def split_runs(events: list[Event]) -> list[list[Event]]:
    """A Flow id's history cut into its runs, in order."""
    runs: list[list[Event]] = []
    current = ""
    for event in events:
        if not runs or event.run_id != current:
            runs.append([])
            current = event.run_id
        runs[-1].append(event)
    return runs


def fold_run(
    events: list[Event],
    earlier: dict[str, StoredMessage] | None = None,
    previous: RunFold | None = None,
) -> RunFold:
    """Fold one run's events.

    ``earlier``: the messages of earlier runs (a time travel resumes reserved ones);
    ``previous``: the fold of the run before, which a continue-as-new run carries on.
    """
    fold = RunFold(events[0].run_id)
    known = dict(earlier or {})
    first = events[0].payload if events[0].kind == EventKind.FLOW_STARTED_OR_CONTINUED else {}
    if previous is not None and first.get("reason") == "continue_as_new":
        _carry(fold, previous)
    for event in events:
        if fold._returning and event.kind not in _CANCEL_BATCH:
            _flush_returned(fold)
        _fold_run_event(fold, event, known)
        if event.execution_id is not None:
            _fold_execution(fold, event, known)
        fold.last_seq, fold.last_time_ns = event.seq, event.time_ns
    _flush_returned(fold)
    return fold


def _fold_run_event(fold: RunFold, event: Event, known: dict[str, StoredMessage]) -> None:
    payload = event.payload
    kind = event.kind
    if kind == EventKind.FLOW_STARTED_OR_CONTINUED:
        _started(fold, event)
        for message in payload.get("pending_messages", ()):
            _publish(fold, message, known)
    elif kind == EventKind.MESSAGE_PUBLISHED:
        _publish(fold, payload, known)
    elif kind in (EventKind.MESSAGE_CONSUMED, EventKind.MESSAGE_RETURNED):
        _move(fold, event)
    elif kind == EventKind.COMPLETION_REQUESTED:
        fold.graceful_requested = True
        if payload.get("has_output") and payload.get("output") is not None:
            fold.completions.append(
                (event.step_type or "", event.execution_id or "", payload["output"])
            )
    elif kind == EventKind.FLOW_CLOSED:
        fold.closed, fold.closed_ns = dict(payload), event.time_ns
    if kind in _WRITERS:
        for write in payload.get("writes", ()):
            _write(fold, write)
        _delete(fold, payload.get("deleted_messages", ()))


def _move(fold: RunFold, event: Event) -> None:
    """A consumed message leaves its queue for its consumer; a returned one goes back first."""
    payload = event.payload
    if event.kind == EventKind.MESSAGE_RETURNED:
        returned = fold.held.pop(payload["message_id"], None)
        if returned is not None:
            fold._returning.append(returned)
        return
    queue = fold.queue(payload["channel"])
    found = next((m for m in queue if m.message_id == payload["message_id"]), None)
    if found is not None:
        queue.remove(found)
        fold.held[found.message_id] = found


def _carry(fold: RunFold, previous: RunFold) -> None:
    """A continue-as-new run goes on with what the run before held (R13)."""
    fold.previous = previous
    fold.counters = dict(previous.counters)
    fold.completions = list(previous.completions)
    fold.graceful_requested = previous.graceful_requested
    fold.start_input = previous.start_input
    fold.retry_policy = previous.retry_policy
    fold.deadline_ns = previous.deadline_ns


def _started(fold: RunFold, event: Event) -> None:
    payload = event.payload
    if not fold.flow_type:
        fold.flow_type = payload["flow"]["flow_type"]
        fold.started_ns = event.time_ns
        fold.timeout_s = payload.get("timeout_s")
        fold.timeout_policy = payload.get("timeout_policy")
        if fold.previous is None:
            fold.start_input = payload.get("input")
            fold.retry_policy = payload.get("retry_policy")
            fold.start_delay_s = float(payload.get("start_delay_s") or 0.0)
            fold.start_execution_id = payload.get("start_execution_id")
            if fold.timeout_s:
                fold.deadline_ns = event.time_ns + int(fold.timeout_s * 1e9)
        _count(fold, fold.start_execution_id)
    for write in payload.get("initial_attributes", ()):
        _write(fold, write)


def _publish(fold: RunFold, item: Any, known: dict[str, StoredMessage]) -> None:
    fold.message_count += 1
    message = StoredMessage(item["message_id"], fold.message_count, item["channel"], item["value"])
    known[message.message_id] = message
    fold.queue(message.channel).append(message)


def _write(fold: RunFold, write: Any) -> None:
    if write.get("deleted") or write.get("value") is None:
        fold.attributes.pop(write["attribute"], None)
    else:
        fold.attributes[write["attribute"]] = write["value"]


def _delete(fold: RunFold, message_ids: Any) -> None:
    for message_id in message_ids:
        for queue in fold.queues.values():
            found = next((m for m in queue if m.message_id == message_id), None)
            if found is not None:
                queue.remove(found)
                break


def _flush_returned(fold: RunFold) -> None:
    """Reserved messages of one cancellation go back to the front, oldest first (R57)."""
    by_channel: dict[str, list[StoredMessage]] = {}
    for message in fold._returning:
        by_channel.setdefault(message.channel, []).append(message)
    for channel, messages in by_channel.items():
        messages.sort(key=lambda m: m.number)
        fold.queue(channel).extendleft(reversed(messages))
    fold._returning = []


def _fold_execution(fold: RunFold, event: Event, known: dict[str, StoredMessage]) -> None:
    ex_id = event.execution_id
    assert ex_id is not None
    if event.kind == EventKind.STEP_EXECUTION_CREATED:
        _created(fold, event, known)
        return
    ex = fold.executions.get(ex_id)
    change = _CHANGES.get(str(event.kind))
    if ex is not None and change is not None:
        change(fold, ex, event)


def _created(fold: RunFold, event: Event, known: dict[str, StoredMessage]) -> None:
    payload = event.payload
    ex_id = event.execution_id or ""
    ex = ExecutionFold(
        ex_id, event.step_type or "", payload.get("input"), payload.get("from_execution_id", "")
    )
    # An execution resumed by a time travel carries the phase it resumed in.
    ex.phase = payload.get("resumed_phase", "queued")
    ex.wait = payload.get("wait")
    ex.wait_registered_ns = event.time_ns
    for message_id in payload.get("reserved", ()):
        message = known.get(message_id)
        if message is not None:
            fold.held[message_id] = message
            ex.reserved.append(message_id)
    ex.recovery_error = fold.failed_routes.pop(ex_id, None)
    before = fold.previous.executions.get(ex_id) if fold.previous is not None else None
    if payload.get("reason") == "continue_as_new" and before is not None:
        _carry_execution(ex, before)
    fold.executions[ex_id] = ex
    _count(fold, ex_id)


def _carry_execution(ex: ExecutionFold, before: ExecutionFold) -> None:
    """A carried execution keeps its wait, timers, locals and start time (continue-as-new)."""
    ex.wait = before.wait
    ex.wait_registered_ns = before.wait_registered_ns
    ex.timers = {
        i: StoredTimer(t.condition_id, t.duration_s, t.fire_at_ns, t.done)
        for i, t in before.timers.items()
    }
    ex.locals = dict(before.locals)
    ex.satisfied_conditions = before.satisfied_conditions
    ex.first_started_ns = before.first_started_ns
    ex.wait_for_failed = before.wait_for_failed
    ex.recovery_error = ex.recovery_error or before.recovery_error


def _count(fold: RunFold, execution_id: str | None) -> None:
    """Execution numbers are never reused (R15): count every id the run gave out."""
    if not execution_id:
        return
    type_name, _, number = execution_id.rpartition("-")
    if number.isdigit():
        fold.counters[type_name] = max(fold.counters.get(type_name, 0), int(number))


def _attempt_started(fold: RunFold, ex: ExecutionFold, event: Event) -> None:
    ex.method = event.method or "execute"
    ex.attempt = event.attempt or 1
    ex.phase = "wait_for" if ex.method == "wait_for" else "execute"
    ex.attempt_open = True
    ex.retry_at_ns = None
    if ex.attempt == 1:
        ex.first_started_ns = event.time_ns


def _attempt_failed(fold: RunFold, ex: ExecutionFold, event: Event) -> None:
    ex.attempt_open = False
    if not event.payload.get("final"):
        ex.retry_at_ns = event.payload.get("retry_at_ns") or event.time_ns


def _waiting(fold: RunFold, ex: ExecutionFold, event: Event) -> None:
    ex.phase, ex.attempt_open, ex.method, ex.attempt = "waiting", False, "", 0
    ex.wait = dict(event.payload.get("wait", {}))
    ex.wait_registered_ns = event.time_ns
    ex.locals = dict(event.payload.get("locals", {}))


def _timer_started(fold: RunFold, ex: ExecutionFold, event: Event) -> None:
    p = event.payload
    ex.timers[int(p["timer_index"])] = StoredTimer(
        p.get("condition_id"), float(p["duration_s"]), int(p["fire_at_ns"])
    )


def _timer_done(fold: RunFold, ex: ExecutionFold, event: Event) -> None:
    timer = ex.timers.get(int(event.payload["timer_index"]))
    if timer is not None:
        timer.done = True


def _satisfied(fold: RunFold, ex: ExecutionFold, event: Event) -> None:
    ex.phase = "satisfied"
    ex.satisfied_conditions = tuple(event.payload.get("conditions", ()))


def _consumed(fold: RunFold, ex: ExecutionFold, event: Event) -> None:
    ex.reserved.append(event.payload["message_id"])


def _returned(fold: RunFold, ex: ExecutionFold, event: Event) -> None:
    ex.reserved = [m for m in ex.reserved if m != event.payload["message_id"]]


def _wait_for_failed(fold: RunFold, ex: ExecutionFold, event: Event) -> None:
    ex.attempt_open = False
    if event.payload.get("policy") == "PROCEED":
        ex.phase, ex.wait_for_failed = "satisfied", True
        ex.recovery_error = (event.payload["error_type"], event.payload["error_message"])
    else:
        ex.phase = "done"


def _execute_failed(fold: RunFold, ex: ExecutionFold, event: Event) -> None:
    ex.phase, ex.attempt_open = "done", False
    route = event.payload.get("recovery_execution_id")
    if route:
        fold.failed_routes[route] = (event.payload["error_type"], event.payload["error_message"])


def _finished(phase: str) -> Any:
    def change(fold: RunFold, ex: ExecutionFold, event: Event) -> None:
        ex.phase, ex.attempt_open, ex.reserved = phase, False, []

    return change


_CHANGES: dict[str, Any] = {
    EventKind.ATTEMPT_STARTED: _attempt_started,
    EventKind.ATTEMPT_FAILED: _attempt_failed,
    EventKind.STEP_WAIT_FOR_COMPLETED: _waiting,
    EventKind.TIMER_STARTED: _timer_started,
    EventKind.TIMER_FIRED: _timer_done,
    EventKind.TIMER_SKIPPED: _timer_done,
    EventKind.WAIT_SATISFIED: _satisfied,
    EventKind.MESSAGE_CONSUMED: _consumed,
    EventKind.MESSAGE_RETURNED: _returned,
    EventKind.STEP_WAIT_FOR_FAILED: _wait_for_failed,
    EventKind.STEP_EXECUTE_COMPLETED: _finished("done"),
    EventKind.STEP_EXECUTE_FAILED: _execute_failed,
    EventKind.EXECUTION_CANCELED: _finished("canceled"),
}
