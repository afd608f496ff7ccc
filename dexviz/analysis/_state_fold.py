"""The mutable state behind ``StateFolder``: one handler per event kind that changes state."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dexviz.analysis._execution_fold import items, mapping, text
from dexviz.history import Event, EventKind

_K = EventKind


@dataclass(frozen=True)
class QueuedMessage:
    """A message waiting in a Channel queue."""

    message_id: str
    value: Any


@dataclass(frozen=True)
class ReservedMessage:
    """A message a satisfied wait took, held by ``execution_id`` until its Execute commits."""

    message_id: str
    value: Any
    execution_id: str


@dataclass(frozen=True)
class ActiveExecution:
    """An execution that is active (R31) at the viewed event, and what it is doing.

    ``phase`` is ``"queued"`` (no attempt running: not started yet, or its wait was satisfied
    and its Execute has not started), ``"wait_for"``, ``"waiting"`` (condition wait),
    ``"execute"`` or ``"backoff"`` (between a failed attempt and its retry). ``method`` and
    ``attempt`` name the current or last attempt; ``since_ns`` is when the phase began.
    """

    execution_id: str
    step_type: str
    phase: str
    since_ns: int
    parent: str | None
    method: str | None = None
    attempt: int | None = None

    def moved(self, phase: str, since_ns: int, method: str | None = None,
              attempt: int | None = None) -> ActiveExecution:
        """A copy in another phase (method and attempt kept unless given)."""
        return ActiveExecution(self.execution_id, self.step_type, phase, since_ns, self.parent,
                               method or self.method, attempt or self.attempt)


class MutableState:
    """Queues, reservations, Attributes and active executions, changed event by event."""

    def __init__(self) -> None:
        # Values are the frozen objects views hand out, so a view copies no message or record.
        self.queues: dict[str, dict[str, QueuedMessage]] = {}
        self.reserved: dict[str, dict[str, ReservedMessage]] = {}
        self.attributes: dict[str, Any] = {}
        self.active: dict[str, ActiveExecution] = {}
        self.closed: str | None = None
        self.completion_requested = False
        self._returning: tuple[str, str, int] | None = None
        self._handlers: dict[str, Callable[[Event], None]] = {
            str(_K.FLOW_STARTED_OR_CONTINUED): self._started,
            str(_K.STEP_EXECUTION_CREATED): self._created,
            str(_K.ATTEMPT_STARTED): self._attempt_started,
            str(_K.ATTEMPT_FAILED): self._attempt_failed,
            str(_K.STEP_WAIT_FOR_COMPLETED): self._wait_for_completed,
            str(_K.STEP_WAIT_FOR_FAILED): self._wait_for_failed,
            str(_K.WAIT_SATISFIED): self._wait_satisfied,
            str(_K.STEP_EXECUTE_COMPLETED): self._execute_finished,
            str(_K.STEP_EXECUTE_FAILED): self._execute_finished,
            str(_K.EXECUTION_CANCELED): self._canceled,
            str(_K.RPC_EXECUTION_COMPLETED): self._apply_writes,
            str(_K.MESSAGE_PUBLISHED): self._published,
            str(_K.MESSAGE_CONSUMED): self._consumed,
            str(_K.MESSAGE_RETURNED): self._returned,
            str(_K.COMPLETION_REQUESTED): self._completion_requested,
            str(_K.FLOW_CLOSED): self._closed,
        }

    def copy(self) -> MutableState:
        """An independent copy (values are shared: the fold never mutates them)."""
        other = MutableState()
        other.queues = {name: dict(queue) for name, queue in self.queues.items()}
        other.reserved = {name: dict(held) for name, held in self.reserved.items()}
        other.attributes = dict(self.attributes)
        other.active = dict(self.active)
        other.closed = self.closed
        other.completion_requested = self.completion_requested
        other._returning = self._returning
        return other

    def apply(self, event: Event) -> None:
        """Change the state by one event; kinds that change nothing are ignored."""
        kind = str(event.kind)
        if kind != _K.MESSAGE_RETURNED:
            self._returning = None
        handler = self._handlers.get(kind)
        if handler is not None:
            handler(event)

    # ---------------------------------------------------------------- the Flow
    def _started(self, event: Event) -> None:
        payload = event.payload
        if not payload.get("continued"):
            # A fresh run (a retry or a new start) begins from nothing.
            self.queues, self.reserved, self.attributes = {}, {}, {}
            self.active, self.closed, self.completion_requested = {}, None, False
        for channel in items(mapping(payload, "flow"), "channels"):
            if isinstance(channel, Mapping) and channel.get("kind", "channel") == "channel":
                self.queues.setdefault(str(channel.get("name")), {})
        for entry in items(payload, "initial_attributes"):
            if isinstance(entry, Mapping):
                self.attributes[str(entry.get("attribute"))] = entry.get("value")

    def _completion_requested(self, event: Event) -> None:
        del event
        self.completion_requested = True

    def _closed(self, event: Event) -> None:
        self.closed = str(event.payload.get("status", ""))
        self.active.clear()

    def _apply_writes(self, event: Event) -> None:
        for write in items(event.payload, "writes"):
            if not isinstance(write, Mapping):
                continue
            name = str(write.get("attribute"))
            if write.get("deleted"):
                self.attributes.pop(name, None)
            else:
                self.attributes[name] = write.get("value")

    # ---------------------------------------------------------------- executions
    def _created(self, event: Event) -> None:
        if event.execution_id:
            self.active[event.execution_id] = ActiveExecution(
                event.execution_id, event.step_type or "", "queued", event.time_ns,
                text(event.payload, "from_execution_id"),
            )

    def _set_phase(self, event: Event, phase: str, *, attempt: bool = False) -> None:
        current = self.active.get(event.execution_id or "")
        if current is not None:
            method, number = (event.method, event.attempt) if attempt else (None, None)
            self.active[current.execution_id] = current.moved(phase, event.time_ns, method,
                                                              number)

    def _attempt_started(self, event: Event) -> None:
        phase = "execute" if event.method == "execute" else "wait_for"
        self._set_phase(event, phase, attempt=True)

    def _attempt_failed(self, event: Event) -> None:
        if not event.payload.get("final"):
            self._set_phase(event, "backoff")

    def _wait_for_completed(self, event: Event) -> None:
        self._apply_writes(event)
        self._set_phase(event, "waiting")

    def _wait_for_failed(self, event: Event) -> None:
        if text(event.payload, "policy") == "PROCEED":
            self._set_phase(event, "queued")
        else:
            self.active.pop(event.execution_id or "", None)

    def _wait_satisfied(self, event: Event) -> None:
        self._set_phase(event, "queued")

    def _execute_finished(self, event: Event) -> None:
        self._apply_writes(event)
        execution_id = event.execution_id or ""
        self.active.pop(execution_id, None)
        for held in self.reserved.values():
            for message_id in [m for m, r in held.items() if r.execution_id == execution_id]:
                del held[message_id]

    def _canceled(self, event: Event) -> None:
        self.active.pop(event.execution_id or "", None)

    # ---------------------------------------------------------------- messages
    def _published(self, event: Event) -> None:
        channel = str(event.payload.get("channel"))
        message_id = str(event.payload.get("message_id"))
        queued = QueuedMessage(message_id, event.payload.get("value"))
        self.queues.setdefault(channel, {})[message_id] = queued

    def _consumed(self, event: Event) -> None:
        channel = str(event.payload.get("channel"))
        message_id = str(event.payload.get("message_id"))
        consumer = text(event.payload, "consumer") or event.execution_id or ""
        queued = self.queues.setdefault(channel, {}).pop(message_id, None)
        value = queued.value if queued is not None else None
        held = ReservedMessage(message_id, value, consumer)
        self.reserved.setdefault(channel, {})[message_id] = held

    def _returned(self, event: Event) -> None:
        channel = str(event.payload.get("channel"))
        message_id = str(event.payload.get("message_id"))
        origin = text(event.payload, "from") or ""
        held = self.reserved.get(channel, {}).pop(message_id, None)
        value = held.value if held is not None else None
        # One cancellation returns its messages to the front in their original order, so a
        # batch of MessageReturned events inserts one after another, not each at position 0.
        batch = self._returning
        position = batch[2] if batch and batch[:2] == (origin, channel) else 0
        queue = list(self.queues.get(channel, {}).items())
        queue.insert(position, (message_id, QueuedMessage(message_id, value)))
        self.queues[channel] = dict(queue)
        self._returning = (origin, channel, position + 1)
