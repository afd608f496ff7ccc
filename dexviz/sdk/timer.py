"""Timers and the identifiers clients use to address Step executions and their timers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from dexviz.sdk.condition import TimerCondition


class Timer:
    """Factory for durable timer conditions."""

    @staticmethod
    def by_duration(duration: timedelta, *, condition_id: str | None = None) -> TimerCondition:
        """Return a timer condition that completes ``duration`` (whole seconds, >= 0) later."""
        if not isinstance(duration, timedelta):
            raise TypeError(f"Timer.by_duration needs a timedelta, got {type(duration).__name__}")
        if duration < timedelta(0):
            raise ValueError(f"Timer duration must be >= 0, got {duration}")
        if duration.microseconds:
            raise ValueError(f"Timer duration must be whole seconds, got {duration}")
        return TimerCondition(duration=duration, condition_id=condition_id)


@dataclass(frozen=True)
class StepExecutionId:
    """Names one Step execution, ``StepType-N`` with N counted from 1 per Step type."""

    step_type: str
    number: int = 1

    def __post_init__(self) -> None:
        if not self.step_type:
            raise ValueError("StepExecutionId needs a step_type")
        if self.number < 1:
            raise ValueError(f"StepExecutionId number must be >= 1, got {self.number}")

    @classmethod
    def parse(cls, text: str) -> StepExecutionId:
        """Parse ``"Type-N"`` into a StepExecutionId."""
        step_type, sep, number = text.rpartition("-")
        if not sep or not number.isdigit():
            raise ValueError(f"not a Step execution id (expected 'Type-N'): {text!r}")
        return cls(step_type, int(number))

    def __str__(self) -> str:
        return f"{self.step_type}-{self.number}"


@dataclass(frozen=True)
class TimerId:
    """Selects one timer of a waiting execution, by condition id or by 0-based index."""

    condition_id: str | None = None
    condition_index: int | None = None

    def __post_init__(self) -> None:
        if (self.condition_id is None) == (self.condition_index is None):
            raise ValueError("TimerId takes exactly one of condition_id or condition_index")
        if self.condition_index is not None and self.condition_index < 0:
            raise ValueError(f"TimerId index must be >= 0, got {self.condition_index}")

    @classmethod
    def by_condition_id(cls, condition_id: str) -> TimerId:
        """Select the timer whose condition id is ``condition_id``."""
        return cls(condition_id=condition_id)

    @classmethod
    def by_condition_index(cls, index: int) -> TimerId:
        """Select the ``index``-th Timer condition of the Wait (0-based, declaration order)."""
        return cls(condition_index=index)
