"""Snapshots of suspended coroutine handlers: their trace, and rebuilding them by re-driving it.

A coroutine's frame cannot be copied, but in simulation a handler's run is determined by its
attempt (the Step, its input, the attempt's context) and by when each of its steps ran: every
await it may make resolves through the VirtualLoop, whose timers the snapshot holds. So a
snapshot keeps, per coroutine in flight, a :class:`CoroutineTrace` (the execution, its attempt
token, the virtual time of every step so far) and puts :class:`LoopWake` records where the
Task's asyncio callbacks sat among the ready units and in the timer heap (same positions, same
due times and sequence numbers). A restore calls the handler again with a fresh context of
the same attempt, runs its steps on a stand-in scheduler with the clock at each recorded time,
and puts the callbacks of the rebuilt Task where the records are: the run then goes on byte
for byte as it would have. That assumes no more than the stateless explorer does, which runs
every handler again from its start on every schedule.

What such a re-drive cannot reproduce is refused with a SnapshotError naming the Flow, Step
and execution: a Task that belongs to no running attempt (an RPC's, one a handler created, one
left over from a timed-out attempt), a handler something was thrown into, an asyncio callback
of another kind (a foreign future, ``call_soon`` of its own), or a re-drive that ends anywhere
but where the original Task was suspended.
"""

from __future__ import annotations

import asyncio
import heapq
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


class _Capture:
    """The loop's scheduler while a handler is re-driven: it keeps what the Task schedules."""

    def __init__(self, now_ns: int) -> None:
        self.now_ns = now_ns
        self.ready: list[Any] = []
        self.timers: list[tuple[int, int, Any]] = []

    def call_soon(self, unit: Any) -> None:
        """Keep a ready callback (run in order by ``next``)."""
        self.ready.append(unit)

    def call_at(self, due_ns: int, unit: Any) -> None:
        """Keep a timer (its due time is checked against the snapshot's)."""
        heapq.heappush(self.timers, (max(due_ns, self.now_ns), len(self.timers), unit))

    def next(self) -> Any:
        """The next callback: a ready one, else the earliest timer due by now; else None."""
        if self.ready:
            return self.ready.pop(0)
        if self.timers and self.timers[0][0] <= self.now_ns:
            return heapq.heappop(self.timers)[2]
        return None


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


def redrive(rt: Runtime, traces: tuple[CoroutineTrace, ...], places: tuple[int, ...]) -> None:
    """Rebuild the coroutines of an installed state and put their callbacks in its records.

    ``places`` are where ``mark`` put the records among the installed units.
    """
    sim = rt.sim
    assert sim is not None
    now = sim.now_ns
    loop = rt.loop
    wakes: list[dict[str, Any]] = []
    contexts: list[Any] = []
    tasks: list[Any] = []
    kinds = _kinds_of(sim, len(traces), places)
    scheduler = loop._scheduler
    try:
        for i, trace in enumerate(traces):
            capture = _Capture(now)
            # A stand-in, for one re-drive: it has the Scheduler's call_soon, call_at, now_ns.
            loop._scheduler = capture  # type: ignore[assignment]
            task, ctx = _relaunch(rt, trace)
            ctx._runtime = _Replaying(rt)
            _drive(sim, capture, task, trace)
            ctx._runtime = rt
            wakes.append(_pending(sim, capture, trace, kinds[i], now))
            contexts.append(ctx)
            tasks.append(task)
    finally:
        loop._scheduler = scheduler
        sim.now_ns = now
    _fill(rt, traces, places, wakes, contexts, tasks)


class _Replaying:
    """The runtime as a re-driven handler's context sees it: its Stream writes are dropped.

    A Stream write is not rolled back with its attempt (R180), so the snapshot's Stream logs
    hold every write the handler made before it: written again, it would be there twice.
    Heartbeats go through: they set the execution's beat to the same values at the same times.
    """

    __slots__ = ("_rt",)

    def __init__(self, rt: Runtime) -> None:
        self._rt = rt

    def write_stream(self, *args: Any) -> None:
        """Drop the write: the snapshot's Stream log has it already."""
        del args

    def __getattr__(self, name: str) -> Any:
        return getattr(self._rt, name)


def _unit_at(sim: Any, place: int) -> Any:
    return sim._ready[place] if place >= 0 else sim._timers[-1 - place].unit


def _kinds_of(sim: Any, count: int, places: tuple[int, ...]) -> list[set[str]]:
    kinds: list[set[str]] = [set() for _ in range(count)]
    for place in places:
        unit = _unit_at(sim, place)
        if type(unit) is LoopWake:
            kinds[unit.trace].add(unit.kind)
    return kinds


def _relaunch(rt: Runtime, trace: CoroutineTrace) -> tuple[Any, Any]:
    """Call the handler again as its attempt did: a fresh context, a fresh Task."""
    run = rt.runs[trace.flow_id]
    ex = run.executions[trace.execution_id]
    if ex.attempt_token != trace.token:
        raise ReplayError(f"{trace.where}: the snapshot's attempt is not the execution's")
    method = ex.method
    ctx = InvocationContext(
        run, ex, method, ex.attempt, ex.method_snapshot or {}, rt.codecs,
        runtime=rt, subflows=rt.subflows,
    )  # fmt: skip
    ctx.is_async = True
    value = rt.codecs.roundtrip(ex.step.input_type, ex.input, operation=ctx._where + " input")
    handler = getattr(ex.step.step, method)
    token, invoker = trace.token, rt.invoker

    def done(result: Any, error: BaseException | None, cancelled: bool) -> None:
        invoker.finished(run, ex, ctx, token, result, error, cancelled)

    task = rt.runner.run_async(handler, (ctx, value), done)
    ex.task = task
    return task, ctx


def _drive(sim: Any, capture: _Capture, task: Any, trace: CoroutineTrace) -> None:
    """Run the Task's callbacks until its coroutine took each recorded step at its time."""
    call = task.get_coro()
    for step, at in enumerate(trace.steps):
        capture.now_ns = sim.now_ns = at
        while len(call.steps) <= step:
            unit = capture.next()
            if unit is None:
                raise ReplayError(
                    f"{trace.where}: the handler did not resume as it did (step {step})"
                )
            unit()
    if tuple(call.steps) != trace.steps:
        raise ReplayError(f"{trace.where}: the handler stepped at other times when re-driven")


def _pending(
    sim: Any, capture: _Capture, trace: CoroutineTrace, kinds: set[str], now: int
) -> dict[str, Any]:
    """The rebuilt Task's pending callbacks by kind: those of the snapshot, or an error."""
    capture.now_ns = sim.now_ns = now
    if kinds == {WAKEUP} and not capture.ready and capture.timers:
        # The sleep's timer fired after the last step; the wakeup it queued is still pending.
        capture.next()()
    found: dict[str, Any] = {}
    for unit in capture.ready:
        found[_kind(unit)] = unit
    for due, _, unit in capture.timers:
        found[TIMER], found[DUE] = unit, due
    if set(found) - {DUE} != kinds or len(capture.ready) + len(capture.timers) != len(kinds):
        raise ReplayError(
            f"{trace.where}: re-driven, the handler waits on {sorted(found)}, not {sorted(kinds)}"
        )
    return found


def _kind(unit: Any) -> str:
    callback = unit.handle._callback
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, asyncio.Task):
        return WAKEUP if "wakeup" in getattr(callback, "__name__", "") else STEP
    return DONE


def _fill(
    rt: Runtime,
    traces: tuple[CoroutineTrace, ...],
    places: tuple[int, ...],
    wakes: list[dict[str, Any]],
    contexts: list[Any],
    tasks: list[Any],
) -> None:
    sim = rt.sim
    assert sim is not None
    ready, timers = sim._ready, sim._timers
    for place in places:
        unit = _unit_at(sim, place)
        if type(unit) is LoopWake:
            wake = wakes[unit.trace]
            new = wake[unit.kind]
            if place < 0 and wake[DUE] != timers[-1 - place].due_ns:
                raise ReplayError(
                    f"{traces[unit.trace].where}: re-driven, its timer is due at another time"
                )
        else:
            new = tuple.__new__(
                type(unit),
                [contexts[item.trace] if type(item) is ContextSlot else item for item in unit],
            )
        if place >= 0:
            ready[place] = new
        else:
            timers[-1 - place].unit = new
    for trace, task in zip(traces, tasks, strict=True):
        rt.runs[trace.flow_id].executions[trace.execution_id].task = task
