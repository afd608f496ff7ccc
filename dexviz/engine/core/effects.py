"""Applying a committed attempt's staged effects: Attribute writes, publications, deletions."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dexviz.engine.core.context import DELETED, Staged
from dexviz.engine.core.recorder import Recorder
from dexviz.engine.core.state import FlowRun, Message
from dexviz.history.event import LazyPayload
from dexviz.history.kinds import EventKind
from dexviz.sdk.codec import to_json_ready

_SCALARS = frozenset({type(None), str, bool, int})
"""Value types that are JSON-ready as they are (``to_json_ready`` returns the value itself)."""


def apply_writes(run: FlowRun, staged: Staged) -> list[dict[str, Any]]:
    """Apply staged Attribute writes and deletions (last write per key wins, R66)."""
    payload: list[dict[str, Any]] = []
    if not staged.writes:
        return payload  # without creating the run's Attribute container
    attributes = run.attributes
    for key, (_, value) in staged.writes.items():
        if value is DELETED:
            attributes.pop(key, None)
            payload.append({"attribute": key, "value": None, "deleted": True})
        else:
            attributes[key] = value
            payload.append({"attribute": key, "value": to_json_ready(value), "deleted": False})
    return payload


def apply_publishes(run: FlowRun, staged: Staged) -> list[Message]:
    """Append staged publications to their queues in call order (R50) and return the messages."""
    messages: list[Message] = []
    queues = run.queues
    for key, value in staged.publishes:
        message = run.next_message(key, value)
        queue = queues.get(key)  # FlowRun.queue, inlined: one lookup per publication
        if queue is None:
            queue = queues[key] = deque()
        queue.append(message)
        messages.append(message)
    return messages


def apply_deletes(run: FlowRun, staged: Staged, *, strict: bool) -> list[str]:
    """Delete staged pending messages; a missing id is ignored unless ``strict`` (R61)."""
    deleted: list[str] = []
    for key, message_id in staged.deletes:
        queue = run.queues_view.get(key)
        found = next((m for m in queue or () if m.message_id == message_id), None)
        if found is None:
            if strict:
                raise KeyError(message_id)
            continue
        assert queue is not None
        queue.remove(found)
        deleted.append(message_id)
    return deleted


def check_deletes(run: FlowRun, staged: Staged) -> str | None:
    """Return the first staged deletion whose message is not queued (for transactional RPCs)."""
    for key, message_id in staged.deletes:
        if not any(m.message_id == message_id for m in run.queues_view.get(key, ())):
            return message_id
    return None


def published_event_payload(message: Message, publisher: str) -> Mapping[str, Any]:
    """MessagePublished's payload: for a scalar value a dict of scalars, else built on read.

    A scalar value is JSON-ready as it is, and a dict of scalars is never tracked by the
    garbage collector.
    """
    value = message.value
    if type(value) in _SCALARS:
        return {"channel": message.channel, "message_id": message.message_id, "value": value,
                "publisher": publisher}  # fmt: skip
    return LazyPayload(published_payload, message.channel, message.message_id, value, publisher)


def emit_published(
    recorder: Recorder, run: FlowRun, messages: list[Message], publisher: str, execution: Any = None
) -> None:
    """Record one MessagePublished event per message, in publication order."""
    payloads = [published_event_payload(message, publisher) for message in messages]
    recorder.emit_all(run, EventKind.MESSAGE_PUBLISHED, execution, payloads)


def published_payload(channel: str, message_id: str, value: Any, publisher: str) -> dict[str, Any]:
    """The payload of MessagePublished (the value is the engine's private copy)."""
    return {
        "channel": channel,
        "message_id": message_id,
        "value": to_json_ready(value),
        "publisher": publisher,
    }


_NO_STAGED: tuple[dict[str, Any], dict[str, Any], tuple[str, ...]] = ({}, {}, ())


def staged_values(staged: Staged) -> tuple[dict[str, Any], dict[str, Any], tuple[str, ...]]:
    """The attempt's locals, events and deleted message ids, JSON-ready now (values may change)."""
    if not staged.locals and not staged.events and not staged.deletes:
        return _NO_STAGED
    return (
        {k: to_json_ready(v) for k, v in staged.locals.items()},
        {k: to_json_ready(v) for k, v in staged.events.items()},
        tuple(message_id for _, message_id in staged.deletes),
    )


def committed_payload(
    started_ns: int,
    attempts: int,
    member: str,
    value: Any,
    writes: Sequence[dict[str, Any]],
    published: Sequence[str],
    staged: tuple[dict[str, Any], dict[str, Any], tuple[str, ...]],
) -> dict[str, Any]:
    """The payload of a committed method (StepWaitForCompleted, StepExecuteCompleted).

    ``member`` names what the method returned (``wait`` or ``decision``), ``value`` its
    JSON-ready form; the members follow docs/history-format.md's order.
    """
    return {
        "started_ns": started_ns,
        "attempts": attempts,
        member: value,
        "writes": list(writes),
        "published": list(published),
        **staged_payload_of(*staged),
    }


def staged_payload_of(
    locals: dict[str, Any], events: dict[str, Any], deleted: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The ``locals``, ``events`` (and ``deleted_messages``) members, from :func:`staged_values`.

    Deletions are listed only when there are some, so a store can rebuild the queues (recovery).
    """
    payload: dict[str, Any] = {"locals": dict(locals), "events": dict(events)}
    if deleted:
        payload["deleted_messages"] = list(deleted)
    return payload


def staged_payload(staged: Staged, ready: Callable[[Any], Any] = to_json_ready) -> dict[str, Any]:
    """The locals, recorded events and message deletions of an attempt, JSON-ready.

    Deletions are listed only when there are some, so a store can rebuild the queues (recovery).
    """
    payload: dict[str, Any] = {
        "locals": {k: ready(v) for k, v in staged.locals.items()},
        "events": {k: ready(v) for k, v in staged.events.items()},
    }
    if staged.deletes:
        payload["deleted_messages"] = [message_id for _, message_id in staged.deletes]
    return payload
