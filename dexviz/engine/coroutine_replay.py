"""Snapshots of suspended coroutine handlers, the restore side: rebuilding them from their trace.

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
every handler again from its start on every schedule. The records and their capture are
:mod:`dexviz.engine.coroutine_trace`.

What such a re-drive cannot reproduce is refused with a SnapshotError naming the Flow, Step
and execution: a Task that belongs to no running attempt (an RPC's, one a handler created, one
left over from a timed-out attempt), a handler something was thrown into, an asyncio callback
of another kind (a foreign future, ``call_soon`` of its own), or a re-drive that ends anywhere
but where the original Task was suspended.
"""

from __future__ import annotations

import asyncio
import heapq
from typing import TYPE_CHECKING, Any

from dexviz.engine.core.context import InvocationContext
from dexviz.engine.coroutine_trace import (
    DONE,
    DUE,
    STEP,
    TIMER,
    WAKEUP,
    ContextSlot,
    CoroutineTrace,
    LoopWake,
    ReplayError,
)

if TYPE_CHECKING:
    from dexviz.engine.runtime import Runtime


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
