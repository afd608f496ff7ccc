"""Where a time travel forks, and each execution's phase folded from the old run's events."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dexviz.history.event import Event
from dexviz.history.kinds import EventKind
from dexviz.sdk.flow_options import TimeTravelOptions, TimeTravelType


@dataclass
class FoldedExecution:
    """One execution as of the fork point."""

    execution_id: str
    step_type: str
    input: Any
    from_execution_id: str
    phase: str = "queued"
    wait: dict[str, Any] | None = None
    timers: dict[int, int] = field(default_factory=dict)
    reserved: list[str] = field(default_factory=list)
    wait_for_failed: bool = False


def _set(phase: str) -> Any:
    def change(folded: FoldedExecution, event: Event) -> None:
        folded.phase = phase

    return change


def _attempt(folded: FoldedExecution, event: Event) -> None:
    folded.phase = "wait_for" if event.method == "wait_for" else "execute"


def _waiting(folded: FoldedExecution, event: Event) -> None:
    folded.phase, folded.wait = "waiting", dict(event.payload.get("wait", {}))


def _timer(folded: FoldedExecution, event: Event) -> None:
    folded.timers[int(event.payload["timer_index"])] = int(event.payload["fire_at_ns"])


def _consumed(folded: FoldedExecution, event: Event) -> None:
    folded.reserved.append(event.payload["message_id"])


def _returned(folded: FoldedExecution, event: Event) -> None:
    folded.reserved = [m for m in folded.reserved if m != event.payload["message_id"]]


def _wait_failed(folded: FoldedExecution, event: Event) -> None:
    proceed = event.payload.get("policy") == "PROCEED"
    folded.phase, folded.wait_for_failed = ("satisfied", True) if proceed else ("done", False)


_PHASES: dict[str, Any] = {
    EventKind.ATTEMPT_STARTED: _attempt,
    EventKind.STEP_WAIT_FOR_COMPLETED: _waiting,
    EventKind.TIMER_STARTED: _timer,
    EventKind.MESSAGE_CONSUMED: _consumed,
    EventKind.MESSAGE_RETURNED: _returned,
    EventKind.WAIT_SATISFIED: _set("satisfied"),
    EventKind.STEP_WAIT_FOR_FAILED: _wait_failed,
    EventKind.STEP_EXECUTE_COMPLETED: _set("done"),
    EventKind.STEP_EXECUTE_FAILED: _set("done"),
    EventKind.EXECUTION_CANCELED: _set("canceled"),
}


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
    ex_id = event.execution_id
    if ex_id is None:
        return
    if event.kind == EventKind.STEP_EXECUTION_CREATED:
        p = event.payload
        created = FoldedExecution(
            ex_id, event.step_type or "", p.get("input"), p.get("from_execution_id", "")
        )
        # An execution resumed by an earlier time travel carries the phase it resumed in.
        created.phase = p.get("resumed_phase", "queued")
        created.wait = p.get("wait")
        created.reserved = list(p.get("reserved", ()))
        executions[ex_id] = created
        return
    folded = executions.get(ex_id)
    change = _PHASES.get(str(event.kind))
    if folded is not None and change is not None:
        change(folded, event)
