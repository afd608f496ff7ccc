"""Event kinds: Dex's semantic history events (as Dex Web names them) plus dexviz's finer trace."""

from __future__ import annotations

import enum


class EventKind(enum.StrEnum):
    """Every kind of history event dexviz records.

    The first group are Dex's own semantic events; the second is the finer trace the debugger,
    timeline and tables need (Dex Web has no equivalent for them).
    """

    FLOW_STARTED_OR_CONTINUED = "FlowStartedOrContinued"
    STEP_WAIT_FOR_COMPLETED = "StepWaitForCompleted"
    STEP_WAIT_FOR_FAILED = "StepWaitForFailed"
    STEP_EXECUTE_COMPLETED = "StepExecuteCompleted"
    STEP_EXECUTE_FAILED = "StepExecuteFailed"
    STEP_WAIT_FOR_PENDING = "StepWaitForPending"
    STEP_EXECUTE_PENDING = "StepExecutePending"
    RPC_EXECUTION_COMPLETED = "RpcExecutionCompleted"
    CHANNEL_EXTERNAL_PUBLISH = "ChannelExternalPublish"
    TIME_TRAVEL_FORK = "TimeTravelFork"
    FLOW_CLOSED = "FlowClosed"

    STEP_EXECUTION_CREATED = "StepExecutionCreated"
    ATTEMPT_STARTED = "AttemptStarted"
    ATTEMPT_FAILED = "AttemptFailed"
    WAIT_SATISFIED = "WaitSatisfied"
    MESSAGE_PUBLISHED = "MessagePublished"
    MESSAGE_CONSUMED = "MessageConsumed"
    MESSAGE_RETURNED = "MessageReturned"
    TIMER_STARTED = "TimerStarted"
    TIMER_FIRED = "TimerFired"
    TIMER_SKIPPED = "TimerSkipped"
    EXECUTION_CANCELED = "ExecutionCanceled"
    COMPLETION_REQUESTED = "CompletionRequested"
    RECOVERED = "Recovered"

    @property
    def is_semantic(self) -> bool:
        """Whether Dex itself records this kind (the rest is dexviz's trace)."""
        return self in SEMANTIC_KINDS


SEMANTIC_KINDS = frozenset(
    {
        EventKind.FLOW_STARTED_OR_CONTINUED,
        EventKind.STEP_WAIT_FOR_COMPLETED,
        EventKind.STEP_WAIT_FOR_FAILED,
        EventKind.STEP_EXECUTE_COMPLETED,
        EventKind.STEP_EXECUTE_FAILED,
        EventKind.STEP_WAIT_FOR_PENDING,
        EventKind.STEP_EXECUTE_PENDING,
        EventKind.RPC_EXECUTION_COMPLETED,
        EventKind.CHANNEL_EXTERNAL_PUBLISH,
        EventKind.TIME_TRAVEL_FORK,
        EventKind.FLOW_CLOSED,
    }
)
"""Dex's own semantic event kinds."""


def kind_of(name: str) -> EventKind | str:
    """Map a kind name to EventKind; unknown names (e.g. from a newer Dex) stay plain strings."""
    try:
        return EventKind(name)
    except ValueError:
        return name
