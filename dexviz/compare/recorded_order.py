"""RecordedOrder: the chooser that makes a replay follow a run's recorded order of work.

A replay cannot trust the recorded seed to reproduce the recorded schedule: runs that shared
an engine with other Flows drew their choices from one seeded source with them, and the seed
says nothing of the order once the code changed. So the replay engine runs with this chooser
(the engine's :class:`~dexviz.engine.core.choice.Chooser` hook) instead. Before each pick among
ready units it looks at the next recorded event the replay has not produced yet, and takes the
ready unit that acts for that event's execution (preferring the one whose kind of work, such
as the first attempt of ``execute`` or a fired timer, is that event's). Each published message
is offered first to the waiter the record says took one next. When no ready unit can produce
the next recorded event, the order diverges there: the chooser notes an
:class:`OrderDivergence` and makes every later pick in queue order.

Units are engine records (:mod:`dexviz.engine.core.units`, ``QueuedStart``) that name their run and
execution; an asyncio callback of a coroutine handler is attributed to its execution through
its Task, as the explorer does (:func:`dexviz.explore.owners.owner_of`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass
from typing import Any

from dexviz.engine.attempt.invoke import QueuedStart
from dexviz.engine.core.choice import FaultPoint
from dexviz.engine.core.loop import LoopCallback
from dexviz.engine.core.units import TimerFired, Unit
from dexviz.explore.owners import owner_of
from dexviz.history import Event, EventKind

__all__ = ["OrderDivergence", "RecordedOrder"]

_FROM_CLIENT = frozenset({EventKind.CHANNEL_EXTERNAL_PUBLISH})
"""Recorded events no unit produces: the replay makes them itself between units."""

_ATTEMPT_KINDS = frozenset({"retry", "lock", "resume"})
"""Unit kinds whose work starts with an ``AttemptStarted``."""

_MISMATCH, _UNKNOWN, _SAME_EXECUTION, _SAME_WORK = -1, 0, 1, 2

_INDEXED = 16
"""From this many ready units on, a pick looks its unit up in a kept index (else it scans)."""


@dataclass(frozen=True)
class OrderDivergence:
    """The first recorded event the replay could not produce in its recorded place.

    Attributes:
        seq: The recorded event's ``seq``.
        kind: Its kind.
        execution_id: Its execution (None for an event of the run as a whole).
        step_type: Its Step type.
        method: Its method.
        replayed: What the replay did instead: ``{"ready": [...]}`` when none of the units it
            had ready acts for that execution (each as ``"execution work"``), else the event
            it committed in that place (``kind``, ``execution_id``, ``method``).
    """

    seq: int
    kind: str
    execution_id: str | None
    step_type: str | None
    method: str | None
    replayed: dict[str, Any]

    @classmethod
    def of(cls, recorded: Event, replayed: dict[str, Any]) -> OrderDivergence:
        """The divergence at ``recorded``, where the replay did ``replayed`` instead."""
        return cls(
            recorded.seq,
            str(recorded.kind),
            recorded.execution_id,
            recorded.step_type,
            recorded.method,
            replayed,
        )

    @property
    def recorded(self) -> dict[str, Any]:
        """The recorded side, as a Divergence states it."""
        return {"kind": self.kind, "execution_id": self.execution_id, "method": self.method}


class RecordedOrder:
    """A :class:`~dexviz.engine.core.choice.Chooser` that follows one recorded run's events.

    The replay's store tells it each commit of the replayed Flow (:meth:`committed`): that is
    how far the replay has come, and which replayed execution each recorded one is (a history
    whose executions were numbered otherwise replays as well).

    Args:
        flow_id: The replayed Flow's id.
        events: The recorded run's events, in order.
        tasks: The replay's coroutine Tasks, each mapped to its execution id (looked up
            again whenever a Task is not in it yet).
    """

    def __init__(
        self,
        flow_id: str,
        events: Sequence[Event],
        tasks: Callable[[], dict[asyncio.Task[Any], str]],
    ) -> None:
        self._flow_id = flow_id
        self._events = events
        self._tasks_of = tasks
        self.produced = 0
        self._renamed: dict[str, str] = {}
        self._tasks: dict[asyncio.Task[Any], str] = {}
        # The recorded waits satisfied, in order: which waiter took a message next.
        self._satisfied = [
            (e.seq, e.execution_id)
            for e in events
            if e.kind == EventKind.WAIT_SATISFIED and e.execution_id
        ]
        self._next_satisfied = 0
        self._index = _ReadyIndex()
        # Each waiter list's positions by execution id, as last seen (checked on every use).
        self._waiter_positions: dict[int, dict[str, int]] = {}
        self.divergence: OrderDivergence | None = None

    def committed(self, events: Sequence[Event]) -> None:
        """The replayed Flow committed ``events``: check them against the record, move on.

        Each must be the recorded event in its place (kind, execution, method); the
        executions it creates are paired with the recorded ones, whatever their numbers.
        """
        start = self.produced
        self.produced = start + len(events)
        if self.divergence is not None:
            return
        recorded = self._events[start : self.produced]
        for mine, theirs in zip(recorded, events, strict=False):
            if not self._same_place(mine, theirs):
                self.divergence = OrderDivergence.of(
                    mine,
                    {
                        "kind": str(theirs.kind),
                        "execution_id": theirs.execution_id,
                        "method": theirs.method,
                    },
                )
                return

    def _same_place(self, mine: Event, theirs: Event) -> bool:
        if mine.kind != theirs.kind or mine.step_type != theirs.step_type:
            return False
        expected, found = mine.execution_id, theirs.execution_id
        if expected != found and expected and found:
            if theirs.kind != EventKind.STEP_EXECUTION_CREATED:
                return self._renamed.get(expected) == found
            self._renamed[expected] = found
        return mine.method == theirs.method

    def ready(self, units: Sequence[Callable[[], None]]) -> int:
        """The ready unit that produces the next recorded event (queue order once diverged)."""
        produced = self.produced
        if self.divergence is not None or produced >= len(self._events):
            return 0
        event = self._events[produced]
        if event.kind in _FROM_CLIENT:
            return 0
        expected = self._renamed.get(event.execution_id or "", event.execution_id)
        if len(units) < _INDEXED:
            self._index.forget()
            return self._scan(units, event, expected)
        found = self._index.find(units, expected, self._flow_id)
        if found is not None and _does(units[found], event):
            return self._index.picked(units, found)
        return self._index.picked(units, self._scan(units, event, expected))

    def _scan(self, units: Sequence[Callable[[], None]], event: Event, expected: Any) -> int:
        """The best ready unit for ``event`` by looking at each (a divergence when none fits)."""
        best, best_score = 0, _MISMATCH
        for index, unit in enumerate(units):
            if type(unit) is QueuedStart and unit[1].flow_id == self._flow_id:
                # The usual unit, told here without a call: another execution's, or this one.
                if unit[2].execution_id != expected:
                    continue
                score = _SAME_WORK if _does(unit, event) else _SAME_EXECUTION
            else:
                score = self._score(unit, event)
            if score > best_score:
                best, best_score = index, score
                if score == _SAME_WORK:
                    break
        if best_score == _MISMATCH:
            ready = [self._describe(unit) for unit in units]
            self.divergence = OrderDivergence.of(event, {"ready": ready})
        return best

    def waiter(self, waiters: Sequence[Any], unready: Set[str]) -> int:
        """The open waiter whose recorded wait was satisfied next (else the first open one)."""
        satisfied, renamed = self._satisfied, self._renamed
        start = self._next_satisfied
        while start < len(satisfied) and satisfied[start][0] <= self.produced:
            start += 1
        self._next_satisfied = start
        positions = _Positions(waiters, self._waiter_positions)
        for number in range(start, len(satisfied)):  # no copy of the rest per message
            recorded_id = satisfied[number][1]
            execution_id = renamed.get(recorded_id, recorded_id)
            if execution_id in unready:
                continue
            found = positions.of(execution_id)
            if found is not None:
                return found
        return next((n for n, ex in enumerate(waiters) if ex.execution_id not in unready), 0)

    def fault(self, point: FaultPoint) -> bool:
        """Never: a replay injects only the recorded faults, which its FaultPlan names."""
        return False

    def _score(self, unit: Callable[[], None], event: Event) -> int:
        owner = self._owner(unit)
        if owner is None:
            return _UNKNOWN
        flow_id, execution_id = owner
        if flow_id != self._flow_id:
            return _UNKNOWN  # another run's work (a SubFlow): the record cannot say
        expected = event.execution_id
        if execution_id != self._renamed.get(expected, expected):  # type: ignore[arg-type]
            # An asyncio callback may be a step of a coroutine that commits nothing yet; if it
            # commits out of place, ``committed`` says so.
            return _UNKNOWN if isinstance(unit, LoopCallback) else _MISMATCH
        return _SAME_WORK if _does(unit, event) else _SAME_EXECUTION

    def _owner(self, unit: Callable[[], None]) -> tuple[str, str | None] | None:
        """The unit's ``(flow id, execution id)``; None when it cannot be told."""
        if isinstance(unit, (QueuedStart, Unit)):
            execution = unit.execution
            return unit[1].flow_id, execution.execution_id if execution is not None else None
        if isinstance(unit, LoopCallback):
            found = owner_of(unit, self._tasks)
            if found is None:
                self._tasks = self._tasks_of()
                found = owner_of(unit, self._tasks)
            return None if found is None else (self._flow_id, found)
        return None

    def _describe(self, unit: Callable[[], None]) -> str:
        """``"EditContract-1 execute"``: the unit's execution (or run) and its work."""
        owner = self._owner(unit)
        if isinstance(unit, QueuedStart):
            work = unit.method
        elif isinstance(unit, Unit):
            work = unit.kind
        else:
            work = "asyncio callback"
        if owner is None:
            who = "an execution not told"
        elif owner[0] != self._flow_id:
            who = f"Flow {owner[0]!r} {owner[1] or 'run'}"
        else:
            who = owner[1] or "the run"
        return f"{who} {work}"

    def __repr__(self) -> str:
        return f"RecordedOrder({self._flow_id!r}, events={len(self._events)})"


class _ReadyIndex:
    """Where each execution's queued first attempt sits among the ready units, kept across picks.

    The engine takes a picked unit out by moving the last one into its place and appends new
    ones at the end; the index follows that, reads only the units appended since, and checks
    every position before it trusts it, so a wrong guess costs a scan, never a wrong pick.
    """

    __slots__ = ("_positions", "_seen")

    def __init__(self) -> None:
        self._positions: dict[str, int] = {}
        self._seen = 0

    def find(self, units: Sequence[Any], execution_id: Any, flow_id: str) -> int | None:
        """The position of ``execution_id``'s queued first attempt, or None."""
        positions = self._positions
        if len(units) < self._seen:  # units left without a pick (one was alone): look again
            positions.clear()
            self._seen = 0
        for index in range(self._seen, len(units)):
            unit = units[index]
            if type(unit) is QueuedStart and unit[1].flow_id == flow_id:
                positions[unit[2].execution_id] = index
        self._seen = len(units)
        found = positions.get(execution_id)
        if found is None or found >= len(units):
            return None
        unit = units[found]
        if type(unit) is QueuedStart and unit[2].execution_id == execution_id:
            return found
        positions.clear()  # out of step with the engine's list: read all of it next time
        self._seen = 0
        return None

    def forget(self) -> None:
        """Units are picked without the index now: read them all when it is used again."""
        if self._seen:
            self._positions.clear()
            self._seen = 0

    def picked(self, units: Sequence[Any], index: int) -> int:
        """Follow the engine taking ``units[index]`` out; returns ``index``."""
        positions, last = self._positions, len(units) - 1
        unit = units[index]
        if type(unit) is QueuedStart and positions.get(unit[2].execution_id) == index:
            del positions[unit[2].execution_id]
        moved = units[last]
        if (
            index != last
            and type(moved) is QueuedStart
            and (positions.get(moved[2].execution_id) == last)
        ):
            positions[moved[2].execution_id] = index
        self._seen = last
        return index


class _Positions:
    """Where an execution sits in a waiter list, from the positions seen last time.

    The engine's waiter lists change a little between offers (one added at the end, one
    removed with the last moved into its place), so the positions seen before are mostly
    still right: each is checked before use, and the list is indexed again, once per offer,
    only when one is wrong or missing.
    """

    __slots__ = ("_waiters", "_known", "_cache", "_fresh")

    def __init__(self, waiters: Sequence[Any], cache: dict[int, dict[str, int]]) -> None:
        self._waiters = waiters
        self._cache = cache
        self._known = cache.get(id(waiters))
        self._fresh = False

    def of(self, execution_id: str) -> int | None:
        """The position of ``execution_id`` in the list, or None when it is not there."""
        waiters, known = self._waiters, self._known
        if known is not None:
            position = known.get(execution_id)
            if (
                position is not None
                and position < len(waiters)
                and waiters[position].execution_id == execution_id
            ):
                return position
            if self._fresh:
                return None
        known = self._known = {ex.execution_id: n for n, ex in enumerate(waiters)}
        self._cache[id(waiters)] = known
        self._fresh = True
        return known.get(execution_id)


def _does(unit: Callable[[], None], event: Event) -> bool:
    """Whether ``unit``'s kind of work is what ``event`` records."""
    if isinstance(unit, QueuedStart):
        return event.kind == EventKind.ATTEMPT_STARTED and event.method == unit.method
    if isinstance(unit, TimerFired):
        return event.kind == EventKind.TIMER_FIRED
    if isinstance(unit, Unit):
        return unit.kind in _ATTEMPT_KINDS and event.kind == EventKind.ATTEMPT_STARTED
    return event.kind != EventKind.ATTEMPT_STARTED
