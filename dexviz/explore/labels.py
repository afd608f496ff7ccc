"""Step labels: one line saying what a step of a schedule committed, for traces and graphs."""

from __future__ import annotations

from collections.abc import Sequence

from dexviz.history.event import Event
from dexviz.history.instance_names import shown_name
from dexviz.history.kinds import EventKind


def describe(events: Sequence[Event]) -> str:
    """A short label of what a step committed, for traces and the state graph."""
    if not events:
        return "(a handler's coroutine resumes; nothing committed)"
    parts: list[str] = []
    for event in events:
        text = _phrase(event)
        if text and text not in parts:
            parts.append(text)
    if parts:
        return "; ".join(parts)
    first = events[0]
    method = f" {first.method}" if first.method else ""
    return f"{first.execution_id or 'Flow'} {first.kind}{method}"


def _phrase(event: Event) -> str | None:
    who, kind, payload = event.execution_id or "Flow", event.kind, event.payload
    if kind == EventKind.STEP_WAIT_FOR_COMPLETED:
        return f"{who} wait_for"
    if kind == EventKind.STEP_EXECUTE_COMPLETED:
        decision = payload.get("decision") or {}
        nexts = [n.get("execution_id") for n in decision.get("next") or ()]
        target = f" -> {', '.join(map(str, nexts))}" if nexts else ""
        return f"{who} execute: {decision.get('kind', '?')}{target}"
    if kind in (EventKind.MESSAGE_PUBLISHED, EventKind.MESSAGE_CONSUMED):
        verb = "publishes" if kind == EventKind.MESSAGE_PUBLISHED else "takes"
        by = payload.get("publisher") if kind == EventKind.MESSAGE_PUBLISHED else who
        return f"{by} {verb} {shown_name(str(payload.get('channel')))}"
    if kind == EventKind.ATTEMPT_FAILED:
        return f"{who} attempt {event.attempt} fails ({payload.get('error_message')})"
    if kind in (EventKind.TIMER_FIRED, EventKind.EXECUTION_CANCELED, EventKind.FLOW_CLOSED,
                EventKind.MESSAGE_RETURNED, EventKind.STEP_EXECUTE_FAILED,
                EventKind.CHANNEL_EXTERNAL_PUBLISH, EventKind.RPC_EXECUTION_COMPLETED):
        status = payload.get("status")
        return f"{who} {kind}" + (f" {status}" if status else "")
    return None
