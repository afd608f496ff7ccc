"""Message deliveries: each Channel message from its publishing commit to the wait that took it.

A message is published once and consumed at most once at a time; a canceled consumer returns it
(R57) and another wait may take it again, so one message can have several deliveries.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from dexviz.analysis.executions import RunSource, as_run
from dexviz.history import EventKind
from dexviz.history.fold import text

__all__ = ["Delivery", "deliveries"]


@dataclass(frozen=True)
class Delivery:
    """One message's trip: published, then (maybe) consumed, then (maybe) returned.

    Attributes:
        message_id: The message id.
        channel: The physical Channel name.
        value: The message value (JSON-ready).
        publisher: An execution id, ``"client"``, ``"rpc:<name>"`` or ``"timeout_handler"``.
        published_ns: When the publishing commit happened.
        consumer: The execution whose wait took it, or None while it is queued.
        consumed_ns: When that wait was satisfied.
        returned_ns: When a canceled consumer gave it back, if it did.
    """

    message_id: str
    channel: str
    value: Any
    publisher: str
    published_ns: int
    consumer: str | None = None
    consumed_ns: int | None = None
    returned_ns: int | None = None


def deliveries(source: RunSource, *, run_id: str | None = None) -> tuple[Delivery, ...]:
    """Every delivery of every message of one run, in order of publication, then consumption."""
    run = as_run(source, run_id)
    rows: list[Delivery] = []
    latest: dict[str, int] = {}
    for event in run.events:
        kind, payload = str(event.kind), event.payload
        message_id = str(payload.get("message_id"))
        if kind == EventKind.MESSAGE_PUBLISHED:
            latest[message_id] = len(rows)
            rows.append(Delivery(message_id, str(payload.get("channel")), payload.get("value"),
                                 text(payload, "publisher") or "client", event.time_ns))
        elif kind == EventKind.MESSAGE_CONSUMED and message_id in latest:
            row = rows[latest[message_id]]
            consumer = text(payload, "consumer") or event.execution_id
            if row.consumer is not None:  # taken again after a return: a new delivery
                latest[message_id] = len(rows)
                rows.append(replace(row, consumer=consumer, consumed_ns=event.time_ns,
                                    returned_ns=None))
            else:
                rows[latest[message_id]] = replace(row, consumer=consumer,
                                                   consumed_ns=event.time_ns)
        elif kind == EventKind.MESSAGE_RETURNED and message_id in latest:
            rows[latest[message_id]] = replace(rows[latest[message_id]], returned_ns=event.time_ns)
    return tuple(rows)
