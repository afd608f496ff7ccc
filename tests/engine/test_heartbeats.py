"""Cancellation reaches a running handler only through heartbeats (R107 as corrected; issue 16).

The worker heartbeats for a running attempt; a cancel rides on the next heartbeat; only a hung
worker (a fault) times the attempt out; without a heartbeat timeout nothing reaches the handler.
"""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from typing import Any

import pytest

from dexviz import (
    Attribute,
    Context,
    EventKind,
    FaultPlan,
    Step,
    StepDecision,
    StepDurability,
    StepMovement,
    StepOptions,
    Timer,
    Wait,
    current_time_millis,
    dead_end,
    go_to,
    go_to_many,
    graceful_complete,
    simulate,
)
from tests.engine.flows_live import (
    MODES,
    LFlow,
    engine_in,
    reach_kind,
    retries,
    wait_until,
)


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# -- 7: cancellation reaches a running handler only through heartbeats --------------------------

MARKS = Attribute("marks", int)


class Long(Step[int]):
    """Works ``n`` seconds; records what it saw, and writes ``marks`` only if it finishes."""

    def __init__(self, heartbeat: int | None, durability: StepDurability) -> None:
        self.heartbeat, self.durability = heartbeat, durability
        self.log: list[tuple[str, Any]] = []

    def get_step_options(self) -> Any:
        return StepOptions(
            heartbeat_timeout=None if self.heartbeat is None else timedelta(seconds=self.heartbeat),
            execute_durability=self.durability,
            execute_retry=retries(3),
        )

    async def execute(self, context: Context, n: int) -> StepDecision:
        started = current_time_millis()
        try:
            await asyncio.sleep(n)
        except asyncio.CancelledError:
            self.log.append(("cancelled", context.is_cancellation_requested()))
            self.log.append(("after_s", (current_time_millis() - started) / 1000))
            raise
        self.log.append(("finished", context.is_cancellation_requested()))
        MARKS.set(context, n)
        return graceful_complete(n)


class Fork(Step[int]):
    """Starts Long(n) and, when ``n`` is negative, a Killer too."""

    def execute(self, context: Context, n: int) -> StepDecision:
        if n < 0:
            return go_to_many(StepMovement.of(Long, -n), StepMovement.of(Killer, 1))
        return go_to(Long, n)


class Killer(Step[int]):
    """After ``n`` seconds, cancels every Long and dead-ends."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(seconds=n)))

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end().with_canceling_steps(Long)


def _long_flow(heartbeat: int | None, durability: StepDurability = StepDurability.SYNC) -> Any:
    long = Long(heartbeat, durability)
    return long, LFlow("Beating", Fork(), [long, Killer()], [MARKS])


def _attempts(history: Any) -> list[Any]:
    return [e for e in history if e.kind == EventKind.ATTEMPT_STARTED and e.step_type == "Long"]


def test_a_handler_that_runs_long_with_a_heartbeat_is_invoked_once(mode: str) -> None:
    """R107 as corrected: the worker heartbeats for the handler, so a 3 s handler with a 1 s
    heartbeat timeout (10 s and 2 s in the rule's example) is not retried at the timeout."""
    long, flow = _long_flow(heartbeat=1)
    with engine_in([flow], mode) as engine:
        engine.client().start_flow(flow, "f", 3)
        result = engine.client().wait_for_flow("f", timedelta(seconds=20))
        history = engine.history("f")
    assert result.single_output(int) == 3
    assert len(_attempts(history)) == 1
    assert [e for e in history if e.kind == EventKind.ATTEMPT_FAILED] == []
    assert long.log == [("finished", False)]


@pytest.mark.parametrize("durability", [StepDurability.SYNC, StepDurability.ASYNC])
def test_a_cancel_reaches_a_running_handler_on_its_next_heartbeat(
    mode: str, durability: StepDurability
) -> None:
    """A sibling's with_canceling_steps at 1 s: the handler's task is cancelled at the worker's
    next heartbeat (every half window), is_cancellation_requested() is true, and there is no
    retry, failure route or write. ASYNC (local) execution behaves the same."""
    long, flow = _long_flow(heartbeat=1, durability=durability)
    with engine_in([flow], mode) as engine:
        engine.client().start_flow(flow, "f", -4)
        reach_kind(engine, "f", EventKind.EXECUTION_CANCELED)
        if mode == "simulation":
            engine.run_until_idle()
        assert wait_until(lambda: len(long.log) == 2)
        history = engine.history("f")
        marks = engine.client().get_attribute("f", MARKS)
    assert long.log[0] == ("cancelled", True)
    assert 1.0 <= long.log[1][1] < 2.5  # canceled at 1 s; beats every 0.5 s
    assert len(_attempts(history)) == 1
    assert [e for e in history if e.kind == EventKind.ATTEMPT_FAILED] == []
    assert marks is None


def test_without_a_heartbeat_timeout_a_canceled_handler_is_never_interrupted(mode: str) -> None:
    """Nothing carries the cancel to it: it runs its 3 s to the end, never sees a request,
    and its result and write are discarded."""
    long, flow = _long_flow(heartbeat=None)
    with engine_in([flow], mode) as engine:
        engine.client().start_flow(flow, "f", -3)
        reach_kind(engine, "f", EventKind.EXECUTION_CANCELED)
        if mode == "simulation":
            engine.run_until_idle()
        assert wait_until(lambda: bool(long.log), timeout=10)
        time.sleep(0.2 if mode == "live" else 0)
        history = engine.history("f")
        marks = engine.client().get_attribute("f", MARKS)
    assert long.log == [("finished", False)]
    assert marks is None
    assert [e for e in history if e.kind == EventKind.COMPLETION_REQUESTED] == []


def test_a_hung_worker_fails_the_attempt_at_the_heartbeat_timeout_and_it_is_retried() -> None:
    """Only stopped heartbeats time out: a hung worker (a fault) on attempt 1."""
    long, flow = _long_flow(heartbeat=2)
    run = simulate(flow, 3, faults=[FaultPlan.hang(Long)])
    failed = [e for e in run.history if e.kind == EventKind.ATTEMPT_FAILED]
    assert [(e.attempt, e.payload["reason"]) for e in failed] == [(1, "timeout")]
    assert "sent no heartbeat" in failed[0].payload["error_message"]
    assert run.result.single_output(int) == 3
    assert len(_attempts(run.history)) == 2
