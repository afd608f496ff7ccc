"""Why a run failed: the failing Step execution, its error type and message, and its attempts.

Read from the history only (``StepExecuteFailed``/``StepWaitForFailed`` and the attempts before
them, or the ``FlowClosed`` error when no Step failed, e.g. a Flow timeout), so a saved history
explains its failure as well as a live run.
"""

from __future__ import annotations

from dataclasses import dataclass

from dexviz.analysis.executions import (
    AttemptOutcome,
    Execution,
    ExecutionStatus,
    RunExecutions,
)
from dexviz.history._plural import plural

__all__ = ["RunFailure", "run_failure", "step_failures"]


@dataclass(frozen=True)
class RunFailure:
    """One failure of a run, ready to print.

    Attributes:
        execution_id: The failing Step execution (None when the Flow itself failed).
        step_type: Its Step type.
        method: ``execute`` or ``wait_for`` (the method whose attempts failed).
        error_type: The error's type (``builtins.TypeError``), or the Flow's error type.
        error_message: The error's message.
        attempts: How many attempts the method made.
    """

    execution_id: str | None
    step_type: str | None
    method: str | None
    error_type: str | None
    error_message: str | None
    attempts: int

    @classmethod
    def of_execution(cls, execution: Execution) -> RunFailure:
        """The failure of one failed execution, from its last failed attempt."""
        failed = [a for a in execution.attempts if a.outcome == AttemptOutcome.FAILED]
        last = failed[-1] if failed else None
        method = last.method if last is not None else None
        tried = [a for a in execution.attempts if method is None or a.method == method]
        return cls(
            execution.execution_id, execution.step_type, method,
            execution.error_type or (last.error_type if last else None),
            execution.error_message or (last.error_message if last else None),
            # A Dex server folds retries into one event whose attempt is the last one's number.
            max([len(tried), *(a.number for a in tried)]),
        )

    def describe(self) -> str:
        """``Boom-1 execute failed after 3 attempts: TypeError: unsupported operand``."""
        error = _short_type(self.error_type)
        detail = f"{error}: {self.error_message}" if self.error_message else error
        if self.execution_id is None:
            return f"the Flow failed: {detail}"
        return (f"{self.execution_id} {self.method or 'execute'} failed after "
                f"{plural(self.attempts, 'attempt')}: {detail}")


def step_failures(run: RunExecutions) -> tuple[RunFailure, ...]:
    """Every failed Step execution of the run, in creation order (routed ones included)."""
    return tuple(RunFailure.of_execution(e) for e in run.values()
                 if e.status == ExecutionStatus.FAILED)


def run_failure(run: RunExecutions) -> RunFailure | None:
    """Why a FAILED run failed: its last unrecovered Step failure, else the Flow's error.

    None when the run did not fail.
    """
    if run.close is None or run.close.status != "FAILED":
        return None
    failures = [f for f, e in zip(step_failures(run), _failed(run), strict=True)
                if e.recovery is None]
    if failures:
        return failures[-1]
    return RunFailure(None, None, None, run.close.error_type, run.close.error_message, 0)


def _failed(run: RunExecutions) -> list[Execution]:
    return [e for e in run.values() if e.status == ExecutionStatus.FAILED]


def _short_type(error_type: str | None) -> str:
    if not error_type:
        return "error"
    return error_type.removeprefix("builtins.")
