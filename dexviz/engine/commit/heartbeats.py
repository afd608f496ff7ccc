"""Heartbeats: the worker beats for a running attempt, and cancellation rides on them (R107).

With a ``heartbeat_timeout``, the worker heartbeats on the handler's behalf every half window
for as long as the handler runs; user code calls nothing (an explicit ``heartbeat(value)``
only adds a checkpoint). A cancel request — a decision's selector, an RPC's, a Flow close —
reaches the running handler on the next beat: its task is cancelled and
``is_cancellation_requested()`` turns true. The heartbeat timeout fires only when the beats
stop, which only a hung or dead worker does (a ``FaultPlan.hang`` fault); a handler that simply
runs long is invoked once. Without a ``heartbeat_timeout`` nothing reaches a running handler: it
runs to its end and what it returns or writes is discarded.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from dexviz.engine.core.context import InvocationContext
from dexviz.engine.core.state import Execution, FlowRun
from dexviz.engine.core.units import HeartbeatDue, HeartbeatLost, Unit

if TYPE_CHECKING:
    from dexviz.engine.core.kernel import Kernel
    from dexviz.engine.core.ports import AttemptFailer


def arm(rt: Kernel, run: FlowRun, ex: Execution, ctx: InvocationContext) -> None:
    """Start the worker's heartbeats for the attempt that is now running, if it has a window."""
    window = ex.options.heartbeat_timeout
    if not window:
        return
    limit = int(window.total_seconds() * 1e9)
    period = max(1, limit // 2)
    ex.last_beat_ns = rt.now()
    due = HeartbeatDue.of(rt, run, ex, ctx, ex.attempt_token, limit, period)
    ex.heartbeat_timer = rt.scheduler.call_at(rt.now() + period, due)


def beat(rt: Kernel, unit: Unit) -> None:
    """A HeartbeatDue unit: beat (or, hung, stop beating), or deliver a cancellation."""
    run, ex, ctx, token, limit, period = unit[1:]
    if token != ex.attempt_token or ex.task is None or ex.task.done():
        return
    if ex.cancel_requested or not ex.active or not run.is_open:
        deliver_cancel(ex, ctx)
        return
    if rt.faults.hangs(ex.step_type, ex.method, ex.attempt, ex.execution_id):
        # A hung worker sends nothing more: the window runs out from the last beat.
        window = ex.options.heartbeat_timeout
        lost_unit = HeartbeatLost.of(rt, run, ex, ctx, token, window)
        ex.heartbeat_timer = rt.scheduler.call_at(ex.last_beat_ns + limit, lost_unit)
        return
    ex.last_beat_ns = rt.now()
    ex.heartbeat_timer = rt.scheduler.call_at(rt.now() + period, unit)


def last_beats(rt: Kernel, pending: Iterable[object]) -> None:
    """An engine closing sends each running handler the cancellation its next beat would carry.

    A Worker closed right after the Flow moved on (R96) stops beating before that beat: without
    this, a sync handler polling ``is_cancellation_requested()`` would never learn of its
    cancellation and would hold the close, and a coroutine handler would be cancelled without
    the flag set.
    """
    with rt.lock:
        for unit in pending:
            if not isinstance(unit, HeartbeatDue):
                continue
            run, ex, ctx, token = unit[1:5]
            if token != ex.attempt_token or ex.task is None or ex.task.done():
                continue
            if ex.cancel_requested or not ex.active or not run.is_open:
                deliver_cancel(ex, ctx)


def lost(rt: Kernel, attempts: AttemptFailer, unit: Unit) -> None:
    """A HeartbeatLost unit: the window ran out, so the attempt fails with a timeout."""
    run, ex, ctx, token, window = unit[1:]
    if token != ex.attempt_token or not ex.active or ex.task is None:
        return
    deliver_cancel(ex, ctx)
    error = TimeoutError(f"{ctx._where} attempt {ex.attempt} sent no heartbeat for {window}")
    attempts.fail(run, ex, ctx, error, "timeout")


def deliver_cancel(ex: Execution, ctx: InvocationContext) -> None:
    """What a heartbeat response carrying a cancellation does to the running handler."""
    ctx.canceled = True
    task, ex.task = ex.task, None
    if task is not None and not task.done():
        task.cancel()


def keeps_beating(ex: Execution) -> bool:
    """Whether a canceled execution's heartbeats must go on to deliver its cancellation."""
    return bool(ex.options.heartbeat_timeout) and ex.task is not None and not ex.task.done()
