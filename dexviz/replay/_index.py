"""Facts about a history's events that the debugger looks up, indexed as the events arrive.

The index only ever grows (a replayed History is indexed once, a live engine's new events are
added as they are pulled), so every lookup the panels and the graph highlighting make per step
is a dictionary access rather than a scan of the history.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from dexviz.history import Event, EventKind

_K = EventKind


@dataclass(frozen=True)
class MessageInfo:
    """Where a message came from: its Channel, value and publisher."""

    channel: str
    value: Any
    publisher: str


class HistoryIndex:
    """Lookups over one Flow's events: creations, inputs, messages, kinds, labels.

    Keys that a later run could reuse (execution ids, message ids) are qualified by run id.
    """

    def __init__(self) -> None:
        self.count = 0
        self.created_at: dict[tuple[str, str], int] = {}
        self.inputs: dict[tuple[str, str], Any] = {}
        self.messages: dict[tuple[str, str], MessageInfo] = {}
        self.closed_at: dict[str, int] = {}
        self.run_start_ns: dict[str, int] = {}
        self.kinds: dict[str, None] = {}
        self.executions: dict[str, str] = {}
        self.step_types: dict[str, None] = {}
        self.labels: list[str] = []

    def add(self, events: Iterable[Event]) -> None:
        """Index events that follow the ones already indexed."""
        for event in events:
            self._add(event, self.count)
            self.count += 1

    def _add(self, event: Event, index: int) -> None:
        kind = str(event.kind)
        run = event.run_id
        self.run_start_ns.setdefault(run, event.time_ns)
        self.kinds.setdefault(kind)
        if event.execution_id and event.step_type:
            self.executions.setdefault(event.execution_id, event.step_type)
            self.step_types.setdefault(event.step_type)
        if kind == _K.STEP_EXECUTION_CREATED and event.execution_id:
            self.created_at.setdefault((run, event.execution_id), index)
            self.inputs[(run, event.execution_id)] = event.payload.get("input")
        elif kind == _K.MESSAGE_PUBLISHED:
            payload = event.payload
            info = MessageInfo(str(payload.get("channel")), payload.get("value"),
                               str(payload.get("publisher") or "client"))
            self.messages[(run, str(payload.get("message_id")))] = info
        elif kind == _K.FLOW_CLOSED:
            self.closed_at.setdefault(run, index)
        self.labels.append(self.label(event))

    def label(self, event: Event) -> str:
        """One line for the event list: ``#18 +2.000s MessageConsumed EnterContractEdit-7``."""
        offset = (event.time_ns - self.run_start_ns.get(event.run_id, event.time_ns)) / 1e9
        who = f" {event.execution_id}" if event.execution_id else ""
        return f"#{event.seq} +{offset:.3f}s {event.kind}{who}"

    def seconds(self, event: Event) -> float:
        """Seconds from the start of the event's run to the event."""
        return (event.time_ns - self.run_start_ns.get(event.run_id, event.time_ns)) / 1e9

    def input_of(self, run_id: str, execution_id: str) -> tuple[bool, Any]:
        """``(True, input)`` when the execution's creation was seen, else ``(False, None)``."""
        key = (run_id, execution_id)
        return (key in self.inputs, self.inputs.get(key))

    def message(self, run_id: str, message_id: str) -> MessageInfo | None:
        """The publication of ``message_id`` in ``run_id``, if it was seen."""
        return self.messages.get((run_id, message_id))
