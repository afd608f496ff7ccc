"""Helpers for the engine rule tests of sections 1-5 (R1-R78): ad-hoc Flows and history queries.

The rule tests define their own small Steps at module level (the Registry resolves handler
annotations from module globals) and assemble them into Flows with :class:`AdHocFlow`. Steps
record what their handlers saw in plain Python lists: that is an "external system" for Dex, so
it keeps the records of failed and canceled attempts too, which is exactly what several rules
need to observe.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import timedelta
from typing import Any

from dexviz import (
    Engine,
    Event,
    EventKind,
    Flow,
    History,
    LongPollTimeoutError,
    PersistenceSchema,
    RetryPolicy,
    StartFlowOptions,
    StepList,
    StepOptions,
    WaitForFailurePolicy,
)

ONE_ATTEMPT = RetryPolicy(maximum_attempts=1)
"""A method that is never retried."""


def retries(attempts: int, interval_s: int = 1) -> RetryPolicy:
    """A retry policy of ``attempts`` attempts with a fixed ``interval_s`` backoff."""
    return RetryPolicy(
        initial_interval=timedelta(seconds=interval_s),
        backoff_coefficient=1.0,
        maximum_attempts=attempts,
    )


NO_RETRY = StepOptions(wait_for_retry=ONE_ATTEMPT, execute_retry=ONE_ATTEMPT)
"""Both methods fail for good on their first failed attempt."""

PROCEED_ONCE = StepOptions(
    wait_for_retry=ONE_ATTEMPT, wait_for_failure=WaitForFailurePolicy.PROCEED
)
"""A WaitFor that is not retried and whose failure lets Execute run anyway (R44)."""


class AdHocFlow(Flow[Any]):
    """A Flow assembled from Step instances and persistence definitions, for one test.

    Args:
        flow_type: the Flow type to report.
        start: the start Step instance, or None for a Flow without a start Step (R3).
        others: the other Step instances.
        schema: Attributes, AttributeMaps, Channels and ChannelMaps it declares.
    """

    def __init__(
        self,
        flow_type: str,
        start: Any = None,
        others: Sequence[Any] = (),
        schema: Sequence[Any] = (),
    ) -> None:
        self._flow_type = flow_type
        self._start = start
        self._others = tuple(others)
        self._schema = tuple(schema)

    def get_flow_type(self) -> str:
        return self._flow_type

    def get_steps(self) -> StepList[Any]:
        if self._start is None:
            return StepList.without_start_step(*self._others)
        return StepList.start_step(self._start).other_steps(*self._others)

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(*self._schema)


def started(
    flow: Flow[Any],
    input: Any = None,
    *,
    seed: int = 0,
    options: StartFlowOptions | None = None,
    faults: Any = None,
) -> Engine:
    """An engine with ``flow`` started as ``flow-1`` (nothing has run yet)."""
    engine = Engine([flow], seed=seed, faults=faults)
    engine.client().start_flow(flow, "flow-1", input, options)
    return engine


def run_now(engine: Engine, flow_id: str = "flow-1") -> None:
    """Run everything that is due now, without moving virtual time (no timer fires early)."""
    try:
        engine.client().wait_for_flow(flow_id, timeout=timedelta(0))
    except LongPollTimeoutError:
        pass


def of_kind(
    history: Iterable[Event], kind: EventKind, execution_id: str | None = None
) -> list[Event]:
    """The events of ``kind`` (about ``execution_id`` when given), in order."""
    return [
        e
        for e in history
        if e.kind == kind and (execution_id is None or e.execution_id == execution_id)
    ]


def failed_attempts(history: History, execution_id: str | None = None) -> list[Mapping[str, Any]]:
    """The payloads of the AttemptFailed events (of one execution when given)."""
    return [e.payload for e in of_kind(history, EventKind.ATTEMPT_FAILED, execution_id)]


def queued(engine: Engine, channel: str, flow_id: str = "flow-1") -> tuple[Any, ...]:
    """The values queued in ``channel`` (reserved messages excluded), front first."""
    return tuple(engine.flow_state(flow_id).channels.get(channel, ()))


def active(engine: Engine, flow_id: str = "flow-1") -> dict[str, str]:
    """The active executions of ``flow_id`` and their phases."""
    return {a.execution_id: a.phase for a in engine.flow_state(flow_id).active_executions}


def execution_ids(history: History) -> list[str]:
    """The ids of every execution created, in creation order."""
    return [e.execution_id or "" for e in of_kind(history, EventKind.STEP_EXECUTION_CREATED)]
