"""Step: one durable unit of work with an optional WaitFor and a required Execute."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from dexviz.sdk.context import Context
    from dexviz.sdk.decision import StepDecision
    from dexviz.sdk.options import StepOptions
    from dexviz.sdk.wait import Wait

InputT = TypeVar("InputT")


class Step(Generic[InputT], ABC):
    """Subclass it, implement ``execute`` and optionally ``wait_for`` and ``get_step_options``.

    Handlers may be plain functions or coroutines (``async def`` with an AsyncContext). The
    input type is read from the annotation of ``execute``'s second parameter.
    """

    def wait_for(self, context: Context, input: InputT) -> Wait:
        """Return the conditions to wait on before Execute; not overriding it skips the WaitFor."""
        raise NotImplementedError(f"{type(self).__name__} has no wait_for")

    @abstractmethod
    def execute(self, context: Context, input: InputT) -> StepDecision:
        """Do the Step's work and return the decision."""

    def get_step_type(self) -> str:
        """Return the Step type; defaults to the class name."""
        return type(self).__name__

    def get_step_options(self) -> StepOptions | None:
        """Return the Step's options (retries, timeouts, failure routing); None for defaults."""
        return None

    def __repr__(self) -> str:
        return f"<Step {self.get_step_type()}>"


def has_wait_for(step: Step[Any]) -> bool:
    """Whether the Step overrides ``wait_for`` (otherwise the engine skips it, R19)."""
    return type(step).wait_for is not Step.wait_for
