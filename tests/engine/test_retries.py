"""Engine rules R102-R113: retries and backoff at exact virtual times, failure routing.

engine-semantics.md §8 (and R44, the WaitFor PROCEED policy it relies on). Every time below is
virtual: seconds since the simulation epoch, read from the attempts' AttemptStarted events.
Heartbeat *timeouts* (R107) need the live engine and are not tested here; the heartbeat
checkpoint is.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

import dexviz
from dexviz import (
    Attribute,
    Channel,
    Context,
    Engine,
    EventKind,
    FlowErrorType,
    FlowStatus,
    RetryPolicy,
    Step,
    StepDecision,
    StepDurability,
    StepMovement,
    StepOptions,
    Timer,
    Wait,
    WaitForFailurePolicy,
    dead_end,
    go_to,
    go_to_many,
    graceful_complete,
    heartbeat,
    retry_after,
)
from dexviz.sdk.errors import ChannelMessagesNotLoadedError
from dexviz.sdk.options import resolve_durability
from tests.engine.flows_b import (
    ONE_ATTEMPT,
    BFlow,
    attempt_starts,
    created,
    history,
    of_kind,
    rel_s,
    retries,
    settled,
    started,
)

A = Attribute("a", int)
QUEUE = Channel("queue", str)


class Flaky(Step[int]):
    """Execute fails while ``attempt <= n`` (the input); records each attempt it saw."""

    def __init__(self, options: StepOptions) -> None:
        self.options = options
        self.attempts: list[int] = []

    def get_step_options(self) -> StepOptions:
        return self.options

    def execute(self, context: Context, n: int) -> StepDecision:
        self.attempts.append(context.attempt)
        if context.attempt <= n:
            raise RuntimeError(f"attempt {context.attempt} failed")
        return dead_end()


def flaky(policy: RetryPolicy) -> tuple[Flaky, BFlow]:
    step = Flaky(StepOptions(execute_retry=policy))
    return step, BFlow("Retry", step)


# -- R102-R105 ----------------------------------------------------------------------------------


def test_r102_maximum_attempts_counts_the_first_attempt() -> None:
    step, flow = flaky(retries(3))
    engine = settled(flow, 1000)
    assert step.attempts == [1, 2, 3]
    result = engine.result("flow-1")
    assert result.status is FlowStatus.FAILED
    assert result.error_type is FlowErrorType.WORKER_API_FAILED
    failed = of_kind(history(engine), EventKind.ATTEMPT_FAILED, "Flaky-1")
    assert [e.payload["final"] for e in failed] == [False, False, True]


def test_r102_zero_maximum_attempts_is_not_limited_by_count() -> None:
    step, flow = flaky(RetryPolicy(initial_interval=timedelta(seconds=1), backoff_coefficient=1.0))
    engine = settled(flow, 9)
    assert step.attempts == list(range(1, 11))
    assert engine.result("flow-1").status is FlowStatus.RUNNING  # it ended with dead_end


class FlakyBoth(Step[int]):
    """WaitFor fails on its first attempt, Execute on its first two; records (method, attempt)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []

    def get_step_options(self) -> StepOptions:
        return StepOptions(wait_for_retry=retries(2), execute_retry=retries(3))

    def wait_for(self, context: Context, n: int) -> Wait:
        self.seen.append(("wait_for", context.attempt))
        if context.attempt < 2:
            raise RuntimeError("not yet")
        return Wait.skip_immediately()

    def execute(self, context: Context, n: int) -> StepDecision:
        self.seen.append(("execute", context.attempt))
        if context.attempt < 3:
            raise RuntimeError("not yet")
        return dead_end()


def test_r102_wait_for_and_execute_have_their_own_policies_and_counts() -> None:
    step = FlakyBoth()
    engine = settled(BFlow("R102b", step), 0)
    assert step.seen == [
        ("wait_for", 1),
        ("wait_for", 2),
        ("execute", 1),
        ("execute", 2),
        ("execute", 3),
    ]
    assert engine.result("flow-1").status is FlowStatus.RUNNING


def test_r103_backoff_grows_by_the_coefficient_up_to_the_maximum_interval() -> None:
    policy = RetryPolicy(
        initial_interval=timedelta(seconds=1),
        backoff_coefficient=2.0,
        maximum_interval=timedelta(seconds=5),
        maximum_attempts=6,
    )
    _, flow = flaky(policy)
    engine = settled(flow, 1000)
    starts = attempt_starts(engine, "Flaky-1")
    assert starts == [0.0, 1.0, 3.0, 7.0, 12.0, 17.0]  # gaps 1, 2, 4, 5, 5
    delays = [
        e.payload["retry_delay_ns"]
        for e in of_kind(history(engine), EventKind.ATTEMPT_FAILED, "Flaky-1")
    ]
    assert delays == [1e9, 2e9, 4e9, 5e9, 5e9, None]


def test_r103_zero_fields_take_the_defaults() -> None:
    _, flow = flaky(RetryPolicy(maximum_attempts=9))
    engine = settled(flow, 1000)
    starts = attempt_starts(engine, "Flaky-1")
    gaps = [later - earlier for earlier, later in zip(starts, starts[1:], strict=False)]
    assert gaps == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 100.0]


def test_r104_total_duration_stops_retrying_when_the_next_delay_would_pass_it() -> None:
    policy = RetryPolicy(
        initial_interval=timedelta(seconds=1),
        backoff_coefficient=2.0,
        total_duration=timedelta(seconds=3),
    )
    step, flow = flaky(policy)
    engine = settled(flow, 1000)
    assert attempt_starts(engine, "Flaky-1") == [0.0, 1.0]
    closed = of_kind(history(engine), EventKind.FLOW_CLOSED)[0]
    assert rel_s(closed.time_ns) == 1.0
    assert engine.result("flow-1").error_type is FlowErrorType.WORKER_API_FAILED


class Slow(Step[int]):
    """An async Execute that works ``n`` seconds per attempt."""

    def __init__(self, options: StepOptions) -> None:
        self.options = options
        self.finished: list[int] = []

    def get_step_options(self) -> StepOptions:
        return self.options

    async def execute(self, context: Context, n: int) -> StepDecision:  # type: ignore[override]
        await asyncio.sleep(n)
        self.finished.append(context.attempt)
        return dead_end()


def test_r104_an_attempt_still_running_at_the_total_duration_deadline_fails() -> None:
    policy = RetryPolicy(total_duration=timedelta(seconds=3))
    step = Slow(StepOptions(execute_retry=policy))
    engine = settled(BFlow("R104b", step), 10)
    assert step.finished == []
    closed = of_kind(history(engine), EventKind.FLOW_CLOSED)[0]
    assert rel_s(closed.time_ns) == 3.0
    assert engine.result("flow-1").error_type is FlowErrorType.WORKER_API_FAILED


class RetryLater(Step[int]):
    """Attempt 1 asks to be retried after 7 s; attempt 2 fails plainly; attempt 3 succeeds."""

    def __init__(self, attempts: int) -> None:
        self.policy = RetryPolicy(
            initial_interval=timedelta(seconds=1),
            backoff_coefficient=2.0,
            maximum_attempts=attempts,
        )

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_retry=self.policy)

    def execute(self, context: Context, n: int) -> StepDecision:
        if context.attempt == 1:
            raise retry_after(7, ValueError("service not ready"))
        if context.attempt == 2:
            raise RuntimeError("still failing")
        return dead_end()


def test_r105_retry_after_replaces_the_delay_for_that_retry_only() -> None:
    engine = settled(BFlow("R105", RetryLater(5)), 0)
    # 7 s instead of the 1 s initial interval; then the policy's 2 s for the second retry.
    assert attempt_starts(engine, "RetryLater-1") == [0.0, 7.0, 9.0]
    first = of_kind(history(engine), EventKind.ATTEMPT_FAILED, "RetryLater-1")[0]
    assert first.payload["error_message"] == "service not ready"
    assert first.payload["error_type"].endswith("ValueError")


def test_r105_retry_after_still_obeys_the_attempt_limit() -> None:
    engine = settled(BFlow("R105b", RetryLater(1)), 0)
    assert attempt_starts(engine, "RetryLater-1") == [0.0]
    assert engine.result("flow-1").status is FlowStatus.FAILED


# -- R106-R108 ----------------------------------------------------------------------------------


def test_r106_an_attempt_over_its_method_timeout_fails_and_is_retried() -> None:
    options = StepOptions(execute_retry=retries(2), execute_method_timeout=timedelta(seconds=1))
    step = Slow(options)
    engine = settled(BFlow("R106", step), 3)
    assert step.finished == []
    assert attempt_starts(engine, "Slow-1") == [0.0, 2.0]
    failed = of_kind(history(engine), EventKind.ATTEMPT_FAILED, "Slow-1")
    assert [(e.payload["reason"], rel_s(e.time_ns)) for e in failed] == [
        ("timeout", 1.0),
        ("timeout", 3.0),
    ]
    assert engine.result("flow-1").error_type is FlowErrorType.WORKER_API_FAILED


class Checkpointing(Step[int]):
    """Attempt 1 heartbeats 3 and fails; attempt 2 reads the checkpoint, clears it, fails;
    attempt 3 reads again."""

    def __init__(self) -> None:
        self.read: list[tuple[bool, int | None]] = []

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_retry=retries(3))

    async def execute(self, context: Context, n: int) -> StepDecision:  # type: ignore[override]
        self.read.append(
            (context.has_last_heartbeat_value(), context.get_last_heartbeat_value(int))
        )
        if context.attempt == 1:
            await context.heartbeat(3)
            raise RuntimeError("stalled")
        if context.attempt == 2:
            await context.heartbeat()
            raise RuntimeError("stalled again")
        return dead_end()


def test_r107_a_heartbeat_checkpoint_reaches_the_next_attempt() -> None:
    step = Checkpointing()
    settled(BFlow("R107", step), 0)
    assert step.read == [(False, None), (True, 3), (False, None)]


class BrokenWaitFor(Step[int]):
    """WaitFor writes a and raises 'boom'; Execute records what it sees."""

    def __init__(self, options: StepOptions) -> None:
        self.options = options
        self.seen: list[tuple[bool, str, str, int]] = []

    def get_step_options(self) -> StepOptions:
        return self.options

    def wait_for(self, context: Context, n: int) -> Wait:
        A.set(context, 1)
        raise RuntimeError(f"boom {context.attempt}")

    def execute(self, context: Context, n: int) -> StepDecision:
        error = context.recovery_error
        assert error is not None
        self.seen.append(
            (context.wait_for_method_failed(), error.error_type, error.detail, A.get(context))
        )
        return dead_end()


def test_r108_default_wait_for_failure_fails_the_flow() -> None:
    step = BrokenWaitFor(StepOptions(wait_for_retry=retries(2)))
    engine = settled(BFlow("R108", step, schema=[A]), 0)
    result = engine.result("flow-1")
    assert result.status is FlowStatus.FAILED
    assert result.error_type is FlowErrorType.WORKER_API_FAILED
    assert step.seen == []
    failed = of_kind(history(engine), EventKind.STEP_WAIT_FOR_FAILED, "BrokenWaitFor-1")
    assert [(e.payload["policy"], e.payload["attempts"]) for e in failed] == [("FAIL_FLOW", 2)]


def test_r108_r44_proceed_runs_execute_with_the_last_error() -> None:
    options = StepOptions(wait_for_retry=retries(2), wait_for_failure=WaitForFailurePolicy.PROCEED)
    step = BrokenWaitFor(options)
    engine = settled(BFlow("R108b", step, schema=[A]), 0)
    assert step.seen == [(True, "builtins.RuntimeError", "boom 2", 0)]
    assert engine.client().get_attribute("flow-1", A) is None  # the WaitFor's write is discarded
    assert engine.result("flow-1").status is FlowStatus.RUNNING


# -- R109-R110: recovery routes -----------------------------------------------------------------


class Failing(Step[int]):
    """Execute always raises 'x <attempt>'; routes to Recover after ``retries(3)``."""

    def __init__(self, recovery_options: StepOptions | None = None) -> None:
        self.recovery_options = recovery_options

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_retry=retries(3)).on_execute_failure_proceed_to(
            Recover, self.recovery_options
        )

    def execute(self, context: Context, n: int) -> StepDecision:
        raise RuntimeError(f"x {context.attempt}")


class Recover(Step[int]):
    """Records input, lineage and the recovery error in both methods; its WaitFor may fail."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int, str, str | None]] = []
        self.attempts = 0

    def get_step_options(self) -> StepOptions:
        return StepOptions(
            wait_for_retry=ONE_ATTEMPT,
            wait_for_failure=WaitForFailurePolicy.PROCEED,
            execute_retry=retries(3),
        )

    def _note(self, context: Context, method: str, n: int) -> None:
        error = context.recovery_error
        detail = error.detail if error else None
        self.seen.append((method, n, context.from_step_execution_id, detail))

    def wait_for(self, context: Context, n: int) -> Wait:
        self._note(context, "wait_for", n)
        if n < 0:
            raise RuntimeError("recovery wait_for broke")
        return Wait.skip_immediately()

    def execute(self, context: Context, n: int) -> StepDecision:
        self._note(context, "execute", n)
        self.attempts += 1
        if n == -2:
            raise RuntimeError("recovery execute broke")
        return dead_end()


def test_r109_an_exhausted_execute_proceeds_to_its_recovery_step() -> None:
    recover = Recover()
    engine = settled(BFlow("R109", Failing(), [recover]), 5)
    assert recover.seen == [
        ("wait_for", 5, "Failing-1", "x 3"),
        ("execute", 5, "Failing-1", "x 3"),
    ]
    failed = of_kind(history(engine), EventKind.STEP_EXECUTE_FAILED, "Failing-1")
    assert failed[0].payload["recovery_execution_id"] == "Recover-1"
    assert failed[0].payload["attempts"] == 3
    assert engine.result("flow-1").status is FlowStatus.RUNNING
    active_ids = {a.execution_id for a in engine.flow_state("flow-1").active_executions}
    assert "Failing-1" not in active_ids


@pytest.mark.parametrize(("override", "execute_attempts"), [(True, 0), (False, 3)])
def test_r109_the_recovery_movement_takes_the_configured_options(
    override: bool, execute_attempts: int
) -> None:
    # With input -2 Recover's WaitFor and Execute both fail. Its own options PROCEED past the
    # WaitFor and try Execute 3 times; the override (default FAIL_FLOW) stops at the WaitFor.
    recover = Recover()
    options = StepOptions(execute_retry=ONE_ATTEMPT) if override else None
    engine = settled(BFlow("R109b", Failing(options), [recover]), -2)
    assert recover.attempts == execute_attempts
    assert engine.result("flow-1").error_type is FlowErrorType.WORKER_API_FAILED


def test_r110_a_failed_recovery_wait_for_replaces_the_error_execute_sees() -> None:
    recover = Recover()
    settled(BFlow("R110", Failing(), [recover]), -1)
    assert recover.seen == [
        ("wait_for", -1, "Failing-1", "x 3"),
        ("execute", -1, "Failing-1", "recovery wait_for broke"),
    ]


# -- R111-R113 ----------------------------------------------------------------------------------


def test_r111_durability_resolution() -> None:
    async_, sync = StepDurability.ASYNC, StepDurability.SYNC
    assert resolve_durability(None, async_) is async_
    assert resolve_durability(None, None) is sync
    assert resolve_durability(None, async_, has_recovery_route=True) is sync
    assert resolve_durability(async_, sync, has_recovery_route=True) is async_
    routed = StepOptions().on_execute_failure_proceed_to(Recover)
    assert routed.durability("execute", async_) is sync
    assert routed.durability("wait_for", async_) is async_


class Picky(Step[int]):
    """A WaitFor that always fails, not retried."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(wait_for_retry=ONE_ATTEMPT)

    def wait_for(self, context: Context, n: int) -> Wait:
        raise RuntimeError("no")

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


class MovePicky(Step[str]):
    """Moves to Picky, with a PROCEED override when its input says so."""

    def execute(self, context: Context, how: str) -> StepDecision:
        if how == "override":
            proceed = StepOptions(
                wait_for_retry=ONE_ATTEMPT, wait_for_failure=WaitForFailurePolicy.PROCEED
            )
            return go_to_many(StepMovement.of(Picky, 1, options=proceed))
        return go_to(Picky, 1)


@pytest.mark.parametrize(("how", "status"), [("override", "RUNNING"), ("plain", "FAILED")])
def test_r112_options_on_a_movement_replace_the_steps_own(how: str, status: str) -> None:
    engine = settled(BFlow("R112", MovePicky(), [Picky()]), how)
    assert engine.result("flow-1").status.name == status
    ran_execute = [e for e in history(engine) if e.method == "execute" and e.step_type == "Picky"]
    assert bool(ran_execute) == (how == "override")


class TakeOneOfThree(Step[int]):
    """Consumes one ``queue`` message and reads the pending ones in Execute."""

    def __init__(self, load: bool) -> None:
        self.load = load
        self.seen: list[tuple[tuple[str, ...], tuple[str, ...]]] = []

    def get_step_options(self) -> StepOptions:
        loads = (QUEUE,) if self.load else ()
        return StepOptions(execute_load_channels=loads, execute_retry=ONE_ATTEMPT)

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(QUEUE.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        pending = tuple(m.value for m in QUEUE.pending_messages(context))
        self.seen.append((tuple(QUEUE.results(context)), pending))
        return dead_end()


def _three_queued(step: TakeOneOfThree) -> Engine:
    engine = started(BFlow("R113", step, schema=[QUEUE]), 1)
    engine.client().publish("flow-1", QUEUE, "m1", "m2", "m3")
    engine.run_until_idle()
    return engine


def test_r113_execute_reads_the_pending_messages_left_after_its_wait() -> None:
    step = TakeOneOfThree(load=True)
    engine = _three_queued(step)
    assert step.seen == [(("m1",), ("m2", "m3"))]
    assert engine.result("flow-1").status is FlowStatus.RUNNING


def test_r113_reading_an_unselected_channel_fails_the_attempt() -> None:
    step = TakeOneOfThree(load=False)
    engine = _three_queued(step)
    failed = of_kind(history(engine), EventKind.ATTEMPT_FAILED, "TakeOneOfThree-1")
    assert failed[0].payload["error_type"].endswith(ChannelMessagesNotLoadedError.__name__)
    assert step.seen == []


class SnapshotReader(Step[int]):
    """Execute reads a and fails on attempt 1; the retry comes 5 s later."""

    def __init__(self) -> None:
        self.read: list[int] = []

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_retry=retries(2, interval_s=5))

    def execute(self, context: Context, n: int) -> StepDecision:
        self.read.append(A.get(context))
        if context.attempt == 1:
            raise RuntimeError("retry me")
        return dead_end()


class WriteLater(Step[int]):
    """Sets a = n after a 2 s timer."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(seconds=2)))

    def execute(self, context: Context, n: int) -> StepDecision:
        A.set(context, n)
        return dead_end()


class StartSnapshot(Step[int]):
    """Sets a = 1 and starts the reader and the later writer."""

    def execute(self, context: Context, n: int) -> StepDecision:
        A.set(context, 1)
        return go_to_many(StepMovement.of(SnapshotReader, 0), StepMovement.of(WriteLater, 2))


def test_r113_r22_every_retry_reads_the_first_attempts_snapshot() -> None:
    reader = SnapshotReader()
    engine = settled(BFlow("R113c", StartSnapshot(), [reader, WriteLater()], [A]), 0)
    assert reader.read == [1, 1]
    assert attempt_starts(engine, "SnapshotReader-1") == [0.0, 5.0]
    assert engine.client().get_attribute("flow-1", A) == 2
    assert "WriteLater-1" in created(engine)


class _Checkpointing(Step[int]):
    """A generator Execute that checkpoints with heartbeat() and fails once."""

    seen: list[object] = []

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_retry=RetryPolicy(maximum_attempts=2))

    def execute(self, context: Context, n: int):  # type: ignore[no-untyped-def]
        _Checkpointing.seen.append(context.get_last_heartbeat_value(int))
        yield heartbeat(n)
        yield heartbeat(n + 1)
        if context.attempt == 1:
            raise RuntimeError("lost the connection")
        return graceful_complete(n * 10)


def test_r107_a_generator_handler_checkpoints_with_heartbeat_for_the_next_attempt() -> None:
    _Checkpointing.seen.clear()
    run = dexviz.simulate(BFlow("Gen", _Checkpointing()), 4)
    assert run.result.single_output(int) == 40
    assert _Checkpointing.seen == [None, 5]


def test_a_generator_handler_that_yields_something_else_fails_the_attempt() -> None:
    class _Wrong(Step[int]):
        def get_step_options(self) -> StepOptions:
            return StepOptions(execute_retry=RetryPolicy(maximum_attempts=1))

        def execute(self, context: Context, n: int):  # type: ignore[no-untyped-def]
            yield "not a StepOutput"
            return dead_end()

    run = dexviz.simulate(BFlow("Gen2", _Wrong()), 1)
    assert run.result.error_message is not None
    assert "may only yield StepOutput values" in run.result.error_message


def test_step_output_cannot_be_built_directly() -> None:
    from dexviz import StepOutput

    with pytest.raises(TypeError, match="yield heartbeat"):
        StepOutput("heartbeat", 1)
