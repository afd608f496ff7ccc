"""Engine rules R125-R130: timers, skip_timer (including early skips) and the Flow timeout.

engine-semantics.md §10. Times are virtual seconds since the simulation epoch.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from dexviz import (
    Channel,
    Context,
    EventKind,
    FlowErrorType,
    FlowStatus,
    FlowTimeoutPolicy,
    StartFlowOptions,
    Step,
    StepDecision,
    StepExecutionId,
    StepMovement,
    Timer,
    TimerId,
    Wait,
    dead_end,
    go_to_many,
    graceful_complete,
)
from tests.engine.flows_b import (
    BFlow,
    active,
    attempt_starts,
    event_is,
    history,
    now_s,
    of_kind,
    rel_s,
    run_until,
    settle_now,
    settled,
    started,
)

CH = Channel("ch", str)
HOUR = timedelta(hours=1)


def seconds(n: float) -> timedelta:
    return timedelta(seconds=n)


class LateTimer(Step[float]):
    """An async WaitFor that works ``delay`` seconds, then waits a 5 s timer."""

    def __init__(self) -> None:
        self.fired: list[bool] = []

    async def wait_for(self, context: Context, delay: float) -> Wait:  # type: ignore[override]
        await asyncio.sleep(delay)
        return Wait.until(Timer.by_duration(seconds(5)))

    def execute(self, context: Context, delay: float) -> StepDecision:
        self.fired.append(context.has_timer_fired())
        return dead_end()


def test_r125_the_deadline_is_fixed_at_the_wait_for_commit_rounded_up() -> None:
    step = LateTimer()
    engine = settled(BFlow("R125", step), 10.2)
    started_event = of_kind(history(engine), EventKind.TIMER_STARTED, "LateTimer-1")[0]
    assert rel_s(started_event.time_ns) == pytest.approx(10.2, abs=1e-6)
    assert rel_s(started_event.payload["fire_at_ns"]) == 16.0
    fired = of_kind(history(engine), EventKind.TIMER_FIRED, "LateTimer-1")[0]
    assert rel_s(fired.time_ns) == 16.0
    assert attempt_starts(engine, "LateTimer-1") == [16.0]
    assert step.fired == [True]


def test_r125_timer_durations_are_whole_non_negative_seconds() -> None:
    with pytest.raises(ValueError):
        Timer.by_duration(seconds(-1))
    with pytest.raises(ValueError):
        Timer.by_duration(seconds(1.5))


class ZeroTimer(Step[int]):
    """Waits Timer(0)."""

    def __init__(self) -> None:
        self.fired: list[bool] = []

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(Timer.by_duration(seconds(0)))

    def execute(self, context: Context, n: int) -> StepDecision:
        self.fired.append(context.has_timer_fired(0))
        return dead_end()


def test_r126_a_zero_timer_completes_on_the_next_evaluation() -> None:
    step = ZeroTimer()
    engine = settled(BFlow("R126", step), 0)
    assert step.fired == [True]
    assert attempt_starts(engine, "ZeroTimer-1") == [0.0]
    assert now_s(engine) == 0.0


class TimerOrMessage(Step[str]):
    """Waits any_of(Timer 1 h 'a', ch, Timer 2 h 'b'); records which timers fired."""

    def __init__(self) -> None:
        self.seen: list[tuple[bool, bool, bool, tuple[str, ...]]] = []

    def wait_for(self, context: Context, tag: str) -> Wait:
        return Wait.any_of(
            Timer.by_duration(HOUR, condition_id="a"),
            CH.for_one(),
            Timer.by_duration(2 * HOUR, condition_id="b"),
        )

    def execute(self, context: Context, tag: str) -> StepDecision:
        self.seen.append(
            (
                context.has_timer_fired(),
                context.has_timer_fired(0),
                context.has_timer_fired(1),
                tuple(CH.results(context)),
            )
        )
        return dead_end()


@pytest.mark.parametrize(
    ("timer_id", "expected"),
    [
        (TimerId.by_condition_id("a"), (True, True, False, ())),
        (TimerId.by_condition_id("b"), (True, False, True, ())),
        (TimerId.by_condition_index(1), (True, False, True, ())),
    ],
)
def test_r127_skip_timer_fires_one_timer_now(timer_id: TimerId, expected: tuple) -> None:
    step = TimerOrMessage()
    engine = started(BFlow("R127", step, schema=[CH]), "x")
    settle_now(engine)
    assert active(engine) == {"TimerOrMessage-1": "waiting"}
    engine.client().skip_timer("flow-1", StepExecutionId("TimerOrMessage"), timer_id)
    settle_now(engine)
    assert step.seen == [expected]
    assert attempt_starts(engine, "TimerOrMessage-1") == [0.0]
    skipped = of_kind(history(engine), EventKind.TIMER_SKIPPED, "TimerOrMessage-1")
    assert len(skipped) == 1
    assert not of_kind(history(engine), EventKind.TIMER_FIRED)


def test_r127_step_execution_id_number_defaults_to_one() -> None:
    assert str(StepExecutionId("TimerOrMessage")) == "TimerOrMessage-1"
    step = TimerOrMessage()
    engine = started(BFlow("R127b", step, schema=[CH]), "x")
    settle_now(engine)
    engine.client().skip_timer("flow-1", "TimerOrMessage-1", TimerId.by_condition_id("a"))
    settle_now(engine)
    assert step.seen == [(True, True, False, ())]


class TwoTimers(Step[int]):
    """Waits all_of(Timer 0 s, Timer 1 h)."""

    def __init__(self) -> None:
        self.fired: list[tuple[bool, bool]] = []

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.all_of(Timer.by_duration(seconds(0)), Timer.by_duration(HOUR))

    def execute(self, context: Context, n: int) -> StepDecision:
        self.fired.append((context.has_timer_fired(0), context.has_timer_fired(1)))
        return dead_end()


def test_r127_only_pending_timers_can_be_skipped() -> None:
    step = TwoTimers()
    engine = started(BFlow("R127c", step), 0)
    settle_now(engine)
    assert of_kind(history(engine), EventKind.TIMER_FIRED, "TwoTimers-1")
    before = len(history(engine))
    client = engine.client()
    client.skip_timer("flow-1", "TwoTimers-1", TimerId.by_condition_index(0))  # already fired
    assert len(history(engine)) == before
    assert active(engine) == {"TwoTimers-1": "waiting"}
    client.skip_timer("flow-1", "TwoTimers-1", TimerId.by_condition_index(1))
    settle_now(engine)
    assert step.fired == [(True, True)]
    assert now_s(engine) == 0.0


class SlowWaitFor(Step[int]):
    """An async WaitFor that works 5 s, then waits a 1 h timer 't'."""

    def __init__(self) -> None:
        self.fired: list[bool] = []

    async def wait_for(self, context: Context, n: int) -> Wait:  # type: ignore[override]
        await asyncio.sleep(5)
        return Wait.until(Timer.by_duration(HOUR, condition_id="t"))

    def execute(self, context: Context, n: int) -> StepDecision:
        self.fired.append(context.has_timer_fired())
        return dead_end()


def test_r128_a_skip_before_the_timer_exists_is_applied_when_it_is_created() -> None:
    step = SlowWaitFor()
    engine = started(BFlow("R128", step), 0)
    settle_now(engine)
    assert active(engine) == {"SlowWaitFor-1": "wait_for"}
    engine.client().skip_timer("flow-1", "SlowWaitFor-1", TimerId.by_condition_id("t"))
    engine.run_until_idle()
    assert step.fired == [True]
    assert attempt_starts(engine, "SlowWaitFor-1") == [5.0]
    assert now_s(engine) == 5.0
    assert len(of_kind(history(engine), EventKind.TIMER_SKIPPED, "SlowWaitFor-1")) == 1


def test_r128_a_skip_for_an_execution_not_yet_started_is_remembered() -> None:
    step = SlowWaitFor()
    engine = started(BFlow("R128b", step), 0)
    # SlowWaitFor-1 is only queued: its WaitFor has not even started.
    engine.client().skip_timer("flow-1", "SlowWaitFor-1", TimerId.by_condition_id("t"))
    engine.run_until_idle()
    assert step.fired == [True]
    assert attempt_starts(engine, "SlowWaitFor-1") == [5.0]


def test_r129_timers_die_when_the_wait_is_satisfied_by_another_condition() -> None:
    step = TimerOrMessage()
    engine = started(BFlow("R129", step, schema=[CH]), "x")
    settle_now(engine)
    engine.client().publish("flow-1", CH, "m")
    settle_now(engine)
    assert step.seen == [(False, False, False, ("m",))]
    before = len(history(engine))
    engine.client().skip_timer("flow-1", "TimerOrMessage-1", TimerId.by_condition_id("a"))
    engine.run_until_idle()
    assert len(history(engine)) == before
    assert now_s(engine) == 0.0  # the 1 h and 2 h timers were dropped, not left to fire


class Idle(Step[int]):
    """Waits for ``ch`` forever."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(CH.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


TIMEOUT = StartFlowOptions(timeout=HOUR, timeout_policy=FlowTimeoutPolicy.FAIL)


def test_r130_skipping_the_timeout_timer_fires_the_flow_timeout_now() -> None:
    engine = started(BFlow("R130", Idle(), schema=[CH]), 0, options=TIMEOUT)
    settle_now(engine)
    assert engine.result("flow-1").status is FlowStatus.RUNNING
    engine.client().skip_timer(
        "flow-1", StepExecutionId("sys:timeout_handler", 1), TimerId.by_condition_index(0)
    )
    result = engine.result("flow-1")
    assert result.status is FlowStatus.FAILED
    assert result.error_type is FlowErrorType.FLOW_TIMEOUT
    assert now_s(engine) == 0.0


def test_r130_the_timeout_timer_is_not_an_active_step() -> None:
    engine = settled(BFlow("R130b", Finisher(), [Idle()], [CH]), 0, options=TIMEOUT)
    # The graceful request completes at once: the pending Flow-timeout timer does not count.
    assert engine.result("flow-1").status is FlowStatus.COMPLETED
    closed = of_kind(history(engine), EventKind.FLOW_CLOSED)[0]
    assert rel_s(closed.time_ns) == 0.0
    assert now_s(engine) == 0.0  # completion canceled the timeout timer (R139)


class Finisher(Step[int]):
    """Requests graceful completion at once."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete("done")


class TimerRace(Step[int]):
    """Starts two TimerOrMessage executions; used to skip the second one's timer only."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(
            StepMovement.of(TimerOrMessage, "one"), StepMovement.of(TimerOrMessage, "two")
        )


def test_r127_a_skip_targets_one_execution_only() -> None:
    step = TimerOrMessage()
    engine = started(BFlow("R127d", TimerRace(), [step], [CH]), 0)
    settle_now(engine)
    engine.client().skip_timer("flow-1", StepExecutionId("TimerOrMessage", 2), TimerId("a"))
    settle_now(engine)
    assert active(engine) == {"TimerOrMessage-1": "waiting"}
    run_until(engine, event_is(EventKind.TIMER_FIRED, "TimerOrMessage-1"))
    assert now_s(engine) == 3600.0
