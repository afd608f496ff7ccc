"""The writing half of the Dex conversion: collected events, and Channel messages.

:class:`Emitter` collects the dexviz events a conversion makes and keeps each Channel's queue,
so that what a wait took (values, without ids) is matched to the messages that were published.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from dexviz.history.dex_fields import CONDITION_STATUS, Fields
from dexviz.history.dex_json import DexRawEvent
from dexviz.history.dex_loss import Losses
from dexviz.history.event import Event
from dexviz.history.kinds import EventKind

__all__ = ["UNKNOWN_KIND", "Emitter"]

UNKNOWN_KIND = "unknown"
"""The kind of an event whose Dex type dexviz does not know (its type stays in the payload)."""

_K = EventKind


@dataclass(frozen=True)
class _Out:
    time_ns: int
    order: int
    kind: str
    run_id: str
    execution_id: str | None
    step_type: str | None
    method: str | None
    attempt: int | None
    payload: dict[str, Any]


class RunState:
    """What one run's walk keeps: queued messages per Channel and created executions."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.queues: dict[str, deque[tuple[str, Any]]] = {}
        self.created: dict[str, int] = {}
        self.waited: set[str] = set()
        self.start_ns = 0


class Emitter:
    """Collects dexviz events and follows the Channels' queues of the run being converted."""

    def __init__(self, losses: Losses) -> None:
        self.losses = losses
        self.out: list[_Out] = []
        self.run = RunState("")

    def emit(self, time_ns: int, kind: str, payload: dict[str, Any], **who: Any) -> None:
        """Add one event (sorted by time at the end; ties keep emission order).

        ``who`` names the event's ``execution_id``, ``step_type``, ``method`` and ``attempt``.
        """
        self.out.append(_Out(time_ns, len(self.out), kind, self.run.run_id,
                             who.get("execution_id"), who.get("step_type"), who.get("method"),
                             who.get("attempt"), payload))

    def events(self, flow_id: str) -> list[Event]:
        """The collected events in time order, numbered from 1."""
        ordered = sorted(self.out, key=lambda o: (o.time_ns, o.order))
        return [Event(n, o.time_ns, o.kind if o.kind == UNKNOWN_KIND else _kind(o.kind),
                      flow_id, o.run_id, o.execution_id, o.step_type, o.method, o.attempt,
                      o.payload) for n, o in enumerate(ordered, 1)]

    def message_id(self, message: Fields, raw: DexRawEvent, number: int) -> str:
        """The message's id, or a name made from the event that published it (stated loss)."""
        given = message.s("messageId")
        if given:
            return given
        self.losses.add("message ids", "messages published without a message id (older "
                                       "servers) are named <run id>/<event id>/<n>")
        return f"{self.run.run_id}/{raw.event_id if raw.event_id is not None else raw.index}/" \
               f"{number}"

    def _publications(self, raw: DexRawEvent, messages: list[Fields]) -> list[dict[str, Any]]:
        found = []
        for number, message in enumerate(messages):
            channel = message.s("channelName")
            found.append({"channel": channel, "message_id": self.message_id(message, raw, number),
                          "value": message.value("value")})
        return found

    def _published(self, time_ns: int, messages: list[dict[str, Any]], publisher: str,
                   who: dict[str, Any]) -> None:
        for message in messages:
            self.run.queues.setdefault(message["channel"], deque()).append(
                (message["message_id"], message["value"]))
            self.emit(time_ns, _K.MESSAGE_PUBLISHED, {**message, "publisher": publisher}, **who)

    def _satisfied(self, execution_id: str, step_type: str, time_ns: int, p: Fields) -> None:
        results = p.m("conditionResults")
        conditions, taken = [], []
        for index, result in enumerate(results.ms("channelResults")):
            if result.enum("conditionStatus", CONDITION_STATUS) == CONDITION_STATUS[2]:
                conditions.append(index)
            channel = result.s("channelName")
            for value in result.values("values"):
                taken.append({"channel": channel, "message_id": self._take(channel, value,
                                                                           execution_id)})
        offset = len(results.ms("channelResults"))
        fired = [n for n, timer in enumerate(results.ms("timerResults"))
                 if timer.enum("conditionStatus", CONDITION_STATUS) == CONDITION_STATUS[2]]
        conditions.extend(offset + n for n in fired)
        if p.b("unavailable"):
            self.losses.add("inputs", f"{execution_id}: its Execute input (and what its wait "
                                      "took) was not retained")
        who: dict[str, Any] = {"execution_id": execution_id, "step_type": step_type}
        self.emit(time_ns, _K.WAIT_SATISFIED, {"conditions": conditions, "timers_fired": fired,
                                               "messages": taken}, **who)
        for message in taken:
            self.emit(time_ns, _K.MESSAGE_CONSUMED, {**message, "consumer": execution_id}, **who)

    def _take(self, channel: str, value: Any, consumer: str) -> str:
        """The id of the oldest queued message of ``channel`` equal to ``value``."""
        queue = self.run.queues.get(channel, deque())
        for position, (message_id, queued) in enumerate(queue):
            if queued == value:
                del queue[position]
                return message_id
        self.losses.add("messages", f"{consumer} took a message of {channel!r} that no event of "
                                    "this run published; its id is unknown")
        return f"unknown/{channel}/{consumer}"


def _kind(name: str) -> EventKind:
    return EventKind(name)
