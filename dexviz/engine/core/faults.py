"""FaultPlan: deterministic faults — failed attempts, cancellations, hung workers, crashes."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from dexviz.engine.core.choice import Chooser, FaultBudget, FaultPoint, step_name
from dexviz.history.event import Event
from dexviz.history.kinds import EventKind


class InjectedFailure(RuntimeError):
    """The default error of an injected failed attempt."""

    recorded_type: ClassVar[str] = "dexviz.engine.core.faults.InjectedFailure"
    """The ``error_type`` histories record for it, fixed where the class lives: the name
    histories recorded before the engine's modules moved into their layers, so that a stored
    run and a new one of the same Flow still compare equal."""


@dataclass(frozen=True)
class FailAttempt:
    """Fail attempt ``attempt`` of ``method`` of a Step type (optionally one execution)."""

    step_type: str
    method: str = "execute"
    attempt: int = 1
    error: BaseException | None = None
    execution_id: str | None = None

    def matches(self, step_type: str, method: str, attempt: int, execution_id: str) -> bool:
        """Whether this rule applies to the attempt about to run."""
        return (
            self.step_type == step_type
            and self.method == method
            and self.attempt == attempt
            and (self.execution_id is None or self.execution_id == execution_id)
        )


@dataclass(frozen=True)
class CancelExecution:
    """Cancel ``execution_id`` right after an event about it of kind ``at`` commits."""

    execution_id: str
    at: EventKind | str | Callable[[Event], bool] = EventKind.WAIT_SATISFIED
    flow_id: str | None = None

    def matches(self, event: Event) -> bool:
        """Whether ``event`` triggers this cancellation."""
        if self.flow_id is not None and event.flow_id != self.flow_id:
            return False
        if callable(self.at) and not isinstance(self.at, str):
            return event.execution_id == self.execution_id and bool(self.at(event))
        return event.execution_id == self.execution_id and str(event.kind) == str(self.at)


@dataclass(frozen=True)
class HangWorker:
    """A hung worker: attempt ``attempt`` of a Step type's ``method`` stops heartbeating (R107).

    The attempt then fails at its heartbeat timeout and is retried.
    """

    step_type: str
    method: str = "execute"
    attempt: int = 1

    def matches(self, step_type: str, method: str, attempt: int) -> bool:
        """Whether this rule applies to the running attempt."""
        return (self.step_type, self.method, self.attempt) == (step_type, method, attempt)


@dataclass(frozen=True)
class CrashAfterCommit:
    """Abandon the engine right after its ``commit``-th commit (1-based), as a crash would."""

    commit: int


Fault = FailAttempt | CancelExecution | HangWorker | CrashAfterCommit
"""Any one fault rule of a FaultPlan."""


class EngineCrashed(BaseException):
    """Raised out of the engine by a crash fault: the engine is abandoned, nothing is closed.

    A BaseException, so that no handler's ``except Exception`` swallows it. Open the same store
    with a new Engine to resume.
    """


@dataclass
class FaultPlan:
    """The faults to inject in one simulation; the same plan and seed replay identically.

    ``budget`` adds failures that may fire at any attempt it covers: the engine's chooser
    decides where (an explorer tries every place; a seeded simulation fires none).
    """

    failures: list[FailAttempt] = field(default_factory=list)
    cancellations: list[CancelExecution] = field(default_factory=list)
    hung: list[HangWorker] = field(default_factory=list)
    crash_after: int | None = None
    commits: int = 0
    _fired: set[int] = field(default_factory=set)
    budget: FaultBudget | None = None
    chooser: Chooser | None = field(default=None, repr=False, compare=False)
    spent: int = 0

    @classmethod
    def of(cls, *faults: Fault) -> FaultPlan:
        """Build a plan from ``fail``, ``cancel``, ``hang`` and ``crash_after_commit`` rules."""
        plan = cls()
        for fault in faults:
            plan.add(fault)
        return plan

    @staticmethod
    def fail(
        step: Any,
        method: str = "execute",
        attempt: int = 1,
        error: BaseException | None = None,
        *,
        execution_id: str | None = None,
    ) -> FailAttempt:
        """A rule failing attempt ``attempt`` of ``step``'s ``method`` with ``error``."""
        if method not in ("wait_for", "execute"):
            raise ValueError(f"method must be 'wait_for' or 'execute', got {method!r}")
        if attempt < 1:
            raise ValueError(f"attempt must be >= 1, got {attempt}")
        return FailAttempt(step_name(step), method, attempt, error, execution_id)

    @staticmethod
    def cancel(
        execution_id: str,
        at: EventKind | str | Callable[[Event], bool] = EventKind.WAIT_SATISFIED,
        *,
        flow_id: str | None = None,
    ) -> CancelExecution:
        """A rule canceling ``execution_id`` when an event of kind ``at`` about it commits."""
        return CancelExecution(execution_id, at, flow_id)

    @staticmethod
    def hang(step: Any, method: str = "execute", attempt: int = 1) -> HangWorker:
        """A rule hanging the worker of attempt ``attempt`` of ``step``'s ``method``."""
        if method not in ("wait_for", "execute"):
            raise ValueError(f"method must be 'wait_for' or 'execute', got {method!r}")
        if attempt < 1:
            raise ValueError(f"attempt must be >= 1, got {attempt}")
        return HangWorker(step_name(step), method, attempt)

    def hangs(self, step_type: str, method: str, attempt: int, execution_id: str) -> bool:
        """Whether the worker running this attempt is hung (its heartbeats stopped)."""
        del execution_id
        return any(rule.matches(step_type, method, attempt) for rule in self.hung)

    @staticmethod
    def crash_after_commit(commit: int) -> CrashAfterCommit:
        """A rule abandoning the engine right after its ``commit``-th commit (1-based)."""
        if commit < 1:
            raise ValueError(f"commit must be >= 1, got {commit}")
        return CrashAfterCommit(commit)

    def add(self, fault: Fault) -> None:
        """Add one rule."""
        if isinstance(fault, FailAttempt):
            self.failures.append(fault)
        elif isinstance(fault, CancelExecution):
            self.cancellations.append(fault)
        elif isinstance(fault, HangWorker):
            self.hung.append(fault)
        elif isinstance(fault, CrashAfterCommit):
            self.crash_after = fault.commit
        else:
            raise TypeError(
                "a FaultPlan takes FailAttempt, CancelExecution, HangWorker or CrashAfterCommit, "
                f"got {fault!r}"
            )

    def committed(self) -> None:
        """Count one engine commit; raise EngineCrashed right after the planned one."""
        self.commits += 1
        if self.commits == self.crash_after:
            raise EngineCrashed(f"crash fault: the engine stopped after commit {self.commits}")

    def extend(self, faults: Iterable[Fault]) -> None:
        """Add several rules."""
        for fault in faults:
            self.add(fault)

    def failure_for(
        self, step_type: str, method: str, attempt: int, execution_id: str
    ) -> BaseException | None:
        """The error to inject for this attempt, if a rule matches."""
        for rule in self.failures:
            if rule.matches(step_type, method, attempt, execution_id):
                return rule.error or InjectedFailure(
                    f"injected failure: {execution_id} {method} attempt {attempt}"
                )
        budget = self.budget
        if budget is None or self.spent >= budget.count or not budget.covers(step_type, method):
            return None
        point = FaultPoint(step_type, method, attempt, execution_id)
        if self.chooser is None or not self.chooser.fault(point):
            return None
        self.spent += 1
        return InjectedFailure(f"injected failure (budget): {point}")

    def cancellations_for(self, event: Event) -> list[tuple[str, str]]:
        """The (flow id, execution id) pairs to cancel after ``event``; each rule fires once."""
        if not self.cancellations:
            return []
        found: list[tuple[str, str]] = []
        for position, rule in enumerate(self.cancellations):
            if position not in self._fired and rule.matches(event):
                self._fired.add(position)
                found.append((event.flow_id, rule.execution_id))
        return found
