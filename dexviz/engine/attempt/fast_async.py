"""The fast path's coroutine ``execute``: its first attempt started and its decision committed.

A coroutine handler runs as a Task on the VirtualLoop exactly as on the general path (the same
Task, the same asyncio callbacks as units, the same timers), so the order of work is the
general path's. What this module saves is the general machinery around it: the attempt
starts from the fast path's checks (:meth:`FastPath.start_unit`), and when the Task ends with a
plain decision the fast path's commit records it; any other outcome (an error, a cancellation,
a result the fast path does not commit) is the general path's ``Invoker.finished``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dexviz.engine.attempt.invoke import disarm
from dexviz.engine.core.attempt_deadline import AttemptDeadline
from dexviz.engine.core.context import InvocationContext
from dexviz.engine.core.state import Execution, FlowRun
from dexviz.engine.core.units import MethodTimedOut
from dexviz.sdk.decision import StepDecision
from dexviz.sdk.results import FlowStatus

if TYPE_CHECKING:
    from dexviz.engine.attempt.step_settings import StepSettings

FastPath = Any
"""The :class:`~dexviz.engine.attempt.fast.FastPath` that starts the attempt (fast.py imports
this module, so it is not imported back, not even for type checking: the layering test
refuses the cycle)."""

_RUNNING = FlowStatus.RUNNING


def launch_execute(
    fast: FastPath,
    run: FlowRun,
    ex: Execution,
    ctx: InvocationContext,
    value: Any,
    settings: StepSettings,
) -> None:
    """Start the coroutine ``execute`` as a Task and arm its timeout and heartbeat.

    Invoker._launch, inlined (mirrors dexviz.engine.attempt.invoke.Invoker._launch): the same
    runner call, then the same timers in the same order.
    """
    invoker = fast._invoker
    token = ex.attempt_token
    ctx.is_async = True

    def done(result: Any, error: BaseException | None, cancelled: bool) -> None:
        finished_execute(fast, run, ex, ctx, token, result, error, cancelled, settings)

    rt = fast._rt
    task = ex.task = rt.runner.run_async(settings.execute, (ctx, value), done)
    if task is not None and ex.active and token == ex.attempt_token:
        # Invoker._arm_timeout, inlined (mirrors dexviz.engine.attempt.invoke.Invoker._arm_timeout):
        # a first attempt that starts with its method has the same deadline every time.
        deadline = settings.first_deadline
        if deadline is None:
            deadline = settings.first_deadline = AttemptDeadline.of(ex, rt.now())
        ex.method_timeout = rt.scheduler.call_at(
            rt.now() + deadline.limit_ns, MethodTimedOut.of(rt, run, ex, ctx, token, deadline)
        )
        if settings.options.heartbeat_timeout:  # heartbeats.arm arms nothing without one
            invoker._arm_heartbeat(run, ex, ctx, token)


def finished_execute(
    fast: FastPath,
    run: FlowRun,
    ex: Execution,
    ctx: InvocationContext,
    token: int,
    result: Any,
    error: BaseException | None,
    cancelled: bool,
    settings: StepSettings,
) -> None:
    """The Task ended: commit a plain decision here, hand anything else to the general path.

    Invoker.finished and succeed, inlined (mirrors dexviz.engine.attempt.invoke.Invoker.finished
    and dexviz.engine.attempt.invoke.Invoker.succeed): a result that no longer counts is
    dropped, the attempt's timers are cancelled, then the decision is checked and committed.
    """
    if (
        cancelled
        or error is not None
        or type(result) is not StepDecision
        or token != ex.attempt_token
        or not ex.active
        or ctx.canceled
        or run.status is not _RUNNING
        or run.closing
    ):
        fast._invoker.finished(run, ex, ctx, token, result, error, cancelled)
        return
    disarm(ex)
    moves = fast._moves(run, ctx, result, settings)
    if moves is None:
        fast._invoker.succeed(run, ex, ctx, result)
        return
    fast._apply(run, ex, ctx, result, moves, fast._rt.recorder.buffer(run))
