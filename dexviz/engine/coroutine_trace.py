"""Snapshots of suspended coroutine handlers, the capture side: what a trace is and how it is taken.

A coroutine's frame cannot be copied, so a snapshot keeps, per coroutine handler in flight, a
:class:`CoroutineTrace` (the execution, its attempt token, the virtual time of every step so
far), and puts :class:`LoopWake`, :class:`ContextSlot` and :class:`TaskSlot` records where the
Task's asyncio callbacks, its attempt context and the Task itself sat in the state.
:func:`describe` finds the handlers in flight and refuses, with a :class:`ReplayError` naming
the Flow, Step and execution, what a re-drive could not rebuild; :func:`mark` puts the records
in the copied state. :mod:`dexviz.engine.coroutine_replay` rebuilds the handlers on restore.
"""

from __future__ import annotations

import asyncio
from asyncio import futures
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dexviz.engine.core.context import InvocationContext
from dexviz.engine.core.loop import LoopCallback
from dexviz.engine.core.runners import DeferredCall
from dexviz.engine.core.scheduler import TimerHandle
from dexviz.engine.core.units import Unit

if TYPE_CHECKING:
    from dexviz.engine.core.state import Execution, FlowRun
    from dexviz.engine.runtime import Runtime

STEP, WAKEUP, TIMER, DONE = "step", "wakeup", "timer", "done"
"""The asyncio callbacks of a handler's Task that a snapshot can hold: its next step, its
wakeup once the future it awaits is done, the timer of the sleep it awaits, its done callback."""
DUE = "due"
_SLEEP_TIMER: Any = getattr(futures, "_set_result_unless_cancelled")  # noqa: B009 - private
"""The callback of ``asyncio.sleep``'s timer (it resolves the future the Task awaits)."""


class ReplayError(RuntimeError):
    """A coroutine in flight that a re-drive could not rebuild (the message says which)."""


@dataclass(frozen=True)
class CoroutineTrace:
    """What rebuilds one suspended coroutine handler: its attempt and its steps' times."""

    flow_id: str
    execution_id: str
    token: int
    steps: tuple[int, ...]
    where: str


@dataclass(frozen=True)
class LoopWake:
    """Stands, in a snapshot, for an asyncio callback of the ``trace``-th coroutine's Task."""

    trace: int
    kind: str


@dataclass(frozen=True)
class ContextSlot:
    """Stands, in a snapshot's units, for the ``trace``-th coroutine's attempt context."""

    trace: int


@dataclass(frozen=True)
class TaskSlot:
    """Stands, in a snapshot's execution, for the Task of the ``trace``-th coroutine."""

    trace: int



def _where(run: FlowRun, ex: Execution) -> str:
    return (
        f"Flow {run.flow_type!r} (flow id {run.flow_id!r}), Step {ex.step_type!r}, "
        f"execution {ex.execution_id!r}"
    )


def wake_of(waiting: dict[int, Any], unit: Any) -> tuple[asyncio.Task[Any], str] | None:
    """The Task an asyncio callback unit belongs to and which kind it is, or None.

    ``waiting`` maps the id of each pending Task's awaited future to the Task.
    """
    if not isinstance(unit, LoopCallback):
        return None
    handle = unit.handle
    callback, args = handle._callback, handle._args  # type: ignore[attr-defined]
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, asyncio.Task):
        name = getattr(callback, "__name__", "")
        return owner, WAKEUP if "wakeup" in name else STEP
    if callback is _SLEEP_TIMER and args:
        task = waiting.get(id(args[0]))
        return None if task is None else (task, TIMER)
    if args and isinstance(args[0], asyncio.Task) and args[0].done():
        if getattr(callback, "__qualname__", "").endswith("run_async.<locals>.finished"):
            return args[0], DONE
    return None


class Flight:
    """The coroutines in flight at a snapshot: their traces, contexts and callbacks' records."""

    __slots__ = ("traces", "contexts", "wakes")

    def __init__(self) -> None:
        self.traces: list[CoroutineTrace] = []
        self.contexts: list[Any] = []
        self.wakes: dict[int, LoopWake] = {}
        """``id`` of each asyncio callback unit to the record that stands for it."""


def describe(rt: Runtime) -> Flight:
    """The traces of ``rt``'s coroutines in flight, their contexts and callbacks.

    Raises ReplayError for a coroutine (or an asyncio callback) a re-drive cannot rebuild.
    """
    tasks, kinds = _tasks_in_flight(rt)
    flight = Flight()
    index: dict[int, int] = {}
    for task, woken in tasks.items():
        call: Any = task.get_coro()
        ctx = call.context if isinstance(call, DeferredCall) else None
        if not isinstance(ctx, InvocationContext) or ctx._execution is None:
            raise ReplayError(f"a Task that runs no Step attempt is in flight ({task!r})")
        run, ex = ctx._run, ctx._execution
        if ex.task is not task or rt.runs.get(run.flow_id) is not run:
            raise ReplayError(
                f"{_where(run, ex)}: a Task of an attempt that ended (timed out or canceled) "
                "is still unwinding"
            )
        if call.thrown:
            raise ReplayError(f"{_where(run, ex)}: a handler was thrown into (a cancellation)")
        if not woken:
            raise ReplayError(
                f"{_where(run, ex)}: its coroutine awaits something other than the loop's "
                "timers (a foreign future, another Task, a thread), which a re-drive cannot "
                "resolve"
            )
        index[id(task)] = len(flight.traces)
        where = _where(run, ex)
        steps = tuple(call.steps)
        trace = CoroutineTrace(run.flow_id, ex.execution_id, ex.attempt_token, steps, where)
        flight.traces.append(trace)
        flight.contexts.append(ctx)
    flight.wakes = {unit: LoopWake(index[id(task)], kind) for unit, (task, kind) in kinds.items()}
    return flight


def _tasks_in_flight(
    rt: Runtime,
) -> tuple[dict[asyncio.Task[Any], bool], dict[int, tuple[asyncio.Task[Any], str]]]:
    """Every Task in flight with whether a callback moves it on, and those callbacks' kinds.

    The pending Tasks come first, oldest first, then those whose outcome is queued; each
    callback is keyed by its unit's ``id``, with its Task and kind.
    """
    loop, sim = rt._loop, rt.sim
    assert sim is not None
    pending = loop.pending_tasks() if loop is not None else []
    tasks = dict.fromkeys(pending, False)
    waiting = {id(t._fut_waiter): t for t in pending}  # type: ignore[attr-defined]
    kinds: dict[int, tuple[asyncio.Task[Any], str]] = {}
    for unit in [*sim._ready, *(t.unit for t in sim._timers if not t.canceled)]:
        if isinstance(unit, LoopCallback):
            found = wake_of(waiting, unit)
            if found is None:
                raise ReplayError(
                    f"an asyncio callback of another kind is queued ({unit.handle!r})"
                )
            tasks[found[0]] = True
            kinds[id(unit)] = found
    return tasks, kinds


def mark(state: Any, flight: Flight) -> tuple[int, ...]:
    """Put records in a copied state where its coroutines' Tasks, callbacks and contexts were.

    Returns where it put them among the units: ``i`` for the ``i``-th ready unit, ``-1 - j``
    for the ``j``-th timer (a restore installs both lists in the same order).
    """
    slots = {id(ctx): ContextSlot(i) for i, ctx in enumerate(flight.contexts)}
    wakes = flight.wakes
    places: list[int] = []

    def record(unit: Any, place: int) -> Any:
        if isinstance(unit, LoopCallback):
            places.append(place)
            return wakes[id(unit)]
        if isinstance(unit, Unit) and any(id(item) in slots for item in unit):
            places.append(place)
            return tuple.__new__(type(unit), [slots.get(id(item), item) for item in unit])
        return unit

    state.ready = [record(unit, i) for i, unit in enumerate(state.ready)]
    for j, timer in enumerate(state.timers):
        timer.unit = record(timer.unit, -1 - j)
    for i, trace in enumerate(flight.traces):
        ex = state.runs[trace.flow_id].executions[trace.execution_id]
        ex.task = TaskSlot(i)
    _drop_fired_units(state)
    return tuple(places)


def disarm(flight: Flight) -> None:
    """Cut the attempt contexts of ``flight``'s Tasks off from the engine and its state.

    For a snapshot that took the engine's objects over (``engine_state.take_over``): the
    Tasks are dropped by the next restore and closed whenever they are freed, and a handler's
    ``finally`` may then heartbeat, write a Stream or ask for a SubFlow through its context.
    Without a runtime and SubFlows the context writes nowhere: a heartbeat is dropped, a
    Stream write or SubFlow call raises inside the close (which the collector ignores). Its
    reads still see its execution, which nothing writes to any more.
    """
    for ctx in flight.contexts:
        ctx._runtime = None
        ctx._subflows = None


def _drop_fired_units(state: Any) -> None:
    """Drop the units of fired timers that live executions' handles still name.

    A handle (``heartbeat_timer``, ``method_timeout``) still names its timer once it fired:
    its unit went to the ready units (where ``mark`` put a record for it, if it was one of a
    coroutine in flight), and the timer's copy still holds the attempt's context, which is
    shared and leads back to the live run and its Tasks. The engine never runs a fired
    timer's unit again (a handle only cancels it or reads its due time), so it is dropped as
    a canceled timer's is (see state_copy). Settled executions hold no handle: only copies
    are changed.
    """
    queued = {id(timer) for timer in state.timers}
    for run in state.runs.values():
        for ex in run.executions.values():
            extras = ex.__dict__
            if not extras:
                continue
            for item in extras.values():
                if type(item) is not TimerHandle or id(item._timer) in queued:
                    continue
                timer = item._timer
                unit = timer.unit
                if isinstance(unit, Unit) and any(
                    isinstance(part, InvocationContext) for part in unit
                ):
                    timer.unit = None  # type: ignore[assignment]
