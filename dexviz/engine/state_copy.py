"""A fast copy of an engine's state, for in-process snapshots, sharing what cannot change.

The engine's mutable state is a small set of types (runs, executions, timers, lock tables,
units and builtin containers); everything else it holds is immutable once recorded (events,
payloads, codec-copied inputs and values, Waits, options, messages) or belongs to the Flows
(definitions, Step objects) and to the engine (its services). So a copy walks only the
mutable types, keeps one copy per object (a unit and the execution it names point at the same
copy), and shares the rest.

One kind of engine object is shared although it is mutable in general, because the engine
never writes to it again: a *settled* execution, ended (done or canceled), with no pending
unit, no task and no rarely set field other than plain values (a heartbeat timer, timers or
locals keep it copied). A canceled timer is not copied at all: it would stay in the heap
until popped and then be dropped unrun, so the copy of the heap leaves it out (a handle that
still names one gets a canceled timer of the same due time, without its unit). In the seed
Flow's runs most executions and timers are of these kinds, so a snapshot copies only the
live ones.

This is what ``Engine.snapshot()`` keeps; pickling a snapshot (to send it elsewhere) goes
through :mod:`dexviz.engine.engine_state`'s named pickling.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from dexviz.engine.attempt.invoke import QueuedStart
from dexviz.engine.core.locks import LockTable
from dexviz.engine.core.scheduler import TimerHandle, _Timer
from dexviz.engine.core.state import Execution, FlowRun, TimerState
from dexviz.engine.core.streams import StreamLog
from dexviz.engine.core.units import Unit
from dexviz.engine.core.waiters import WaiterSet

Memo = dict[int, Any]
"""One copy per original: ``id(original)`` to its copy, for the duration of one copy."""

_PLAIN = frozenset({str, int, float, bool, type(None), bytes, frozenset})
"""Immutable types whose values never hold anything mutable: shared as they are."""
_new = object.__new__


class StateCopier:
    """Copies one engine state graph; ``copy(value)`` keeps one copy per mutable object."""

    __slots__ = ("memo",)

    def __init__(self) -> None:
        self.memo: Memo = {}

    def copy(self, value: Any) -> Any:
        """The copy of ``value``: mutable engine objects and containers copied, the rest shared."""
        return copy_value(self.memo, value)


def copy_value(memo: Memo, value: Any) -> Any:
    """The copy of ``value`` within one state copy (see the module docstring)."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    copier = _COPIERS.get(kind)
    if copier is None:
        if not isinstance(value, Unit):
            return value
        copier = _unit
    found = memo.get(id(value))
    if found is not None:
        return found
    return copier(memo, value)


def copy_dict(memo: Memo, value: dict[Any, Any]) -> dict[Any, Any]:
    """The copy of a dict within one state copy: its values copied as by ``copy_value``."""
    new: dict[Any, Any] = {}
    memo[id(value)] = new
    for key, item in value.items():
        new[key] = item if type(item) in _PLAIN else copy_value(memo, item)
    return new


def _list(memo: Memo, value: list[Any]) -> list[Any]:
    new: list[Any] = []
    memo[id(value)] = new
    new.extend([item if type(item) in _PLAIN else copy_value(memo, item) for item in value])
    return new


def _set(memo: Memo, value: set[Any]) -> set[Any]:
    new = memo[id(value)] = set(value)
    return new


def _deque(memo: Memo, value: deque[Any]) -> deque[Any]:
    # Channel queues hold Messages, which the engine never changes once published.
    new = memo[id(value)] = deque(value, value.maxlen)
    return new


def _tuple(memo: Memo, value: tuple[Any, ...]) -> tuple[Any, ...]:
    parts = tuple([copy_value(memo, item) for item in value])
    if all(a is b for a, b in zip(parts, value, strict=True)):
        return value
    memo[id(value)] = parts
    return parts


def settled(ex: Execution) -> bool:
    """Whether the engine will never write to ``ex`` again, so a copy may share it."""
    if ex.active or ex.pending_unit is not None or ex.task is not None:
        return False
    extras = ex.__dict__
    return not extras or all(type(item) in _PLAIN for item in extras.values())


def _execution(memo: Memo, ex: Execution) -> Execution:
    """An Execution's copy, or the execution itself once it is settled."""
    return ex if settled(ex) else _live_execution(memo, ex)


def _live_execution(memo: Memo, ex: Execution) -> Execution:
    """A live Execution's copy, written out (one per live execution on every snapshot)."""
    new = _new(Execution)
    memo[id(ex)] = new
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
    new.pending_unit = None if unit is None else copy_value(memo, unit)
    extras = ex.__dict__
    if extras:
        put = object.__setattr__
        for name, item in extras.items():
            put(new, name, item if type(item) in _PLAIN else copy_value(memo, item))
    return new


def _flow_run(memo: Memo, run: FlowRun) -> FlowRun:
    """A FlowRun's copy, written out: its executions are most of a snapshot's work."""
    new = _new(FlowRun)
    memo[id(run)] = new
    new.flow_id, new.run_id, new.definition = run.flow_id, run.run_id, run.definition
    new.started_ns, new.status, new.closing = run.started_ns, run.status, run.closing
    new._first_type, new._first_count = run._first_type, run._first_count
    new._first_channel, new.active_count = run._first_channel, run.active_count
    new.message_count, new.seq, new.start_options = run.message_count, run.seq, run.start_options
    # The start input is a private codec copy that the engine only reads; the id source is
    # the runtime's (a service).
    new.start_input, new.message_ids = run.start_input, run.message_ids
    new.graceful_requested = run.graceful_requested
    executions: dict[str, Execution] = {}
    plain, get = _PLAIN, memo.get
    for execution_id, ex in run.executions.items():
        # settled(ex), inlined (no call per execution: most of a long run's are settled).
        if not (ex.active or ex.pending_unit is not None or ex.task is not None):
            for item in ex.__dict__.values():
                if type(item) not in plain:
                    break
            else:
                executions[execution_id] = ex
                continue
        executions[execution_id] = get(id(ex)) or _live_execution(memo, ex)
    new.executions = executions
    attributes, queues = run._attributes, run._queues
    new._attributes = None if attributes is None else copy_value(memo, attributes)
    # Channel queues are unbounded deques of Messages (never changed once published) that
    # nothing but their run holds.
    new._queues = None if queues is None else {k: deque(q) for k, q in queues.items()}
    waiters, completions = run._first_waiters, run._completions
    new._first_waiters = None if waiters is None else copy_value(memo, waiters)
    new._completions = None if completions is None else list(completions)
    extras = run.__dict__
    if extras:
        put = object.__setattr__
        for name, item in extras.items():
            if name == "_more_counts":  # Step type -> count: plain values
                item = dict(item)
            elif name == "_more_waiters":  # Channel -> WaiterSet
                item = {k: get(id(w)) or _waiters(memo, w) for k, w in item.items()}
            elif type(item) not in plain:
                item = copy_value(memo, item)
            put(new, name, item)
    return new


def _waiters(memo: Memo, value: WaiterSet[Any]) -> WaiterSet[Any]:
    new: WaiterSet[Any] = list.__new__(WaiterSet)
    memo[id(value)] = new
    get = memo.get
    # A waiter is a live execution, most often copied already with its run.
    list.extend(new, [get(id(ex)) or copy_value(memo, ex) for ex in value])
    positions = value._positions
    new._positions = None if positions is None else dict(positions)
    return new


def _unit(memo: Memo, value: tuple[Any, ...]) -> Any:
    # The first item is the runtime or the invoker: a service, shared.
    items = [copy_value(memo, item) for item in value]
    items[0] = value[0]
    new = tuple.__new__(type(value), items)
    memo[id(value)] = new
    return new


def _timer(memo: Memo, value: _Timer) -> _Timer:
    if value.canceled:
        # Never run again (only a handle still names it): its unit is dropped, so a copy
        # never points back into the state it was copied from.
        new = memo[id(value)] = _Timer(value.due_ns, value.seq, None, True)  # type: ignore[arg-type]
        return new
    new = _new(_Timer)
    memo[id(value)] = new
    new.__dict__.update(value.__dict__)
    new.unit = copy_value(memo, value.unit)
    return new


def _handle(memo: Memo, value: TimerHandle) -> TimerHandle:
    new = _new(TimerHandle)
    memo[id(value)] = new
    new._timer = copy_value(memo, value._timer)
    return new


def _lock_table(memo: Memo, value: LockTable) -> LockTable:
    new = memo[id(value)] = LockTable()
    new.held = dict(value.held)
    new.waiting = [(keys, owner, copy_value(memo, resume)) for keys, owner, resume in value.waiting]
    return new


def _timer_state(memo: Memo, value: TimerState) -> TimerState:
    new = TimerState(value.index, value.condition_id, value.duration_s)
    memo[id(value)] = new
    new.fire_at_ns, new.done = value.fire_at_ns, value.done
    new.handle = copy_value(memo, value.handle)
    return new


def _stream_log(memo: Memo, value: StreamLog) -> StreamLog:
    new = _new(StreamLog)
    memo[id(value)] = new
    new.__dict__.update(value.__dict__)
    new.messages = deque(value.messages)
    return new


_COPIERS: dict[type, Callable[[Memo, Any], Any]] = {
    dict: copy_dict,
    list: _list,
    set: _set,
    deque: _deque,
    tuple: _tuple,
    Execution: _execution,
    FlowRun: _flow_run,
    WaiterSet: _waiters,
    QueuedStart: _unit,
    _Timer: _timer,
    TimerHandle: _handle,
    LockTable: _lock_table,
    TimerState: _timer_state,
    StreamLog: _stream_log,
}
_COPIERS.update({kind: _unit for kind in Unit.__subclasses__()})
