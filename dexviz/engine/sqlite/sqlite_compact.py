"""Compact payloads for the SQLite store: members equal to their usual value are left out.

Each event kind has a table of members and their usual values (an empty list, ``False``, one
attempt, a start time equal to the event's own time, ...). A member equal to its usual value
(same type and value) is not written; reading puts it back, so a stored event reads back equal
to the one the engine recorded. Members a kind does not list are always written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dexviz.engine.core.completed import PlainCompleted
from dexviz.engine.core.wait_payloads import PlainWaitForCompleted, describe_wait
from dexviz.history.kinds import EventKind

AT_EVENT_TIME = object()
"""The usual value of ``started_ns``: the event's own time (an attempt that ran at once)."""

_COMMITTED = {
    "started_ns": AT_EVENT_TIME,
    "attempts": 1,
    "writes": [],
    "published": [],
    "locals": {},
    "events": {},
}
_DECISION = {
    "next": [],
    "has_output": False,
    "reason": "",
    "canceling_steps": [],
    "canceling_sibling_steps": [],
    "canceled": [],
}
USUAL: dict[Any, dict[str, Any]] = {
    EventKind.FLOW_STARTED_OR_CONTINUED: {
        "initial_attributes": [],
        "continued": False,
        "timeout_s": None,
        "timeout_policy": None,
    },
    EventKind.STEP_WAIT_FOR_COMPLETED: _COMMITTED,
    EventKind.STEP_EXECUTE_COMPLETED: _COMMITTED,
    EventKind.RPC_EXECUTION_COMPLETED: {
        "writes": [],
        "published": [],
        "next": [],
        "canceled": [],
        "is_set_attribute_api": False,
    },
    EventKind.STEP_EXECUTION_CREATED: {"reason": "decision", "has_wait_for": False},
    EventKind.CHANNEL_EXTERNAL_PUBLISH: {"messages": []},
    EventKind.WAIT_SATISFIED: {"conditions": [], "timers_fired": [], "messages": []},
    EventKind.EXECUTION_CANCELED: {"returned": []},
    EventKind.FLOW_CLOSED: {"outputs": [], "error_type": None, "error_message": None},
}
"""Per event kind: the members left out when they hold their usual value."""
NESTED = {"decision": _DECISION}
"""Members whose own members are compacted the same way."""


def _usual(value: Any, usual: Any, time_ns: int) -> bool:
    if usual is AT_EVENT_TIME:
        return type(value) is int and value == time_ns
    return type(value) is type(usual) and value == usual


def compact(kind: Any, payload: Mapping[str, Any], time_ns: int) -> Mapping[str, Any]:
    """``payload`` without its members that hold their usual value."""
    usual = USUAL.get(kind)
    if usual is None:
        return payload
    kept = dict(payload)
    for key, value in usual.items():
        if key in kept and _usual(kept[key], value, time_ns):
            del kept[key]
    for key, nested in NESTED.items():
        inner = kept.get(key)
        if type(inner) is dict:
            kept[key] = _compact_nested(inner, nested)
    return kept


def _compact_nested(value: dict[str, Any], usual: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in value.items() if not (k in usual and _usual(v, usual[k], 0))}


def expand(kind: Any, payload: dict[str, Any], time_ns: int) -> dict[str, Any]:
    """Put back the members :func:`compact` left out (in place; returns ``payload``)."""
    usual = _PUT_BACK.get(kind)
    if usual is None:
        return payload
    for key, value, fresh in usual:
        if key not in payload:
            if fresh is not None:
                payload[key] = fresh()
            else:
                payload[key] = time_ns if value is AT_EVENT_TIME else value
    for key, nested in _NESTED_PUT_BACK:
        inner = payload.get(key)
        if type(inner) is dict:
            for member, value, fresh in nested:
                if member not in inner:
                    inner[member] = fresh() if fresh is not None else value
    return payload


def _put_back(usual: dict[str, Any]) -> tuple[tuple[str, Any, Callable[[], Any] | None], ...]:
    """Each member, its usual value, and what makes a new one of it (None: the value itself).

    A list or dict is made anew for each event (never shared between events).
    """
    return tuple(
        (key, value, type(value) if type(value) in (list, dict) else None)
        for key, value in usual.items()
    )


_PUT_BACK = {kind: _put_back(usual) for kind, usual in USUAL.items()}
_NESTED_PUT_BACK = tuple((key, _put_back(usual)) for key, usual in NESTED.items())


def compact_payload(kind: Any, payload: Mapping[str, Any], time_ns: int) -> Mapping[str, Any]:
    """What a store writes of ``payload``: :func:`compact` of its dict (empty: nothing).

    The fast path's usual payloads are compacted from their own values, without building
    their whole dict first (and without keeping it: the payload stays unbuilt in memory).
    """
    direct = _DIRECT.get(type(payload))
    if direct is not None:
        return direct(payload, time_ns)
    built: Mapping[str, Any] = getattr(payload, "value", payload)  # a Payload is built now
    return compact(kind, built, time_ns) if built else built


def _completed(payload: Any, time_ns: int) -> dict[str, Any]:
    """:func:`compact` of a ``PlainCompleted``'s dict, member for member and in its order."""
    p: PlainCompleted = payload
    kept = _attempt_members(p._started_ns, p._attempts, time_ns)
    decision: dict[str, Any] = {"kind": p._kind}
    if p._new:  # an Execution, or a non-empty tuple of them
        decision["next"] = p.next_entries()
    if not _usual(p._has_output, False, 0):
        decision["has_output"] = p._has_output
    if not _usual(p._reason, "", 0):
        decision["reason"] = p._reason
    if p._has_output:
        decision["output"] = p._output
    kept["decision"] = decision
    if p._published:
        kept["published"] = list(p._published)
    return kept


def _wait_for_completed(payload: Any, time_ns: int) -> dict[str, Any]:
    """:func:`compact` of a ``PlainWaitForCompleted``'s dict, member for member and in order."""
    p: PlainWaitForCompleted = payload
    kept = _attempt_members(p._started_ns, p._attempts, time_ns)
    kept["wait"] = describe_wait(p._wait)
    return kept


def _attempt_members(started_ns: int, attempts: int, time_ns: int) -> dict[str, Any]:
    """A committed method's ``started_ns`` and ``attempts``, each only when not its usual."""
    kept: dict[str, Any] = {}
    if not _usual(started_ns, AT_EVENT_TIME, time_ns):
        kept["started_ns"] = started_ns
    if not _usual(attempts, 1, time_ns):
        kept["attempts"] = attempts
    return kept


_DIRECT: dict[type, Callable[[Any, int], dict[str, Any]]] = {
    PlainCompleted: _completed,
    PlainWaitForCompleted: _wait_for_completed,
}
