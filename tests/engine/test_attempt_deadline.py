"""R104, R106: what an attempt's timeout says when the method timeout or the retry window ends it.

A locked Step whose first attempt waited for its Attribute lock longer than its retry policy's
``total_duration`` starts with nothing left of the retry window (R104): it fails as a timeout, in
the same place and with the same history as before, and its message says that the window had
ended while it waited for its lock (not "timed out after 0 s"). Such an attempt, and a retry that
starts late, is stopped before its handler is called: sync or async, WaitFor or Execute, in
simulation or live, with one and the same history.
"""

from __future__ import annotations

import asyncio
import re
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dexviz import (
    Attribute,
    Channel,
    Context,
    Engine,
    EventKind,
    FaultPlan,
    FlowStatus,
    MemoryStore,
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
from dexviz.engine import EngineCrashed
from dexviz.engine.core.attempt_deadline import AttemptDeadline
from tests.engine.flows_live import (
    SOON,
    Gate,
    LFlow,
    engine_in,
    of_kind,
    reach_kind,
    wait_until,
)

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
    deadline = AttemptDeadline(limit_ns=0, method_limit_ns=10**9,
                               total_ns=2 * 10**9, left_ns=0, waited_ns=0, locks=())
    assert deadline.message("Flow 'F', Step S-1 wait_for", 2) == (
        "Flow 'F', Step S-1 wait_for attempt 2 started after its retry window (total_duration "
        "2 s from the method's start) had ended, so it was stopped at once"
    )


# -- an attempt that starts with nothing left of its window never calls its handler ------------

CALLED: list[str] = []
"""What the handlers of attempts that should never run were called with (none should be)."""


def _window(total_s: float) -> RetryPolicy:
    return RetryPolicy(maximum_attempts=3, total_duration=timedelta(seconds=total_s))


class _Asker(Step[float]):
    """Locks n in one method with a ``total_s`` retry window; every variant is the Step "Late"."""

    def __init__(self, total_s: float) -> None:
        self.total_s = total_s

    def get_step_type(self) -> str:
        return "Late"


class ExecuteSync(_Asker):
    """Locks n in Execute."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_lock_attributes=(N.lock(),),
                           execute_retry=_window(self.total_s))

    def execute(self, context: Context, hold_s: float) -> StepDecision:
        CALLED.append("sync execute")
        return dead_end()


class ExecuteAsync(ExecuteSync):
    """Locks n in Execute."""

    async def execute(self, context: Context, hold_s: float) -> StepDecision:  # type: ignore[override]
        CALLED.append("async execute")
        return dead_end()


class WaitForSync(_Asker):
    """Locks n in WaitFor."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(wait_for_lock_attributes=(N.lock(),),
                           wait_for_retry=_window(self.total_s))

    def wait_for(self, context: Context, hold_s: float) -> Wait:
        CALLED.append("sync wait_for")
        return Wait.until(Timer.by_duration(timedelta(seconds=1)))

    def execute(self, context: Context, hold_s: float) -> StepDecision:
        CALLED.append("execute after wait_for")
        return dead_end()


class WaitForAsync(WaitForSync):
    """Locks n in WaitFor."""

    async def wait_for(self, context: Context, hold_s: float) -> Wait:  # type: ignore[override]
        CALLED.append("async wait_for")
        return Wait.until(Timer.by_duration(timedelta(seconds=1)))


ASKERS = {"sync execute": ExecuteSync, "async execute": ExecuteAsync,
          "sync wait_for": WaitForSync, "async wait_for": WaitForAsync}


class Opener(Step[float]):
    """Starts the lock Holder (for ``hold_s`` seconds) and the Delay side by side."""

    def execute(self, context: Context, hold_s: float) -> StepDecision:
        return go_to_many(StepMovement.of(Holder, hold_s), StepMovement.of(Delay, hold_s))


class Delay(Step[float]):
    """Moves to the lock-asking Step after 1 s, once Holder has the lock."""

    def __init__(self, asker: _Asker) -> None:
        self.asker = asker

    def wait_for(self, context: Context, hold_s: float) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(seconds=1)))

    def execute(self, context: Context, hold_s: float) -> StepDecision:
        return go_to_many(StepMovement.of(self.asker, hold_s))


def _simulated(variant: str) -> tuple[list[Any], Any]:
    asker = ASKERS[variant](2)
    flow = LFlow("LateLock", Opener(), [Holder(), Delay(asker), asker], [N])
    with engine_in([flow], "simulation") as engine:
        client = engine.client()
        client.start_flow(flow, "late-1", 6.0)
        result = client.wait_for_flow("late-1")
        return list(engine.history("late-1")), result


@pytest.mark.parametrize("method", ["execute", "wait_for"])
def test_r104_an_attempt_started_after_its_window_never_calls_its_handler_sync_or_async(
    method: str,
) -> None:
    CALLED.clear()
    sync_history, sync_result = _simulated(f"sync {method}")
    async_history, async_result = _simulated(f"async {method}")
    assert CALLED == []
    where = f"Flow 'LateLock', Step Late-1 {method}"
    message = (f"{where} attempt 1 started after its retry window (total_duration 2 s from the "
               "method's start) had ended: it waited 5 s for its lock on 'n', so it was stopped "
               "at once")
    assert sync_result.status is FlowStatus.FAILED
    assert sync_result.failure == (f"{where} failed after 1 attempt: builtins.TimeoutError: "
                                   f"{message}")
    late = [e for e in sync_history if e.execution_id == "Late-1"]
    method_failed = (EventKind.STEP_EXECUTE_FAILED if method == "execute"
                     else EventKind.STEP_WAIT_FOR_FAILED)
    assert [e.kind for e in late] == [EventKind.STEP_EXECUTION_CREATED,
                                      EventKind.ATTEMPT_STARTED, EventKind.ATTEMPT_FAILED,
                                      method_failed]
    assert {e.method for e in late[1:]} == {method}
    assert {e.time_ns - late[0].time_ns for e in late[1:]} == {5 * 10**9}
    failed = late[2].payload
    assert (failed["reason"], failed["final"], failed["error_type"], failed["error_message"]) == (
        "timeout", True, "builtins.TimeoutError", message)
    # A sync handler, which runs inline with no timeout armed, fails exactly like an async one
    # (the two Steps differ in nothing else, not even in the description the history records).
    assert sync_history == async_history
    assert sync_result == async_result


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(
    variant=st.sampled_from(sorted(ASKERS)),
    total_s=st.integers(1, 4),
    wait_ms=st.one_of(st.integers(0, 6000), st.sampled_from([1000, 2000, 3000, 4000])),
    seed=st.integers(0, 2**16),
)
def test_r104_a_handler_is_called_exactly_when_its_attempt_starts_inside_its_window(
    variant: str, total_s: int, wait_ms: int, seed: int
) -> None:
    """Late-1 waits ``wait_ms`` for its lock: its handler runs iff that is under its window."""
    CALLED.clear()
    asker = ASKERS[variant](total_s)
    flow = LFlow("LateLock", Opener(), [Holder(), Delay(asker), asker], [N])
    with engine_in([flow], "simulation", seed=seed) as engine:
        engine.client().start_flow(flow, "late-1", 1 + wait_ms / 1000)
        engine.run_until_idle()
        late = [e for e in engine.history("late-1") if e.execution_id == "Late-1"]
    stopped = [e for e in of_kind(late, EventKind.ATTEMPT_FAILED)
               if e.payload["reason"] == "timeout"]
    inside = wait_ms < total_s * 1000
    assert bool(CALLED) is inside
    assert len(stopped) == (0 if inside else 1)
    if not inside:
        assert "had ended" in stopped[0].payload["error_message"]
        assert stopped[0].payload["final"] is True


class Flaky(Step[float]):
    """Fails its first Execute attempt; a retry would succeed. Retries 1 s apart within 10 s."""

    def get_step_type(self) -> str:
        return "Flaky"

    def get_step_options(self) -> StepOptions:
        retry = RetryPolicy(initial_interval=timedelta(seconds=1),
                            total_duration=timedelta(seconds=10))
        return StepOptions(execute_retry=retry)

    def execute(self, context: Context, hold_s: float) -> StepDecision:
        CALLED.append(f"sync attempt {context.attempt}")
        if context.attempt == 1:
            raise RuntimeError("first attempt fails")
        return dead_end()


class FlakyAsync(Flaky):
    """Fails its first Execute attempt; a retry would succeed. Retries 1 s apart within 10 s."""

    async def execute(self, context: Context, hold_s: float) -> StepDecision:  # type: ignore[override]
        CALLED.append(f"async attempt {context.attempt}")
        if context.attempt == 1:
            raise RuntimeError("first attempt fails")
        return dead_end()


@pytest.mark.parametrize(
    ("kind", "commits", "first_ends"),
    [("sync", 2, "error"), ("async", 3, "error"), ("async", 2, "crash")],
    ids=["sync-retry", "async-retry", "async-running-at-the-crash"],
)
def test_r104_a_retry_that_starts_after_its_window_is_stopped_before_its_handler_runs(
    kind: str, commits: int, first_ends: str
) -> None:
    """The engine stops after attempt 1 failed (or while it ran) and resumes an hour later:
    attempt 2 is due at once, with its window long over, so it fails without running (before:
    a sync retry ran and succeeded)."""
    CALLED.clear()
    flow = LFlow("Resumed", Flaky() if kind == "sync" else FlakyAsync())
    store = MemoryStore()
    first = Engine([flow], store=store, faults=FaultPlan.of(FaultPlan.crash_after_commit(commits)))
    with pytest.raises(EngineCrashed):
        first.client().start_flow(flow, "r-1", 0.0)
        first.run_until_idle()
    stored = EventKind.ATTEMPT_FAILED if first_ends == "error" else EventKind.ATTEMPT_STARTED
    assert [e.kind for e in store.history("r-1")][-1] is stored
    later = datetime(2026, 1, 1, 1, tzinfo=UTC)  # an hour after the simulated start
    with Engine([flow], store=store, epoch=later) as resumed:
        resumed.run_until_idle()
        result = resumed.result("r-1")
        failed = of_kind(resumed.history("r-1"), EventKind.ATTEMPT_FAILED)
    message = ("Flow 'Resumed', Step Flaky-1 execute attempt 2 started after its retry window "
               "(total_duration 10 s from the method's start) had ended, so it was stopped at "
               "once")
    assert f"{kind} attempt 2" not in CALLED
    assert result.status is FlowStatus.FAILED
    assert [(e.attempt, e.payload["reason"], e.payload["final"]) for e in failed] == [
        (1, first_ends, False), (2, "timeout", True)]
    assert failed[1].payload["error_message"] == message
    assert (result.failure or "").endswith(message)


class LiveOpener(Step[float]):
    """Starts LiveHolder and LiveDelay side by side."""

    def execute(self, context: Context, hold_s: float) -> StepDecision:
        return go_to_many(StepMovement.of(LiveHolder, 0), StepMovement.of(LiveDelay, hold_s))


class LiveDelay(Step[float]):
    """Moves to the lock-asking Step once ``go`` has a message."""

    def __init__(self, asker: _Asker) -> None:
        self.asker = asker

    def wait_for(self, context: Context, hold_s: float) -> Wait:
        return Wait.until(GO.for_one())

    def execute(self, context: Context, hold_s: float) -> StepDecision:
        return go_to_many(StepMovement.of(self.asker, hold_s))


@pytest.mark.parametrize("variant", list(ASKERS))
def test_r104_live_an_attempt_started_after_its_window_never_calls_its_handler(
    variant: str,
) -> None:
    CALLED.clear()
    gate = Gate()
    asker = ASKERS[variant](1)
    flow = LFlow("LateLock", LiveOpener(), [LiveHolder(gate), LiveDelay(asker), asker], [N, GO])
    with engine_in([flow], "live") as engine:
        client = engine.client()
        client.start_flow(flow, "late-1", 0.0)
        assert gate.arrived()  # LiveHolder has the lock
        client.publish("late-1", GO, "go")
        reach_kind(engine, "late-1", EventKind.STEP_EXECUTION_CREATED, "Late-1")
        time.sleep(1.5)  # Late-1 waits for the lock well past its 1 s retry window
        gate.open()
        result = client.wait_for_flow("late-1", timeout=SOON)
        late = [e for e in engine.history("late-1") if e.execution_id == "Late-1"]
    method = variant.split()[1]
    assert CALLED == []
    assert [e.kind for e in late] == [
        EventKind.STEP_EXECUTION_CREATED, EventKind.ATTEMPT_STARTED, EventKind.ATTEMPT_FAILED,
        EventKind.STEP_EXECUTE_FAILED if method == "execute" else EventKind.STEP_WAIT_FOR_FAILED,
    ]
    failed = late[2].payload
    assert (failed["reason"], failed["final"]) == ("timeout", True)
    where = f"Flow 'LateLock', Step Late-1 {method} attempt 1"
    pattern = (re.escape(f"{where} started after its retry window (total_duration 1 s from "
                         "the method's start) had ended: it waited ") + r"([0-9.e-]+)"
               + re.escape(" s for its lock on 'n', so it was stopped at once"))
    found = re.fullmatch(pattern, failed["error_message"])
    assert found is not None, failed["error_message"]
    assert float(found.group(1)) >= 1
    assert result.status is FlowStatus.FAILED
    assert (result.failure or "").endswith(failed["error_message"])
