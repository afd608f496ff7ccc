"""The phase of every execution of a run, folded from its events (what a restart resumes from).

Recovery rebuilds a run at its last commit and a time travel rebuilds one at its fork; both need
each execution's phase, its registered wait, the messages it holds and whether its WaitFor
failed and proceeded. :class:`PhaseFold` computes those once, for both; each subclasses it to add
what only it needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from dexviz.history.event import Event
from dexviz.history.fold import HistoryFold

__all__ = ["DONE_PHASES", "ExecutionPhase", "PhaseFold"]

DONE_PHASES = frozenset({"done", "canceled"})
"""The phases of an execution that has finished."""


@dataclass
class ExecutionPhase:
    """One execution's phase and what it holds, as of the events folded so far.

    ``phase`` is ``queued``, ``wait_for``, ``execute``, ``waiting``, ``satisfied`` (its wait took
    its messages; Execute has not committed), ``done`` or ``canceled``.
    """

    execution_id: str
    step_type: str
    input: Any
    from_execution_id: str
    phase: str = "queued"
    wait: dict[str, Any] | None = None
    reserved: list[str] = field(default_factory=list)
    wait_for_failed: bool = False

    @property
    def active(self) -> bool:
        """Whether the execution had not finished."""
        return self.phase not in DONE_PHASES


E = TypeVar("E", bound=ExecutionPhase)


class PhaseFold(HistoryFold, Generic[E]):
    """Folds events into one :class:`ExecutionPhase` (or subclass) per execution.

    Subclasses say how a record is made (:meth:`new_execution`) and extend the handlers; events
    of an execution never created in these events change nothing.
    """

    def __init__(self, executions: dict[str, E] | None = None) -> None:
        self.executions: dict[str, E] = {} if executions is None else executions

    def new_execution(self, event: Event) -> E:
        """The record of the execution a StepExecutionCreated event creates."""
        raise NotImplementedError

    def execution(self, event: Event) -> E | None:
        """The record of the execution ``event`` is about, if it was created."""
        ex_id = event.execution_id
        return self.executions.get(ex_id) if ex_id is not None else None

    def on_step_execution_created(self, event: Event) -> None:
        """Create the execution's record, in the phase a time travel resumed it in."""
        ex_id = event.execution_id
        if ex_id is None:
            return
        payload = event.payload
        ex = self.new_execution(event)
        # An execution resumed by a time travel carries the phase it resumed in.
        ex.phase = payload.get("resumed_phase", "queued")
        ex.wait = payload.get("wait")
        self.executions[ex_id] = ex

    def on_attempt_started(self, event: Event) -> None:
        """The execution runs its WaitFor or its Execute."""
        ex = self.execution(event)
        if ex is not None:
            ex.phase = "wait_for" if event.method == "wait_for" else "execute"

    def on_step_wait_for_completed(self, event: Event) -> None:
        """The execution waits on the conditions its WaitFor registered."""
        ex = self.execution(event)
        if ex is not None:
            ex.phase, ex.wait = "waiting", dict(event.payload.get("wait", {}))

    def on_wait_satisfied(self, event: Event) -> None:
        """The wait took its messages; Execute comes next."""
        ex = self.execution(event)
        if ex is not None:
            ex.phase = "satisfied"

    def on_message_consumed(self, event: Event) -> None:
        """The execution holds the message until its Execute commits."""
        ex = self.execution(event)
        if ex is not None:
            ex.reserved.append(event.payload["message_id"])

    def on_message_returned(self, event: Event) -> None:
        """The execution no longer holds the returned message."""
        ex = self.execution(event)
        if ex is not None:
            message_id = event.payload["message_id"]
            ex.reserved = [m for m in ex.reserved if m != message_id]

    def on_step_wait_for_failed(self, event: Event) -> None:
        """Execute still runs under the PROCEED policy; otherwise the execution is done."""
        ex = self.execution(event)
        if ex is None:
            return
        if event.payload.get("policy") == "PROCEED":
            ex.phase, ex.wait_for_failed = "satisfied", True
        else:
            ex.phase = "done"

    def on_step_execute_completed(self, event: Event) -> None:
        """The execution is done and its reserved messages are gone."""
        ex = self.execution(event)
        if ex is not None:
            ex.phase, ex.reserved = "done", []

    def on_step_execute_failed(self, event: Event) -> None:
        """The execution is done."""
        ex = self.execution(event)
        if ex is not None:
            ex.phase = "done"

    def on_execution_canceled(self, event: Event) -> None:
        """The execution is canceled; its reserved messages went back."""
        ex = self.execution(event)
        if ex is not None:
            ex.phase, ex.reserved = "canceled", []
