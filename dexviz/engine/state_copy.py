"""A fast deep copy of an engine's state, for in-process snapshots.

The engine's mutable state is a small set of types (runs, executions, timers, lock tables,
units and builtin containers); everything else it holds is immutable once recorded (events,
payloads, codec-copied inputs and values, Waits, options, messages) or belongs to the Flows
(definitions, Step objects) and to the engine (its services). So a copy walks only the
mutable types, keeps one copy per object (a unit and the execution it names point at the same
copy), and shares the rest. This is what ``Engine.snapshot()`` keeps; pickling a snapshot
(to send it elsewhere) goes through :mod:`dexviz.engine.engine_state`'s named pickling.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar

from dexviz.engine.invoke import QueuedStart
from dexviz.engine.locks import LockTable
from dexviz.engine.scheduler import TimerHandle, _Timer
from dexviz.engine.state import Execution, FlowRun, TimerState
from dexviz.engine.streams import StreamLog
from dexviz.engine.units import Unit
from dexviz.engine.waiters import WaiterSet

_T = TypeVar("_T")

_ATOMIC = frozenset({str, int, float, bool, type(None), bytes, tuple, frozenset})
"""Types shared as they are: immutable (a tuple of the engine's is one of immutable parts)."""
_PLAIN = _ATOMIC - {tuple}
"""Immutable types whose values never hold anything mutable."""


class StateCopier:
    """Copies one engine state graph; ``copy(value)`` keeps one copy per mutable object."""

    __slots__ = ("memo",)

    def __init__(self) -> None:
        self.memo: dict[int, Any] = {}

    def copy(self, value: Any) -> Any:
        """The copy of ``value``: mutable engine objects and containers copied, the rest shared."""
        kind = type(value)
        if kind in _PLAIN:
            return value
        copier = _COPIERS.get(kind)
        if copier is None:
            if isinstance(value, Unit):
                copier = _unit
            else:
                return value
        found = self.memo.get(id(value))
        if found is not None:
            return found
        return copier(self, value)

    def remember(self, original: Any, copy: _T) -> _T:
        """Record ``copy`` as the copy of ``original`` (before its parts are copied)."""
        self.memo[id(original)] = copy
        return copy


def _dict(c: StateCopier, value: dict[Any, Any]) -> dict[Any, Any]:
    new: dict[Any, Any] = c.remember(value, {})
    cp = c.copy
    for key, item in value.items():
        new[key] = cp(item)
    return new


def _list(c: StateCopier, value: list[Any]) -> list[Any]:
    new: list[Any] = c.remember(value, [])
    new.extend(map(c.copy, value))
    return new


def _set(c: StateCopier, value: set[Any]) -> set[Any]:
    return c.remember(value, set(value))


def _deque(c: StateCopier, value: deque[Any]) -> deque[Any]:
    # Channel queues hold Messages, which the engine never changes once published.
    return c.remember(value, deque(value, value.maxlen))


def _tuple(c: StateCopier, value: tuple[Any, ...]) -> tuple[Any, ...]:
    parts = tuple(map(c.copy, value))
    if all(a is b for a, b in zip(parts, value, strict=True)):
        return value
    return c.remember(value, parts)


def _slots(names: tuple[str, ...]) -> Callable[[StateCopier, Any], Any]:
    """A copier of a ``__slots__`` class (with an optional instance ``__dict__``)."""
    fields = tuple(n for n in names if n != "__dict__")
    with_dict = "__dict__" in names

    get_all = attrgetter(*fields)
    plain = _PLAIN

    def copy(c: StateCopier, value: Any) -> Any:
        kind = type(value)
        new = c.remember(value, object.__new__(kind))
        cp = c.copy
        put = object.__setattr__
        # Every slot is set by the constructors; the plain values (most of them) go as they are.
        for name, item in zip(fields, get_all(value), strict=True):
            put(new, name, item if type(item) in plain else cp(item))
        if with_dict:
            for name, item in value.__dict__.items():
                put(new, name, item if type(item) in plain else cp(item))
        return new

    return copy


def _execution(c: StateCopier, ex: Execution) -> Execution:
    """An Execution's copy, written out: one is copied per execution on every snapshot."""
    new = c.remember(ex, Execution.__new__(Execution))
    new.execution_id, new.step, new.input = ex.execution_id, ex.step, ex.input
    new.from_execution_id, new.options = ex.from_execution_id, ex.options
    new._phase, new.active, new.method, new.attempt = ex._phase, ex.active, ex.method, ex.attempt
    new.attempt_token, new.first_started_ns = ex.attempt_token, ex.first_started_ns
    # Contexts only read a method's Attribute snapshot, and a Wait is frozen: both shared.
    new.method_snapshot, new.wait = ex.method_snapshot, ex.wait
    new.wait_registered_ns = ex.wait_registered_ns
    new.satisfied_conditions = ex.satisfied_conditions
    reserved, consumed = ex._reserved, ex._consumed_values
    new._reserved = None if reserved is None else {k: list(v) for k, v in reserved.items()}
    new._consumed_values = None if consumed is None else {k: list(v) for k, v in consumed.items()}
    new.task, new.parent_key = ex.task, ex.parent_key
    unit = ex.pending_unit
    new.pending_unit = None if unit is None else c.copy(unit)
    extras = ex.__dict__
    if extras:
        cp = c.copy
        for name, item in extras.items():
            object.__setattr__(new, name, cp(item))
    return new


def _waiters(c: StateCopier, value: WaiterSet[Any]) -> WaiterSet[Any]:
    new: WaiterSet[Any] = c.remember(value, WaiterSet())
    list.extend(new, map(c.copy, value))
    positions = value._positions
    new._positions = None if positions is None else dict(positions)
    return new


def _unit(c: StateCopier, value: tuple[Any, ...]) -> Any:
    return c.remember(value, tuple.__new__(type(value), map(c.copy, value)))


def _timer(c: StateCopier, value: _Timer) -> _Timer:
    new = c.remember(value, _Timer(value.due_ns, value.seq, None, value.canceled))  # type: ignore[arg-type]
    new.unit = c.copy(value.unit)
    return new


def _handle(c: StateCopier, value: TimerHandle) -> TimerHandle:
    new = c.remember(value, TimerHandle.__new__(TimerHandle))
    new._timer = c.copy(value._timer)
    return new


def _lock_table(c: StateCopier, value: LockTable) -> LockTable:
    new = c.remember(value, LockTable())
    new.held = dict(value.held)
    new.waiting = [(keys, owner, c.copy(resume)) for keys, owner, resume in value.waiting]
    return new


def _timer_state(c: StateCopier, value: TimerState) -> TimerState:
    new = c.remember(value, TimerState(value.index, value.condition_id, value.duration_s))
    new.fire_at_ns, new.done = value.fire_at_ns, value.done
    new.handle = c.copy(value.handle)
    return new


def _stream_log(c: StateCopier, value: StreamLog) -> StreamLog:
    new = c.remember(value, StreamLog.__new__(StreamLog))
    new.__dict__.update(value.__dict__)
    new.messages = deque(value.messages)
    return new


_COPIERS: dict[type, Callable[[StateCopier, Any], Any]] = {
    dict: _dict,
    list: _list,
    set: _set,
    deque: _deque,
    tuple: _tuple,
    Execution: _execution,
    FlowRun: _slots(FlowRun.__slots__),
    WaiterSet: _waiters,
    QueuedStart: _unit,
    _Timer: _timer,
    TimerHandle: _handle,
    LockTable: _lock_table,
    TimerState: _timer_state,
    StreamLog: _stream_log,
}
