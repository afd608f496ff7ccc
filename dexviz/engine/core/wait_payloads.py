"""StepWaitForCompleted's payload: the Wait described for the history, built on first read.

A Wait is immutable, so the engine keeps it (shared, for a one-Channel Wait) and describes it
only when the payload is read, saved or stored.
"""

from __future__ import annotations

from typing import Any

from dexviz.engine.core.effects import committed_payload
from dexviz.history.event import Payload
from dexviz.sdk.codec import to_json_ready
from dexviz.sdk.condition import ChannelCondition, SubFlowCondition, TimerCondition
from dexviz.sdk.wait import Wait


def describe_wait(wait: Wait) -> dict[str, Any]:
    """The JSON-ready description of a Wait recorded in StepWaitForCompleted."""
    index = {id(c): i for i, c in enumerate(wait.conditions)}
    conditions: list[dict[str, Any]] = []
    timer_index = subflow_index = 0
    for i, condition in enumerate(wait.conditions):
        entry: dict[str, Any] = {"index": i, "condition_id": condition.condition_id}
        if isinstance(condition, ChannelCondition):
            entry.update(
                kind="channel",
                channel=condition.physical_name,
                at_least=condition.at_least,
                at_most=condition.at_most,
                label=condition.label(),
            )
        elif isinstance(condition, TimerCondition):
            entry.update(
                kind="timer", timer_index=timer_index, duration_s=condition.duration.total_seconds()
            )
            timer_index += 1
        elif isinstance(condition, SubFlowCondition):
            entry.update(
                kind="subflow",
                subflow_index=subflow_index,
                flow_type=_flow_type(condition.flow),
                input=to_json_ready(condition.input),
            )
            subflow_index += 1
        conditions.append(entry)
    return {
        "kind": wait.kind.name,
        "conditions": conditions,
        "combinations": [[index[id(c)] for c in combo.conditions] for combo in wait.combinations],
    }


def _flow_type(flow: Any) -> str:
    """The Flow type a SubFlow condition names (an instance, a Flow class, or the type)."""
    if isinstance(flow, str):
        return flow
    if isinstance(flow, type):
        return flow.__name__
    return str(flow.get_flow_type())


def wait_for_completed_payload(
    started_ns: int,
    attempts: int,
    wait: Wait,
    writes: tuple[dict[str, Any], ...],
    published: tuple[str, ...],
    staged: tuple[dict[str, Any], dict[str, Any], tuple[str, ...]],
) -> dict[str, Any]:
    """The payload of StepWaitForCompleted (a Wait is immutable, so it is described on read)."""
    return committed_payload(
        started_ns, attempts, "wait", describe_wait(wait), writes, published, staged
    )


class WaitForCompleted(Payload):
    """StepWaitForCompleted's payload: the commit's values in its own slots.

    The same dict :func:`wait_for_completed_payload` builds, built on first read; one object
    instead of a ``LazyPayload`` and its argument tuple (a parked Flow keeps it: ~40 B less).
    """

    __slots__ = ("_started_ns", "_attempts", "_wait", "_writes", "_published", "_staged")

    def __init__(
        self,
        started_ns: int,
        attempts: int,
        wait: Wait,
        writes: tuple[dict[str, Any], ...],
        published: tuple[str, ...],
        staged: tuple[dict[str, Any], dict[str, Any], tuple[str, ...]],
    ) -> None:
        self._value = None
        self._started_ns = started_ns
        self._attempts = attempts
        self._wait = wait
        self._writes = writes
        self._published = published
        self._staged = staged

    def _make(self) -> dict[str, Any]:
        return wait_for_completed_payload(
            self._started_ns,
            self._attempts,
            self._wait,
            self._writes,
            self._published,
            self._staged,
        )


class PlainWaitForCompleted(Payload):
    """StepWaitForCompleted's payload for a WaitFor that wrote, published and staged nothing.

    The usual WaitFor, and what a parked Flow keeps: three values instead of six.
    """

    __slots__ = ("_started_ns", "_attempts", "_wait")

    def __init__(self, started_ns: int, attempts: int, wait: Wait) -> None:
        self._value = None
        self._started_ns = started_ns
        self._attempts = attempts
        self._wait = wait

    def _make(self) -> dict[str, Any]:
        return wait_for_completed_payload(self._started_ns, self._attempts, self._wait, (), (),
                                          _NOTHING_STAGED)  # fmt: skip


_NOTHING_STAGED: tuple[dict[str, Any], dict[str, Any], tuple[str, ...]] = ({}, {}, ())
