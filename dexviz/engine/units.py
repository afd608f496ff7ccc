"""Units of work as records: what a queued or timed unit does, named by the run it acts for.

Every unit the engine queues or schedules is one of these records (or a
:class:`~dexviz.engine.invoke.QueuedStart`), never a lambda or closure: the explorer reads its
owner from it, a snapshot pickles it, and :data:`HANDLERS` is the one table that says what
each kind does. A record is a tuple ``(runtime, run, execution, ...)``; calling it dispatches
through the table. Units compare and hash by identity, like the closures they replaced.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from dexviz.engine.runtime import Runtime
    from dexviz.engine.state import Execution, FlowRun

_new_tuple = tuple.__new__


class Unit(tuple):  # type: ignore[type-arg]
    """A unit of work: ``(runtime, run, execution or None, *arguments)``."""

    __slots__ = ()
    kind: ClassVar[str] = "unit"

    @classmethod
    def of(cls, rt: Runtime, run: FlowRun, execution: Execution | None, *args: Any) -> Any:
        """The unit of this kind for ``run`` (and ``execution``) with its arguments."""
        return _new_tuple(cls, (rt, run, execution, *args))

    @property
    def run(self) -> FlowRun:
        """The Flow run the unit acts for."""
        return self[1]  # type: ignore[no-any-return]

    @property
    def execution(self) -> Execution | None:
        """The execution the unit acts for (None for a unit of the whole run)."""
        return self[2]  # type: ignore[no-any-return]

    @property
    def arguments(self) -> tuple[Any, ...]:
        """What the unit carries beyond its run and execution."""
        return tuple(self[3:])

    def __call__(self) -> None:
        """Run the unit through the handler table."""
        HANDLERS[type(self)](self[0], self)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        execution = self[2]
        owner = execution.execution_id if execution is not None else self[1].flow_id
        return f"{type(self).__name__}({owner})"


class RetryAttempt(Unit):
    """Run the next attempt of the execution's current method (after a backoff)."""

    __slots__ = ()
    kind = "retry"


class ResumeAfterLock(Unit):
    """Run the attempt that waited for its method's locks, now that it holds them."""

    __slots__ = ()
    kind = "lock"


class TimerFired(Unit):
    """A Timer condition of a waiting execution fired: ``(..., timer)``."""

    __slots__ = ()
    kind = "timer"


class MethodTimedOut(Unit):
    """A running attempt reached its deadline: ``(..., ctx, token, deadline)``."""

    __slots__ = ()
    kind = "timeout"


class HeartbeatDue(Unit):
    """The worker of a running attempt heartbeats: ``(..., ctx, token, limit, period)``."""

    __slots__ = ()
    kind = "heartbeat"


class HeartbeatLost(Unit):
    """A running attempt's heartbeat window ran out: ``(..., ctx, token, window)``."""

    __slots__ = ()
    kind = "heartbeat-lost"


class DelayedStart(Unit):
    """The start Step of a run whose start delay has passed is announced (R141)."""

    __slots__ = ()
    kind = "delayed-start"


class ResumeMethod(Unit):
    """A recovered method attempt starts again, taking its locks first: ``(..., keys)``."""

    __slots__ = ()
    kind = "resume"


class FlowRetry(Unit):
    """A failed run starts over under its Flow retry policy (R11)."""

    __slots__ = ()
    kind = "flow-retry"


class FlowTimeout(Unit):
    """A run reached its Flow timeout (R139)."""

    __slots__ = ()
    kind = "flow-timeout"


def _retry(rt: Runtime, unit: Unit) -> None:
    rt.invoker.attempt(unit[1], unit[2])


def _timer(rt: Runtime, unit: Unit) -> None:
    rt.waits.complete_timer(unit[1], unit[2], unit[3], False)


def _timed_out(rt: Runtime, unit: Unit) -> None:
    rt.invoker.timed_out(unit[1], unit[2], unit[3], unit[4], unit[5])


def _heartbeat(rt: Runtime, unit: Unit) -> None:
    from dexviz.engine import heartbeats

    heartbeats.beat(rt, unit)


def _heartbeat_lost(rt: Runtime, unit: Unit) -> None:
    from dexviz.engine import heartbeats

    heartbeats.lost(rt, unit)


def _delayed_start(rt: Runtime, unit: Unit) -> None:
    run, ex = unit[1], unit[2]
    if run.is_open and ex.active:
        rt.decisions.announce(run, ex, "start")


def _resume(rt: Runtime, unit: Unit) -> None:
    run, ex, keys = unit[1], unit[2], unit[3]
    ex.pending_unit = None
    if not ex.active or not run.is_open:
        return
    if keys and not rt.lock_table(run).acquire_or_wait(
        keys, ex.execution_id, ResumeAfterLock.of(rt, run, ex)
    ):
        return
    rt.invoker.attempt(run, ex)


def _flow_retry(rt: Runtime, unit: Unit) -> None:
    rt.starts.retry(unit[1])


def _flow_timeout(rt: Runtime, unit: Unit) -> None:
    rt.timeouts.fire(unit[1])


HANDLERS: dict[type[Unit], Callable[[Runtime, Any], None]] = {
    RetryAttempt: _retry,
    ResumeAfterLock: _retry,
    TimerFired: _timer,
    MethodTimedOut: _timed_out,
    HeartbeatDue: _heartbeat,
    HeartbeatLost: _heartbeat_lost,
    DelayedStart: _delayed_start,
    ResumeMethod: _resume,
    FlowRetry: _flow_retry,
    FlowTimeout: _flow_timeout,
}
"""What each kind of unit does, given the runtime and the unit."""
