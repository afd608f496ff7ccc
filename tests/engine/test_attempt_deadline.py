"""R104, R106: what an attempt's timeout says when the method timeout or the retry window ends it.

A locked Step whose first attempt waited for its Attribute lock longer than its retry policy's
``total_duration`` starts with nothing left of the retry window (R104): it fails as a timeout, in
the same place and with the same history as before, and its message says that the window had
ended while it waited for its lock (not "timed out after 0 s").
"""

from __future__ import annotations

import asyncio
import re
import time
from datetime import timedelta

import pytest

from dexviz import (
    Attribute,
    Channel,
    Context,
    EventKind,
    FlowStatus,
    RetryPolicy,
    Step,
    StepDecision,
    StepMovement,
    StepOptions,
    Timer,
    Wait,
    dead_end,
    go_to_many,
)
from dexviz.engine.attempt_deadline import AttemptDeadline
from tests.engine.flows_live import SOON, Gate, LFlow, engine_in, of_kind, wait_until

N = Attribute("n", int)
GO = Channel("go", str)
LATE = "Flow 'LateLock', Step Late-1 execute attempt 1"


class Fanout(Step[float]):
    """Starts the lock Holder (for ``hold_s`` seconds) and the Late Step side by side."""

    def execute(self, context: Context, hold_s: float) -> StepDecision:
        return go_to_many(StepMovement.of(Holder, hold_s), StepMovement.of(Late, hold_s))


class Holder(Step[float]):
    """Holds the lock on n for ``hold_s`` seconds."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_lock_attributes=(N.lock(),))

    async def execute(self, context: Context, hold_s: float) -> StepDecision:  # type: ignore[override]
        await asyncio.sleep(hold_s)
        return dead_end()


class Late(Step[float]):
    """Asks for the lock after a 1 s WaitFor; its retry window is ``total_s`` long."""

    def __init__(self, total_s: int) -> None:
        self.total_s = total_s

    def get_step_options(self) -> StepOptions:
        retry = RetryPolicy(maximum_attempts=3, total_duration=timedelta(seconds=self.total_s))
        return StepOptions(execute_lock_attributes=(N.lock(),), execute_retry=retry)

    def wait_for(self, context: Context, hold_s: float) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(seconds=1)))

    async def execute(self, context: Context, hold_s: float) -> StepDecision:  # type: ignore[override]
        await asyncio.sleep(10)
        return dead_end()


def test_r104_an_attempt_that_waited_past_total_duration_for_its_lock_says_so() -> None:
    flow = LFlow("LateLock", Fanout(), [Holder(), Late(2)], [N])
    with engine_in([flow], "simulation") as engine:
        client = engine.client()
        client.start_flow(flow, "late-1", 6.0)
        result = client.wait_for_flow("late-1")  # the simulation runs until idle
        events = [e for e in engine.history("late-1") if e.execution_id == "Late-1"]
    message = (f"{LATE} started after its retry window (total_duration 2 s from the method's "
               "start) had ended: it waited 5 s for its lock on 'n', so it was stopped at once")
    assert result.status is FlowStatus.FAILED
    assert result.failure == ("Flow 'LateLock', Step Late-1 execute failed after 1 attempt: "
                       f"builtins.TimeoutError: {message}")
    # The same failure as before: one timed-out, final attempt, then the method fails.
    assert [e.kind for e in events] == [
        EventKind.STEP_EXECUTION_CREATED, EventKind.ATTEMPT_STARTED,
        EventKind.STEP_WAIT_FOR_COMPLETED, EventKind.TIMER_STARTED, EventKind.TIMER_FIRED,
        EventKind.WAIT_SATISFIED, EventKind.ATTEMPT_STARTED, EventKind.ATTEMPT_FAILED,
        EventKind.STEP_EXECUTE_FAILED,
    ]
    failed = of_kind(events, EventKind.ATTEMPT_FAILED)[0]
    assert failed.payload["reason"] == "timeout" and failed.payload["final"] is True
    assert failed.payload["error_type"] == "builtins.TimeoutError"
    assert failed.payload["error_message"] == message


class LiveFanout(Step[int]):
    """Starts LiveHolder and LiveLate side by side."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(StepMovement.of(LiveHolder, n), StepMovement.of(LiveLate, n))


class LiveHolder(Step[int]):
    """Holds the lock on n until the test opens its gate."""

    def __init__(self, gate: Gate) -> None:
        self.gate = gate

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_lock_attributes=(N.lock(),))

    def execute(self, context: Context, n: int) -> StepDecision:
        self.gate.hold()
        return dead_end()


class LiveLate(Step[int]):
    """Asks for the lock once ``go`` has a message; its retry window is 1 s long."""

    def get_step_options(self) -> StepOptions:
        retry = RetryPolicy(maximum_attempts=3, total_duration=timedelta(seconds=1))
        return StepOptions(execute_lock_attributes=(N.lock(),), execute_retry=retry)

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(GO.for_one())

    async def execute(self, context: Context, n: int) -> StepDecision:  # type: ignore[override]
        await asyncio.sleep(10)  # it never gets this far: its attempt is stopped at once
        return dead_end()


def test_r104_live_an_attempt_that_waited_past_total_duration_for_its_lock_says_so() -> None:
    gate = Gate()
    flow = LFlow("LateLock", LiveFanout(), [LiveHolder(gate), LiveLate()], [N, GO])
    with engine_in([flow], "live") as engine:
        client = engine.client()
        client.start_flow(flow, "late-1", 0)
        assert gate.arrived()  # LiveHolder has the lock
        client.publish("late-1", GO, "go")
        assert wait_until(lambda: bool(of_kind(engine.history("late-1"), EventKind.WAIT_SATISFIED)))
        time.sleep(1.2)  # LiveLate waits for the lock past its 1 s retry window
        gate.open()
        result = client.wait_for_flow("late-1", timeout=SOON)
        failed = of_kind(engine.history("late-1"), EventKind.ATTEMPT_FAILED, "LiveLate-1")
    assert result.status is FlowStatus.FAILED
    assert [(e.payload["reason"], e.payload["final"]) for e in failed] == [("timeout", True)]
    where = "Flow 'LateLock', Step LiveLate-1 execute attempt 1"
    pattern = (re.escape(f"{where} started after its retry window (total_duration 1 s from the "
                         "method's start) had ended: it waited ") + r"([0-9.e-]+)"
               + re.escape(" s for its lock on 'n', so it was stopped at once"))
    found = re.fullmatch(pattern, failed[0].payload["error_message"])
    assert found is not None, failed[0].payload["error_message"]
    assert float(found.group(1)) >= 1
    assert (result.failure or "").endswith(failed[0].payload["error_message"])


class Slow(Step[int]):
    """Runs 10 s under the given options."""

    def __init__(self, options: StepOptions) -> None:
        self.options = options

    def get_step_options(self) -> StepOptions:
        return self.options

    async def execute(self, context: Context, n: int) -> StepDecision:  # type: ignore[override]
        await asyncio.sleep(10)
        return dead_end()


@pytest.mark.parametrize(
    ("options", "ending"),
    [
        (StepOptions(execute_retry=RetryPolicy(maximum_attempts=1),
                     execute_method_timeout=timedelta(seconds=2)),
         "timed out after 2 s"),
        (StepOptions(execute_retry=RetryPolicy(total_duration=timedelta(seconds=3))),
         "timed out after 3 s, when its retry window (total_duration 3 s) ended"),
    ],
    ids=["r106-method-timeout", "r104-window-ends-mid-attempt"],
)
def test_a_running_attempt_s_timeout_names_what_ended_it(options: StepOptions, ending: str) -> None:
    flow = LFlow("Slow", Slow(options))
    with engine_in([flow], "simulation") as engine:
        client = engine.client()
        client.start_flow(flow, "slow-1", 0)
        client.wait_for_flow("slow-1", timeout=SOON)
        failed = of_kind(engine.history("slow-1"), EventKind.ATTEMPT_FAILED)
    assert [e.payload["error_message"] for e in failed] == [
        f"Flow 'Slow', Step Slow-1 execute attempt 1 {ending}"
    ]


def test_a_retry_window_over_without_a_lock_wait_is_still_named() -> None:
    deadline = AttemptDeadline(limit_ns=0, method_limit_ns=10**9, total_ns=2 * 10**9,
                               left_ns=0, waited_ns=0, locks=())
    assert deadline.message("Flow 'F', Step S-1 wait_for", 2) == (
        "Flow 'F', Step S-1 wait_for attempt 2 started after its retry window (total_duration "
        "2 s from the method's start) had ended, so it was stopped at once"
    )
