"""The fold behind the run diff: one pass over a run's events into comparable execution facts.

Every fact is kept without the ids a schedule happens to hand out (execution numbers, message
ids): a decision keeps its next Steps' types and inputs, a publication its Channel and value,
a consumed message its Channel, value and the execution that published it (compared through
the alignment later). That is what lets two runs whose ids are shifted compare equal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dexviz.history import Event, EventKind
from dexviz.history.instance_names import shown_name

_CREATED = EventKind.STEP_EXECUTION_CREATED
_WAIT_DONE = EventKind.STEP_WAIT_FOR_COMPLETED
_WAIT_FAILED = EventKind.STEP_WAIT_FOR_FAILED
_EXEC_DONE = EventKind.STEP_EXECUTE_COMPLETED
_EXEC_FAILED = EventKind.STEP_EXECUTE_FAILED
_PUBLISHED = EventKind.MESSAGE_PUBLISHED
_EXTERNAL = EventKind.CHANNEL_EXTERNAL_PUBLISH
_CONSUMED = EventKind.MESSAGE_CONSUMED
_ATTEMPT_FAILED = EventKind.ATTEMPT_FAILED
_TIMER = EventKind.TIMER_STARTED
_CANCELED = EventKind.EXECUTION_CANCELED
_CLOSED = EventKind.FLOW_CLOSED
_STARTED = EventKind.FLOW_STARTED_OR_CONTINUED


@dataclass(frozen=True, slots=True)
class Consumed:
    """A message a wait took: its Channel, value and publisher (an execution id or a client)."""

    channel: Any
    value: Any
    publisher: Any


@dataclass(slots=True)
class MethodCommit:
    """What one method (``wait_for`` or ``execute``) committed, and where in the history."""

    seq: int
    time_ns: int
    attempts: int
    result: Mapping[str, Any]
    writes: tuple[Any, ...]
    published: list[tuple[Any, Any]] = field(default_factory=list)


@dataclass(slots=True)
class ExecutionTrace:
    """The comparable facts of one Step execution, in the order the history gave them."""

    execution_id: str
    step_type: str
    parent: str | None
    reason: str | None
    input: Any
    created_seq: int
    created_ns: int
    children: list[str] = field(default_factory=list)
    wait_for: MethodCommit | None = None
    execute: MethodCommit | None = None
    consumed: list[Consumed] = field(default_factory=list)
    consumed_seq: int | None = None
    failures: list[tuple[int, str, int | None, str, str]] = field(default_factory=list)
    timers: list[tuple[int, Any]] = field(default_factory=list)
    canceled: tuple[int, str, str] | None = None
    next_ids: tuple[str, ...] = ()
    canceled_ids: tuple[str, ...] = ()


@dataclass
class RunTrace:
    """One run folded for the diff: its executions in creation order and its close."""

    flow_id: str
    run_id: str
    flow_type: str
    start_ns: int
    events: tuple[Event, ...]
    executions: dict[str, ExecutionTrace]
    roots: list[str]
    close: Event | None

    def seconds(self, time_ns: int) -> float:
        """Seconds since the run's start."""
        return (time_ns - self.start_ns) / 1e9


def fold_trace(run_id: str, events: Sequence[Event]) -> RunTrace:
    """Fold one run's events (as ``select_run`` returns them) into a RunTrace."""
    folder = _Folder()
    for event in events:
        handler = _HANDLERS.get(event.kind)
        if handler is not None:
            handler(folder, event)
    first = events[0]
    spec = folder.start.payload.get("flow") if folder.start is not None else None
    flow_type = spec.get("flow_type", "") if isinstance(spec, Mapping) else ""
    return RunTrace(
        flow_id=first.flow_id,
        run_id=run_id,
        flow_type=str(flow_type),
        start_ns=(folder.start or first).time_ns,
        events=tuple(events),
        executions=folder.executions,
        roots=folder.roots,
        close=folder.close,
    )


class _Folder:
    """Mutable state of one fold."""

    def __init__(self) -> None:
        self.executions: dict[str, ExecutionTrace] = {}
        self.roots: list[str] = []
        self.messages: dict[Any, tuple[Any, Any, Any]] = {}
        self.start: Event | None = None
        self.close: Event | None = None

    def created(self, event: Event) -> None:
        payload = event.payload
        execution_id = event.execution_id or ""
        parent = payload.get("from_execution_id")
        trace = ExecutionTrace(
            execution_id, event.step_type or "", parent if isinstance(parent, str) else None,
            payload.get("reason"), payload.get("input"), event.seq, event.time_ns,
        )
        self.executions[execution_id] = trace
        owner = self.executions.get(trace.parent) if trace.parent else None
        if owner is None:
            self.roots.append(execution_id)
        else:
            owner.children.append(execution_id)

    def commit(self, event: Event) -> None:
        trace = self.executions.get(event.execution_id or "")
        if trace is None:
            return
        payload = event.payload
        is_wait = event.kind == _WAIT_DONE
        result = payload.get("wait") if is_wait else payload.get("decision")
        commit = MethodCommit(
            event.seq, event.time_ns, int(payload.get("attempts") or 1),
            _without_ids(result), tuple(_shown_write(w) for w in payload.get("writes") or ()),
        )
        if is_wait:
            trace.wait_for = commit
        else:
            trace.execute = commit
            decision = payload.get("decision") or {}
            trace.next_ids = tuple(n.get("execution_id", "") for n in decision.get("next") or ())
            trace.canceled_ids = tuple(decision.get("canceled") or ())

    def failed(self, event: Event) -> None:
        trace = self.executions.get(event.execution_id or "")
        if trace is None:
            return
        payload = event.payload
        trace.failures.append((
            event.seq, event.method or "", event.attempt,
            _class_name(payload.get("error_type")), str(payload.get("error_message")),
        ))

    def method_failed(self, event: Event) -> None:
        trace = self.executions.get(event.execution_id or "")
        if trace is not None:
            payload = event.payload
            method = "wait_for" if event.kind == _WAIT_FAILED else "execute"
            trace.failures.append((
                event.seq, method, None, _class_name(payload.get("error_type")),
                "exhausted retries",
            ))

    def published(self, event: Event) -> None:
        payload = event.payload
        channel, value = _shown(payload.get("channel")), payload.get("value")
        self.messages[payload.get("message_id")] = (channel, value, payload.get("publisher"))
        trace = self.executions.get(event.execution_id or "")
        if trace is None:
            return
        commit = trace.wait_for if event.method == "wait_for" else trace.execute
        if commit is not None:
            commit.published.append((channel, value))

    def external(self, event: Event) -> None:
        for message in event.payload.get("messages") or ():
            self.messages[message.get("message_id")] = (
                _shown(message.get("channel")), message.get("value"), "client",
            )

    def consumed(self, event: Event) -> None:
        trace = self.executions.get(event.execution_id or "")
        if trace is None:
            return
        channel, value, publisher = self.messages.get(
            event.payload.get("message_id"),
            (_shown(event.payload.get("channel")), None, None),
        )
        trace.consumed.append(Consumed(channel, value, publisher))
        if trace.consumed_seq is None:
            trace.consumed_seq = event.seq

    def timer(self, event: Event) -> None:
        trace = self.executions.get(event.execution_id or "")
        if trace is not None:
            payload = event.payload
            trace.timers.append((event.seq, (payload.get("timer_index"),
                                             payload.get("duration_s"))))

    def canceled(self, event: Event) -> None:
        trace = self.executions.get(event.execution_id or "")
        if trace is not None and trace.canceled is None:
            by = str(event.payload.get("by"))
            trace.canceled = (event.seq, by, str(event.payload.get("phase")))

    def flow_started(self, event: Event) -> None:
        if self.start is None:
            self.start = event

    def flow_closed(self, event: Event) -> None:
        self.close = event


def _class_name(error_type: Any) -> str:
    """An error type by its class name: a module's import name depends on how it was loaded."""
    return str(error_type).rpartition(".")[2]


def _without_ids(result: Any) -> Mapping[str, Any]:
    """A WaitFor's wait or an Execute's decision, with execution ids left out."""
    if not isinstance(result, Mapping):
        return {}
    if "next" not in result:
        return result
    kept = {k: v for k, v in result.items() if k not in ("next", "canceled")}
    kept["next"] = [
        {"step_type": n.get("step_type"), "input": n.get("input")} for n in result["next"] or ()
    ]
    return kept


_HANDLERS: dict[str, Callable[[_Folder, Event], None]] = {
    _STARTED: _Folder.flow_started,
    _CREATED: _Folder.created,
    _WAIT_DONE: _Folder.commit,
    _EXEC_DONE: _Folder.commit,
    _WAIT_FAILED: _Folder.method_failed,
    _EXEC_FAILED: _Folder.method_failed,
    _ATTEMPT_FAILED: _Folder.failed,
    _PUBLISHED: _Folder.published,
    _EXTERNAL: _Folder.external,
    _CONSUMED: _Folder.consumed,
    _TIMER: _Folder.timer,
    _CANCELED: _Folder.canceled,
    _CLOSED: _Folder.flow_closed,
}


def _shown(name: Any) -> Any:
    """A recorded Channel or Attribute name as a view shows it (non-strings unchanged)."""
    return shown_name(name) if isinstance(name, str) else name


def _shown_write(write: Any) -> Any:
    """A recorded Attribute write with its map instance named as given (the rest unchanged)."""
    if not isinstance(write, Mapping):
        return write
    name = _shown(write.get("attribute"))
    return write if name == write.get("attribute") else {**write, "attribute": name}
