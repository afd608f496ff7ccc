"""Where a time travel forks, and each execution's phase folded from the old run's events."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dexviz.history.event import Event
from dexviz.history.kinds import EventKind
from dexviz.history.phases import ExecutionPhase, PhaseFold
from dexviz.sdk.flow_options import TimeTravelOptions, TimeTravelType


@dataclass
class FoldedExecution(ExecutionPhase):
    """One execution as of the fork point; ``timers``: timer index -> its deadline (ns)."""

    timers: dict[int, int] = field(default_factory=dict)


class _ForkFold(PhaseFold[FoldedExecution]):
    """The shared phase fold, plus the Timer deadlines a resumed wait counts down from."""

    def new_execution(self, event: Event) -> FoldedExecution:
        """A record holding the reserved messages a resumed execution names."""
        p = event.payload
        created = FoldedExecution(
            event.execution_id or "", event.step_type or "", p.get("input"),
            p.get("from_execution_id", ""),
        )
        created.reserved = list(p.get("reserved", ()))
        return created

    def on_timer_started(self, event: Event) -> None:
        """Remember the Timer's deadline."""
        folded = self.execution(event)
        if folded is not None:
            folded.timers[int(event.payload["timer_index"])] = int(event.payload["fire_at_ns"])


def fork_index(events: list[Event], options: TimeTravelOptions) -> int:
    """Index of the first event of the old run that the new run does not keep."""
    kind = options.type

    def first(predicate: Any, what: str) -> int:
        for index, event in enumerate(events):
            if event.kind == EventKind.ATTEMPT_STARTED and predicate(event):
                return index
        raise ValueError(f"time_travel: no {what} in run {events[0].run_id}")

    if kind is TimeTravelType.BEGINNING:
        return first(lambda e: True, "Step invocation")
    if kind is TimeTravelType.STEP_TYPE:
        return first(
            lambda e: e.step_type == options.step_type, f"invocation of Step {options.step_type!r}"
        )
    if kind is TimeTravelType.STEP_EXECUTION_ID:
        method = (
            "wait_for"
            if options.step_method is not None and options.step_method.name == "WAIT_FOR"
            else "execute"
        )
        return first(
            lambda e: e.execution_id == options.step_execution_id and e.method == method,
            f"{method} of {options.step_execution_id}",
        )
    assert options.history_event_time is not None
    since = int(options.history_event_time.timestamp() * 1e9)
    return first(lambda e: e.time_ns >= since, "Step invocation at or after that time")


def fold_execution(executions: dict[str, FoldedExecution], event: Event) -> None:
    """Advance the folded execution an event is about (creating it on StepExecutionCreated)."""
    _ForkFold(executions).apply(event)
