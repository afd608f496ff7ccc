"""Units of work as records: what a queued or timed unit does, named by the run it acts for.

Every unit the engine queues or schedules is one of these records, never a lambda or closure:
the explorer reads its owner from it, a snapshot pickles it. A :class:`Unit` is a tuple
``(owner, run, execution, ...)`` whose owner holds the handler table (the runtime builds it,
one handler per kind; this module names no service); calling the unit dispatches through it. A
:class:`QueuedStart` names the :class:`MethodStarter` that runs it. Units compare and hash by
identity, like the closures they replaced.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from dexviz.engine.core.state import Execution, FlowRun

_new_tuple = tuple.__new__


class UnitOwner(Protocol):
    """What a unit record runs through: the table of what each kind of unit does."""

    handlers: dict[type[Unit], Callable[[Any], None]]


class MethodStarter(Protocol):
    """What runs a :class:`QueuedStart`: the first attempt of a method."""

    def start_unit(self, unit: QueuedStart) -> None:
        """Run the queued first attempt."""


class Unit(tuple):  # type: ignore[type-arg]
    """A unit of work: ``(owner, run, execution or None, *arguments)``."""

    __slots__ = ()
    kind: ClassVar[str] = "unit"

    @classmethod
    def of(cls, owner: UnitOwner, run: FlowRun, execution: Execution | None, *args: Any) -> Any:
        """The unit of this kind for ``run`` (and ``execution``) with its arguments."""
        return _new_tuple(cls, (owner, run, execution, *args))

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
        """Run the unit through its owner's handler table."""
        self[0].handlers[type(self)](self)

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


class QueuedStart(tuple):  # type: ignore[type-arg]
    """The unit that runs the first attempt of an execution's method once it is picked.

    ``(starter, run, execution, method, settings)``: a tuple rather than a closure or an
    object with ``__init__``, because one is queued per Step transition; the engine's loop and
    the explorer (which attributes units to executions) read what it is for. ``settings`` is
    the fast path's :class:`~dexviz.engine.attempt.step_settings.StepSettings` of the Step when the
    unit was queued by it, else None.
    """

    __slots__ = ()

    @staticmethod
    def of(starter: MethodStarter, run: FlowRun, execution: Execution, method: str) -> QueuedStart:
        """The unit for ``method`` of ``execution``."""
        return _new_tuple(QueuedStart, (starter, run, execution, method, None))

    @property
    def execution(self) -> Execution:
        """The execution whose method the unit starts."""
        return self[2]  # type: ignore[no-any-return]

    @property
    def method(self) -> str:
        """``wait_for`` or ``execute``."""
        return self[3]  # type: ignore[no-any-return]

    def __call__(self) -> None:
        """Run the unit: start the method's first attempt."""
        self[0].start_unit(self)

    # A unit is itself, like the closure it replaces: compared and hashed by identity.
    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"QueuedStart({self[2].execution_id} {self[3]})"
