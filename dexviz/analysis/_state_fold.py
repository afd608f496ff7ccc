"""The mutable state behind ``StateFolder``: a HistoryFold of queues, Attributes and executions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dexviz.history import Event, EventKind
from dexviz.history.fold import HistoryFold, items, mapping, text
from dexviz.history.instance_names import shown_name

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


class MutableState(HistoryFold):
    """Queues, reservations, Attributes and active executions, changed event by event.

    Channels and Attributes are keyed by the name a view shows (``shown_name``): a map
    instance's key as the user gave it, not its percent-encoded physical form.
    """

    def __init__(self) -> None:
        # Values are the frozen objects views hand out, so a view copies no message or record.
        self.queues: dict[str, dict[str, QueuedMessage]] = {}
        self.reserved: dict[str, dict[str, ReservedMessage]] = {}
        self.attributes: dict[str, Any] = {}
        self.active: dict[str, ActiveExecution] = {}
        self.closed: str | None = None
        self.completion_requested = False
        self._returning: tuple[str, str, int] | None = None

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
        if event.kind != _K.MESSAGE_RETURNED:
            self._returning = None
        super().apply(event)

    # ---------------------------------------------------------------- the Flow
    def on_flow_started_or_continued(self, event: Event) -> None:
        """A fresh run starts from nothing; declared Channels and initial Attributes appear."""
        payload = event.payload
        if not payload.get("continued"):
            # A fresh run (a retry or a new start) begins from nothing.
            self.queues, self.reserved, self.attributes = {}, {}, {}
            self.active, self.closed, self.completion_requested = {}, None, False
        for channel in items(mapping(payload, "flow"), "channels"):
            if isinstance(channel, Mapping) and channel.get("kind", "channel") == "channel":
                self.queues.setdefault(shown_name(str(channel.get("name"))), {})
        for entry in items(payload, "initial_attributes"):
            if isinstance(entry, Mapping):
                self.attributes[shown_name(str(entry.get("attribute")))] = entry.get("value")

    def on_completion_requested(self, event: Event) -> None:
        """A graceful completion was requested."""
        del event
        self.completion_requested = True

    def on_flow_closed(self, event: Event) -> None:
        """The run closed: no execution is active."""
        self.closed = str(event.payload.get("status", ""))
        self.active.clear()

    def _apply_writes(self, event: Event) -> None:
        """The commit's Attribute writes."""
        for write in items(event.payload, "writes"):
            if not isinstance(write, Mapping):
                continue
            name = shown_name(str(write.get("attribute")))
            if write.get("deleted"):
                self.attributes.pop(name, None)
            else:
                self.attributes[name] = write.get("value")

    # ---------------------------------------------------------------- executions
    def on_step_execution_created(self, event: Event) -> None:
        """The execution is active and queued."""
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

    def on_attempt_started(self, event: Event) -> None:
        """The execution runs its WaitFor or Execute."""
        phase = "execute" if event.method == "execute" else "wait_for"
        self._set_phase(event, phase, attempt=True)

    def on_attempt_failed(self, event: Event) -> None:
        """The execution backs off until its retry (a final failure changes nothing)."""
        if not event.payload.get("final"):
            self._set_phase(event, "backoff")

    def on_step_wait_for_completed(self, event: Event) -> None:
        """The WaitFor's writes; the execution waits."""
        self._apply_writes(event)
        self._set_phase(event, "waiting")

    def on_step_wait_for_failed(self, event: Event) -> None:
        """Under PROCEED the execution is queued for Execute; otherwise it ends."""
        if text(event.payload, "policy") == "PROCEED":
            self._set_phase(event, "queued")
        else:
            self.active.pop(event.execution_id or "", None)

    def on_wait_satisfied(self, event: Event) -> None:
        """The execution is queued for its Execute."""
        self._set_phase(event, "queued")

    def on_step_execute_completed(self, event: Event) -> None:
        """The writes; the execution ends and its reserved messages are gone."""
        self._apply_writes(event)
        execution_id = event.execution_id or ""
        self.active.pop(execution_id, None)
        for held in self.reserved.values():
            for message_id in [m for m, r in held.items() if r.execution_id == execution_id]:
                del held[message_id]

    def on_execution_canceled(self, event: Event) -> None:
        """The execution ends."""
        self.active.pop(event.execution_id or "", None)

    # ---------------------------------------------------------------- messages
    def on_message_published(self, event: Event) -> None:
        """The message joins the back of its queue."""
        channel = shown_name(str(event.payload.get("channel")))
        message_id = str(event.payload.get("message_id"))
        queued = QueuedMessage(message_id, event.payload.get("value"))
        self.queues.setdefault(channel, {})[message_id] = queued

    def on_message_consumed(self, event: Event) -> None:
        """The message moves from its queue to its consumer's reservations."""
        channel = shown_name(str(event.payload.get("channel")))
        message_id = str(event.payload.get("message_id"))
        consumer = text(event.payload, "consumer") or event.execution_id or ""
        queued = self.queues.setdefault(channel, {}).pop(message_id, None)
        value = queued.value if queued is not None else None
        held = ReservedMessage(message_id, value, consumer)
        self.reserved.setdefault(channel, {})[message_id] = held

    def on_message_returned(self, event: Event) -> None:
        """The message goes back to the front of its queue, in batch order."""
        channel = shown_name(str(event.payload.get("channel")))
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

    on_step_execute_failed = on_step_execute_completed
    on_rpc_execution_completed = _apply_writes
