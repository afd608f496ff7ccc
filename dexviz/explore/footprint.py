"""Footprints: what one step of a run read and wrote, and whether two steps commute.

A step is one engine unit (or one client action) and its commit. Its footprint names the
resources it touched — ``exec:<id>`` (an execution), ``chan:<name>`` (a Channel's queue and
waiters), ``attr:<name>`` and ``attr:*`` (Attributes), ``run`` (the Flow's status and close) —
read from the events it committed. Two steps commute when neither writes what the other reads
or writes; then running them in either order reaches the same state, and the reduction explores
one order only. Every rule errs towards "dependent", which costs schedules, never soundness:

- an attempt reads every Attribute (its snapshot), so it depends on every Attribute write;
- a commit that ends or fails an execution reads ``run`` (it may close a gracefully completing
  Flow); decisions that complete, fail or close the Flow write it;
- a step that makes an execution check its Wait reads the Wait's Channels;
- a client action depends on every step that touches anything (it may be refused, or not,
  depending on what ran before it);
- a step that commits no event (an asyncio wake-up of a handler) reads its own execution,
  found through the Task it steps (whether it was canceled decides what it does next); when
  no owner is found it reads everything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dexviz.history.event import Event
from dexviz.history.kinds import EventKind

ALL_ATTRIBUTES = "attr:*"
ANY = "*"
RUN = "run"

_READS_RUN = frozenset(
    {
        EventKind.STEP_EXECUTE_COMPLETED,
        EventKind.STEP_EXECUTE_FAILED,
        EventKind.STEP_WAIT_FOR_FAILED,
        EventKind.EXECUTION_CANCELED,
    }
)
_WRITES_RUN = frozenset(
    {
        EventKind.FLOW_CLOSED,
        EventKind.FLOW_STARTED_OR_CONTINUED,
        EventKind.COMPLETION_REQUESTED,
        EventKind.RPC_EXECUTION_COMPLETED,
        EventKind.TIME_TRAVEL_FORK,
    }
)


@dataclass(frozen=True)
class Footprint:
    """The resources one step read and wrote."""

    reads: frozenset[str]
    writes: frozenset[str]

    @classmethod
    def empty(cls) -> Footprint:
        """A step that touched nothing shared."""
        return _EMPTY

    @classmethod
    def everything(cls) -> Footprint:
        """A step assumed to depend on every other step."""
        return _EVERYTHING

    @classmethod
    def reading(cls, *resources: str) -> Footprint:
        """A step that only read ``resources`` (``"*"``: anything)."""
        return cls(frozenset(resources), frozenset())

    def depends_on(self, other: Footprint) -> bool:
        """Whether the two steps may not commute (one writes what the other touches)."""
        w1, w2 = self.writes, other.writes
        if not w1 and not w2:
            return False
        r1, r2 = self.reads, other.reads
        if ANY in w1:
            return bool(w2 or r2)
        if ANY in w2:
            return bool(w1 or r1)
        if (ANY in r1 and w2) or (ANY in r2 and w1):
            return True
        return not w1.isdisjoint(w2) or not w1.isdisjoint(r2) or not w2.isdisjoint(r1)

    def __or__(self, other: Footprint) -> Footprint:
        return Footprint(self.reads | other.reads, self.writes | other.writes)


_EMPTY = Footprint(frozenset(), frozenset())
_EVERYTHING = Footprint(frozenset({ANY}), frozenset({ANY}))


def _channels(payload: Mapping[str, Any]) -> Iterable[str]:
    channel = payload.get("channel")
    if isinstance(channel, str):
        yield channel
    for message in payload.get("messages") or ():
        if isinstance(message, Mapping) and isinstance(message.get("channel"), str):
            yield message["channel"]
    wait = payload.get("wait")
    if isinstance(wait, Mapping):
        for condition in wait.get("conditions") or ():
            if isinstance(condition, Mapping) and isinstance(condition.get("channel"), str):
                yield condition["channel"]


def _attributes(payload: Mapping[str, Any]) -> Iterable[str]:
    for write in payload.get("writes") or ():
        name = write.get("attribute") if isinstance(write, Mapping) else None
        yield f"attr:{name if name is not None else write}"


def footprint_of(
    events: Iterable[Event], waits: Callable[[str], Iterable[str]] = lambda _: ()
) -> Footprint:
    """The footprint of a step from the events it committed.

    ``waits(execution_id)`` names the Channels that execution's Wait reads: a step that made it
    check its Wait (a timer firing, a WaitFor committing) read them even if it took nothing.
    """
    reads: set[str] = set()
    writes: set[str] = set()
    seen: set[str] = set()
    for event in events:
        kind = event.kind
        execution_id = event.execution_id
        if execution_id is not None:
            writes.add(f"exec:{execution_id}")
            if execution_id not in seen:
                seen.add(execution_id)
                reads.update(f"chan:{c}" for c in waits(execution_id))
        elif kind not in (EventKind.CHANNEL_EXTERNAL_PUBLISH,):
            writes.add(RUN)
        _add_event(event, reads, writes)
    if not reads and not writes:
        return _EMPTY
    return Footprint(frozenset(reads), frozenset(writes))


def _add_event(event: Event, reads: set[str], writes: set[str]) -> None:
    kind = event.kind
    if kind == EventKind.ATTEMPT_STARTED or kind == EventKind.RPC_EXECUTION_COMPLETED:
        reads.add(ALL_ATTRIBUTES)
    if kind in _READS_RUN:
        reads.add(RUN)
    if kind in _WRITES_RUN or _closes_run(event):
        writes.add(RUN)
    payload = event.payload
    if payload:
        writes.update(f"chan:{c}" for c in _channels(payload))
        attributes = list(_attributes(payload))
        if attributes:
            writes.update(attributes)
            writes.add(ALL_ATTRIBUTES)


def _closes_run(event: Event) -> bool:
    if event.kind != EventKind.STEP_EXECUTE_COMPLETED:
        return False
    decision = event.payload.get("decision")
    kind = decision.get("kind") if isinstance(decision, Mapping) else None
    return kind not in (None, "NEXT", "DEAD_END")
