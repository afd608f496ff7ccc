"""The fast path's WaitFor commit: a Wait on one declared Channel, nothing staged.

:func:`commit_wait` records StepWaitForCompleted straight into the unit's buffer, registers
the waiter and checks its Wait at once, as ``WaitManager.commit_wait_for`` and
``begin_waiting`` do for such a Wait; any other Wait goes to the general commit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dexviz.engine.core.context import InvocationContext
from dexviz.engine.core.simple_wait import SimpleWait
from dexviz.engine.core.state import Execution, FlowRun, Phase
from dexviz.engine.core.wait_payloads import PlainWaitForCompleted
from dexviz.history.event import Event
from dexviz.history.kinds import EventKind
from dexviz.sdk.wait import Wait

if TYPE_CHECKING:
    from dexviz.engine.commit.waits import WaitManager
    from dexviz.engine.core.kernel import Kernel

_WAITING = Phase.WAITING
_WAIT_FOR_COMPLETED = EventKind.STEP_WAIT_FOR_COMPLETED
_new_event = tuple.__new__


def commit_wait(
    rt: Kernel,
    waits: WaitManager,
    run: FlowRun,
    ex: Execution,
    ctx: InvocationContext,
    wait: Wait,
    events: list[Event],
) -> bool:
    """Commit a WaitFor's Wait on declared Channels; False: the general path decides."""
    simple = waits.shapes.shared(wait)
    if simple is not None and ctx._staged is None:
        channel = simple.conditions[0].channel  # type: ignore[attr-defined]
        declared = run.definition.channels.get(channel.name)
        if declared is channel or declared == channel:
            _begin_waiting(rt, waits, run, ex, simple, events)
            return True
    if not wait.subflows and _declared(run, wait):
        waits.commit_wait_for(run, ex, ctx, wait)
        return True
    return False


def _begin_waiting(
    rt: Kernel,
    waits: WaitManager,
    run: FlowRun,
    ex: Execution,
    wait: SimpleWait,
    events: list[Event],
) -> None:
    """WaitManager.commit_wait_for and begin_waiting for a one-Channel Wait, nothing staged."""
    now = rt.scheduler.now_ns
    payload = PlainWaitForCompleted(ex.first_started_ns, ex.attempt, wait)
    run.seq += 1
    events.append(
        _new_event(Event, (run.seq, now, _WAIT_FOR_COMPLETED, run.flow_id, run.run_id,
                           ex.execution_id, ex.step.step_type, ex.method or None,
                           ex.attempt or None, payload))
    )  # fmt: skip
    if rt._locks:
        rt.release_locks(run, ex)
    ex._phase = _WAITING  # active stays True
    ex.wait = wait
    ex.wait_registered_ns = now
    ex.method = ""
    ex.attempt = 0
    key = wait.key
    if key == run._first_channel and run._first_waiters is not None:
        run._first_waiters.add(ex)  # FlowRun.add_waiter, for the run's first Channel
    else:
        run.add_waiter(key, ex)
    if rt._stale_skips:
        waits.apply_stale_skips(run, ex)
    if ex._phase is _WAITING:
        waits.try_satisfy(run, ex)


def _declared(run: FlowRun, wait: Wait) -> bool:
    """Whether every Channel the Wait names is the one the Flow declares."""
    channels = run.definition.channels
    for condition in wait.channel_conditions:
        declared = channels.get(condition.channel.name)
        if declared is not condition.channel and declared != condition.channel:
            return False
    return True
