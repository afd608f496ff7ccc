"""Engine rules R14-R31: the Step lifecycle (engine-semantics.md §2)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta

import pytest

from dexviz import (
    AsyncContext,
    Attribute,
    Channel,
    Context,
    Event,
    EventKind,
    Flow,
    FlowErrorType,
    FlowStatus,
    FlowTimeoutPolicy,
    PersistenceSchema,
    RPCResult,
    StartFlowOptions,
    Step,
    StepDecision,
    StepList,
    StepMovement,
    StepOptions,
    Timer,
    Wait,
    WorkerInvocationError,
    dead_end,
    go_to,
    go_to_many,
    graceful_complete,
    rpc,
    simulate,
)
from tests.engine.flows_a import (
    NO_RETRY,
    ONE_ATTEMPT,
    PROCEED_ONCE,
    AdHocFlow,
    active,
    execution_ids,
    failed_attempts,
    of_kind,
    queued,
    retries,
    run_now,
    started,
)

TIMEOUT_STEP = "sys:timeout_handler"

STATUS = Attribute("status", str)
X = Attribute("x", int)
INBOX = Channel("inbox", str)
OUT = Channel("out", str)


@dataclass(frozen=True)
class Order:
    """A structured Step input."""

    order_id: str
    items: tuple[str, ...] = ()


class Loop(Step[int]):
    """Goes to itself until its input reaches 3."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to(Loop, n + 1) if n < 3 else dead_end()


class Leaf(Step[int]):
    """Records its execution id, input and lineage source."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int, str]] = []

    def execute(self, context: Context, n: int) -> StepDecision:
        self.seen.append((context.step_execution_id, n, context.from_step_execution_id))
        return dead_end()


class Other(Leaf):
    """A second leaf type."""


class FanOut(Step[int]):
    """go_to_many(Leaf 1, Leaf 2, Other 3)."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(
            StepMovement.of(Leaf, 1), StepMovement.of(Leaf, 2), StepMovement.of(Other, 3)
        )


# -- R14, R19 ------------------------------------------------------------------------------


class NoWait(Step[int]):
    """A Step without a WaitFor."""

    def __init__(self) -> None:
        self.calls = 0

    def execute(self, context: Context, n: int) -> StepDecision:
        self.calls += 1
        return dead_end()


class Named(NoWait):
    def get_step_type(self) -> str:
        return "Init"


def test_r14_step_type_defaults_to_class_name_and_can_be_overridden() -> None:
    run = simulate(AdHocFlow("Shape", NoWait(), [Named()]), 1)
    steps = [s["step_type"] for s in run.history.start.payload["flow"]["steps"]]  # type: ignore[union-attr]
    assert steps == ["NoWait", "Init"]


def test_r14_r19_step_without_wait_for_goes_straight_to_execute() -> None:
    step = NoWait()
    run = simulate(AdHocFlow("Shape", step), 1)
    assert step.calls == 1
    mine = run.history.for_execution("NoWait-1")
    assert of_kind(mine, EventKind.STEP_WAIT_FOR_COMPLETED) == []
    assert [e.method for e in of_kind(mine, EventKind.ATTEMPT_STARTED)] == ["execute"]
    assert len(of_kind(mine, EventKind.STEP_EXECUTE_COMPLETED)) == 1
    assert of_kind(mine, EventKind.STEP_EXECUTION_CREATED)[0].payload["has_wait_for"] is False


# -- R15, R16, R17 -------------------------------------------------------------------------


def test_r15_execution_ids_count_per_step_type() -> None:
    run = simulate(AdHocFlow("Ids", Loop()), 1)
    assert execution_ids(run.history) == ["Loop-1", "Loop-2", "Loop-3"]


def test_r16_numbering_follows_movement_order() -> None:
    leaf, other = Leaf(), Other()
    for seed in range(5):
        leaf.seen.clear()
        other.seen.clear()
        simulate(AdHocFlow("Fan", FanOut(), [leaf, other]), 0, seed=seed)
        assert sorted(leaf.seen) == [("Leaf-1", 1, "FanOut-1"), ("Leaf-2", 2, "FanOut-1")]
        assert other.seen == [("Other-1", 3, "FanOut-1")]


class QueueFlow(Flow[None]):
    """RPCs that queue a Leaf and cancel every Leaf."""

    def __init__(self) -> None:
        self.leaf = Leaf()

    def get_steps(self) -> StepList[None]:
        return StepList.without_start_step(self.leaf)

    @rpc
    def add(self, context: Context) -> RPCResult[None]:
        return RPCResult(None, next_steps=(StepMovement.of(Leaf, 1),))

    @rpc
    def cancel(self, context: Context) -> RPCResult[None]:
        return RPCResult(None).with_canceling_steps(Leaf)


def test_r17_canceled_queued_execution_uses_up_its_number() -> None:
    flow = QueueFlow()
    engine = started(flow)
    client = engine.client()
    client.invoke_rpc(flow.add, "flow-1")  # queued, not started: nothing has run yet
    client.invoke_rpc(flow.cancel, "flow-1")
    client.invoke_rpc(flow.add, "flow-1")
    engine.run_until_idle()
    canceled = of_kind(engine.history("flow-1"), EventKind.EXECUTION_CANCELED)
    assert [(e.execution_id, e.payload["phase"]) for e in canceled] == [("Leaf-1", "queued")]
    assert flow.leaf.seen == [("Leaf-2", 1, "__rpc/add")]


# -- R18 -----------------------------------------------------------------------------------


class Durable(Step[list[int]]):
    """Its WaitFor mutates its input and fails twice; its Execute fails for good."""

    def __init__(self) -> None:
        self.wait_inputs: list[list[int]] = []
        self.execute_inputs: list[list[int]] = []

    def get_step_options(self) -> StepOptions:
        return StepOptions(
            wait_for_retry=retries(3), execute_retry=ONE_ATTEMPT
        ).on_execute_failure_proceed_to(Rescue)

    def wait_for(self, context: Context, items: list[int]) -> Wait:
        self.wait_inputs.append(list(items))
        items.append(99)  # a handler mutating its input must not change the stored input
        if context.attempt < 3:
            raise RuntimeError("not yet")
        return Wait.skip_immediately()

    def execute(self, context: Context, items: list[int]) -> StepDecision:
        self.execute_inputs.append(list(items))
        raise RuntimeError("give up")


class Rescue(Step[list[int]]):
    def __init__(self) -> None:
        self.inputs: list[list[int]] = []

    def execute(self, context: Context, items: list[int]) -> StepDecision:
        self.inputs.append(list(items))
        return dead_end()


def test_r18_input_is_durable_across_methods_retries_and_recovery() -> None:
    durable, rescue = Durable(), Rescue()
    simulate(AdHocFlow("Durable", durable, [rescue]), [1, 2])
    assert durable.wait_inputs == [[1, 2], [1, 2], [1, 2]]
    assert durable.execute_inputs == [[1, 2]]
    assert rescue.inputs == [[1, 2]]


# -- R20 -----------------------------------------------------------------------------------


class Skipper(Step[int]):
    """WaitFor writes and publishes, then skips; Execute reads what WaitFor committed."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []

    def wait_for(self, context: Context, n: int) -> Wait:
        STATUS.set(context, "processing")
        OUT.publish(context, "from-wait-for")
        return Wait.skip_immediately()

    def execute(self, context: Context, n: int) -> StepDecision:
        self.seen.append((STATUS.get(context), OUT.size(context)))
        return dead_end()


def test_r20_skip_immediately_runs_execute_after_wait_for_commit() -> None:
    step = Skipper()
    run = simulate(AdHocFlow("Skip", step, schema=[STATUS, OUT]), 1)
    assert step.seen == [("processing", 1)]
    completed = of_kind(run.history, EventKind.STEP_WAIT_FOR_COMPLETED)[0]
    assert completed.payload["wait"]["kind"] == "SKIP_IMMEDIATELY"
    assert queued(run.engine, "out") == ("from-wait-for",)


# -- R21, R22 ------------------------------------------------------------------------------


class WaitForThrows(Step[int]):
    """WaitFor stages a write and a publication, then raises (PROCEED)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str | None, int]] = []

    def get_step_options(self) -> StepOptions:
        return PROCEED_ONCE

    def wait_for(self, context: Context, n: int) -> Wait:
        STATUS.set(context, "staged")
        OUT.publish(context, "staged")
        raise RuntimeError("wait_for broke")

    def execute(self, context: Context, n: int) -> StepDecision:
        self.seen.append((STATUS.get(context), OUT.size(context)))
        return dead_end()


def test_r21_failed_wait_for_commits_nothing() -> None:
    step = WaitForThrows()
    run = simulate(AdHocFlow("Atomic", step, schema=[STATUS, OUT]), 1)
    assert step.seen == [(None, 0)]
    assert run.engine.client().get_attribute("flow-1", STATUS) is None
    assert queued(run.engine, "out") == ()
    assert of_kind(run.history, EventKind.MESSAGE_PUBLISHED) == []


class PublishUntilThird(Step[int]):
    """Publishes "m" and raises while attempt < 3."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_retry=retries(5))

    def execute(self, context: Context, n: int) -> StepDecision:
        OUT.publish(context, "m")
        if context.attempt < 3:
            raise RuntimeError("flaky")
        return dead_end()


def test_r22_failed_attempts_leave_no_trace() -> None:
    run = simulate(AdHocFlow("Retry", PublishUntilThird(), schema=[OUT]), 1)
    assert queued(run.engine, "out") == ("m",)
    assert len(failed_attempts(run.history)) == 2
    assert len(of_kind(run.history, EventKind.MESSAGE_PUBLISHED)) == 1


class SnapshotReader(Step[int]):
    """Reads x on every attempt; fails the first attempt and retries after 10 s."""

    def __init__(self) -> None:
        self.reads: list[int] = []

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_retry=retries(2, interval_s=10))

    def execute(self, context: Context, n: int) -> StepDecision:
        self.reads.append(X.get(context))
        if context.attempt == 1:
            raise RuntimeError("first attempt fails")
        return dead_end()


class LateWriter(Step[int]):
    """After 5 s, sets x to 5."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(seconds=5)))

    def execute(self, context: Context, n: int) -> StepDecision:
        X.set(context, 5)
        return dead_end()


class StartBoth(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(StepMovement.of(SnapshotReader, n), StepMovement.of(LateWriter, n))


def test_r22_retries_start_from_first_attempt_snapshot() -> None:
    reader = SnapshotReader()
    run = simulate(AdHocFlow("Snap", StartBoth(), [reader, LateWriter()], [X]), 1)
    assert run.engine.client().get_attribute("flow-1", X) == 5  # committed between attempts
    assert reader.reads == [0, 0]


# -- R23 -----------------------------------------------------------------------------------


class MarkAndWait(Step[int]):
    """WaitFor sets x = 1 and waits on the inbox; Execute fails for good."""

    def get_step_options(self) -> StepOptions:
        return NO_RETRY

    def wait_for(self, context: Context, n: int) -> Wait:
        X.set(context, 1)
        return Wait.until(INBOX.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        X.set(context, 2)
        raise RuntimeError("execute fails")


class Observer(Step[int]):
    """After 1 s, records x and cancels MarkAndWait."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(seconds=1)))

    def execute(self, context: Context, n: int) -> StepDecision:
        self.seen.append(X.get(context))
        return dead_end().with_canceling_steps(MarkAndWait)


class StartMarkAndObserver(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(StepMovement.of(MarkAndWait, n), StepMovement.of(Observer, n))


def test_r23_wait_for_effects_are_visible_and_survive_cancellation() -> None:
    observer = Observer()
    flow = AdHocFlow("Sep", StartMarkAndObserver(), [MarkAndWait(), observer], [X, INBOX])
    run = simulate(flow, 1)
    assert observer.seen == [1]
    assert [e.execution_id for e in of_kind(run.history, EventKind.EXECUTION_CANCELED)] == [
        "MarkAndWait-1"
    ]
    assert run.engine.client().get_attribute("flow-1", X) == 1


def test_r23_wait_for_effects_survive_failed_execute() -> None:
    engine = started(AdHocFlow("Sep", MarkAndWait(), schema=[X, INBOX]), 1)
    engine.run_until_idle()
    engine.client().publish("flow-1", INBOX, "go")
    engine.run_until_idle()
    assert engine.result("flow-1").error_type is FlowErrorType.WORKER_API_FAILED
    assert engine.client().get_attribute("flow-1", X) == 1


# -- R24 -----------------------------------------------------------------------------------


class ReadOwnWrites(Step[int]):
    def __init__(self) -> None:
        self.seen: list[object] = []

    def execute(self, context: Context, n: int) -> StepDecision:
        X.set(context, 2)
        self.seen.append(X.get(context))
        X.delete(context)
        self.seen.append(X.get(context))
        STATUS.set(context, "mine")
        self.seen.append(STATUS.get(context))
        return dead_end()


def test_r24_handler_reads_its_own_staged_writes() -> None:
    step = ReadOwnWrites()
    options_flow = AdHocFlow("Own", step, schema=[X, STATUS])
    run = simulate(options_flow, 1)
    assert step.seen == [2, 0, "mine"]
    assert run.engine.client().get_attribute("flow-1", X) is None


class SlowReader(Step[int]):
    """Reads x, sleeps 5 virtual seconds, and reads x again."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    async def execute(self, context: AsyncContext, n: int) -> StepDecision:  # type: ignore[override]
        self.seen.append(X.get(context))
        await asyncio.sleep(5)
        self.seen.append(X.get(context))
        return dead_end()


class QuickWriter(Step[int]):
    """After 1 s, sets x to 9."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(seconds=1)))

    def execute(self, context: Context, n: int) -> StepDecision:
        X.set(context, 9)
        return dead_end()


class StartReaderWriter(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(StepMovement.of(SlowReader, n), StepMovement.of(QuickWriter, n))


def test_r24_concurrent_commits_are_invisible_until_next_invocation() -> None:
    reader = SlowReader()
    flow = AdHocFlow("Snap", StartReaderWriter(), [reader, QuickWriter()], [X])
    run = simulate(flow, 1)
    assert run.engine.client().get_attribute("flow-1", X) == 9
    assert reader.seen == [0, 0]


# -- R25 -----------------------------------------------------------------------------------


class Attempts(Step[int]):
    """WaitFor fails once; Execute fails until attempt 3 (max 5)."""

    def __init__(self) -> None:
        self.wait_for_attempts: list[int] = []
        self.execute_attempts: list[int] = []

    def get_step_options(self) -> StepOptions:
        return StepOptions(wait_for_retry=retries(5), execute_retry=retries(5))

    def wait_for(self, context: Context, n: int) -> Wait:
        self.wait_for_attempts.append(context.attempt)
        if context.attempt < 2:
            raise RuntimeError("wait_for once more")
        return Wait.skip_immediately()

    def execute(self, context: Context, n: int) -> StepDecision:
        self.execute_attempts.append(context.attempt)
        if context.attempt < 3:
            raise RuntimeError("execute again")
        return dead_end()


def test_r25_attempts_count_per_method_from_one() -> None:
    step = Attempts()
    run = simulate(AdHocFlow("Attempts", step), 1)
    assert step.wait_for_attempts == [1, 2]
    assert step.execute_attempts == [1, 2, 3]
    done = of_kind(run.history, EventKind.STEP_EXECUTE_COMPLETED)[0]
    assert (done.attempt, done.payload["attempts"]) == (3, 3)


# -- R26, R27 ------------------------------------------------------------------------------


class ContextProbe(Step[int]):
    """Records every Context field in its Execute, after a 1 s timer."""

    def __init__(self) -> None:
        self.fields: dict[str, object] = {}

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(seconds=1)))

    def execute(self, context: Context, n: int) -> StepDecision:
        self.fields = {
            "flow_id": context.flow_id,
            "run_id": context.run_id,
            "step_execution_id": context.step_execution_id,
            "from_step_execution_id": context.from_step_execution_id,
            "attempt": context.attempt,
            "recovery_error": context.recovery_error,
            "wait_for_method_failed": context.wait_for_method_failed(),
            "has_timer_fired": context.has_timer_fired(),
            "has_timer_fired_0": context.has_timer_fired(0),
            "is_cancellation_requested": context.is_cancellation_requested(),
        }
        return dead_end()


def test_r26_context_exposes_ids_attempt_and_flags() -> None:
    probe = ContextProbe()
    run = simulate(AdHocFlow("Ctx", probe), 1, flow_id="ctx-flow")
    assert probe.fields == {
        "flow_id": "ctx-flow",
        "run_id": run.engine.client().describe_flow("ctx-flow").run_id,
        "step_execution_id": "ContextProbe-1",
        "from_step_execution_id": "__start__",
        "attempt": 1,
        "recovery_error": None,
        "wait_for_method_failed": False,
        "has_timer_fired": True,
        "has_timer_fired_0": True,
        "is_cancellation_requested": False,
    }


class Failing(Step[int]):
    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_retry=ONE_ATTEMPT).on_execute_failure_proceed_to(Leaf)

    def execute(self, context: Context, n: int) -> StepDecision:
        raise RuntimeError("route me")


class LineageStart(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(StepMovement.of(Leaf, 10), StepMovement.of(Failing, 20))


class LineageFlow(Flow[int]):
    def __init__(self) -> None:
        self.leaf = Leaf()

    def get_steps(self) -> StepList[int]:
        return StepList.start_step(LineageStart()).other_steps(self.leaf, Failing())

    @rpc
    def approve(self, context: Context) -> RPCResult[None]:
        return RPCResult(None, next_steps=(StepMovement.of(Leaf, 30),))


def test_r27_lineage_sources() -> None:
    flow = LineageFlow()
    engine = started(flow, 0)
    engine.run_until_idle()
    engine.client().invoke_rpc(flow.approve, "flow-1")
    engine.run_until_idle()
    by_input = {n: source for _, n, source in flow.leaf.seen}
    assert by_input == {10: "LineageStart-1", 20: "Failing-1", 30: "__rpc/approve"}
    created = of_kind(engine.history("flow-1"), EventKind.STEP_EXECUTION_CREATED)
    assert created[0].payload["from_execution_id"] == "__start__"


# -- R28 -----------------------------------------------------------------------------------


class Noter(Step[int]):
    """WaitFor of input 1 sets the local twice; Execute reads it and tries to set one."""

    def __init__(self) -> None:
        self.notes: dict[str, object] = {}
        self.execute_set_error: list[str] = []

    def wait_for(self, context: Context, n: int) -> Wait:
        if n == 1:
            context.set_step_execution_local("note", "first")
            context.set_step_execution_local("note", "x")
        return Wait.skip_immediately()

    def execute(self, context: Context, n: int) -> StepDecision:
        self.notes[context.step_execution_id] = context.get_step_execution_local("note", str)
        try:
            context.set_step_execution_local("note", "from execute")
        except Exception as error:  # noqa: BLE001 - recorded for the assertion
            self.execute_set_error.append(type(error).__name__)
        return dead_end()


class TwoNoters(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(StepMovement.of(Noter, 1), StepMovement.of(Noter, 2))


def test_r28_locals_pass_from_wait_for_to_own_execute_only() -> None:
    noter = Noter()
    run = simulate(AdHocFlow("Locals", TwoNoters(), [noter]), 0)
    assert noter.notes == {"Noter-1": "x", "Noter-2": None}
    assert noter.execute_set_error == ["RuntimeError", "RuntimeError"]
    wait_for = of_kind(run.history, EventKind.STEP_WAIT_FOR_COMPLETED, "Noter-1")[0]
    assert wait_for.payload["locals"] == {"note": "x"}


class LocalFlow(Flow[None]):
    @rpc
    def poke(self, context: Context) -> None:
        context.set_step_execution_local("k", "v")


def test_r28_rpc_cannot_set_locals() -> None:
    flow = LocalFlow()
    engine = started(flow)
    with pytest.raises(WorkerInvocationError, match="locals"):
        engine.client().invoke_rpc(flow.poke, "flow-1")


# -- R29 -----------------------------------------------------------------------------------


class Recorder(Step[int]):
    """Records event "e" once, or twice on its first attempt."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_retry=retries(2))

    def execute(self, context: Context, n: int) -> StepDecision:
        context.record_event("e", {"attempt": context.attempt})
        if context.attempt == 1:
            context.record_event("e", "again")
        return dead_end()


def test_r29_recording_an_event_name_twice_fails_the_attempt() -> None:
    run = simulate(AdHocFlow("Events", Recorder()), 1)
    failures = failed_attempts(run.history)
    assert len(failures) == 1
    assert failures[0]["error_type"] == "builtins.ValueError"
    assert "'e'" in failures[0]["error_message"]
    done = of_kind(run.history, EventKind.STEP_EXECUTE_COMPLETED)[0]
    assert done.payload["events"] == {"e": {"attempt": 2}}
    assert run.engine.flow_state("flow-1").attributes == {}


# -- R30 -----------------------------------------------------------------------------------


class ReturnsNothing(Step[int]):
    """Returns None on its first attempt, a decision on the second."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_retry=retries(2))

    def execute(self, context: Context, n: int) -> StepDecision:
        if context.attempt == 1:
            return None  # type: ignore[return-value]
        return graceful_complete("ok")


def test_r30_execute_returning_none_fails_the_attempt_and_is_retried() -> None:
    run = simulate(AdHocFlow("Decide", ReturnsNothing()), 1)
    failures = failed_attempts(run.history)
    assert [(f["reason"], f["final"]) for f in failures] == [("invalid_result", False)]
    assert run.result.status is FlowStatus.COMPLETED
    assert run.result.outputs == ("ok",)


# -- R31 -----------------------------------------------------------------------------------


class Waiter(Step[int]):
    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(INBOX.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


class Completer(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete(n)


class StartWaiterCompleter(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(StepMovement.of(Waiter, n), StepMovement.of(Completer, n))


def test_r31_waiting_step_is_active_and_delays_graceful_completion() -> None:
    flow = AdHocFlow("Active", StartWaiterCompleter(), [Waiter(), Completer()], [INBOX])
    engine = started(flow, 7)
    engine.run_until_idle()
    assert engine.result("flow-1").status is FlowStatus.RUNNING
    assert active(engine) == {"Waiter-1": "waiting"}
    engine.client().publish("flow-1", INBOX, "go")
    engine.run_until_idle()
    assert engine.result("flow-1").status is FlowStatus.COMPLETED
    assert engine.result("flow-1").outputs == (7,)


class SlowWaitFor(Step[int]):
    """Its WaitFor itself takes 30 virtual seconds."""

    async def wait_for(self, context: AsyncContext, n: int) -> Wait:  # type: ignore[override]
        await asyncio.sleep(30)
        return Wait.skip_immediately()

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


class StartSlowAndCompleter(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(StepMovement.of(SlowWaitFor, n), StepMovement.of(Completer, n))


def test_r31_step_inside_wait_for_is_active() -> None:
    flow = AdHocFlow("Active", StartSlowAndCompleter(), [SlowWaitFor(), Completer()])
    engine = started(flow, 1)
    seen: set[str] = set()

    def both_happened(event: Event) -> bool:
        seen.add(f"{event.kind}:{event.method}")
        return {"CompletionRequested:execute", "AttemptStarted:wait_for"} <= seen

    engine.run(until=both_happened)
    assert active(engine) == {"SlowWaitFor-1": "wait_for"}
    assert engine.result("flow-1").status is FlowStatus.RUNNING
    engine.run_until_idle()
    assert engine.result("flow-1").status is FlowStatus.COMPLETED
    closed = of_kind(engine.history("flow-1"), EventKind.FLOW_CLOSED)[0]
    assert closed.time_ns - engine.history("flow-1").start.time_ns == 30 * 10**9  # type: ignore[union-attr]


class ParkThenComplete(Step[int]):
    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(INBOX.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete(n)


class SlowTimeoutFlow(Flow[int]):
    """Its HANDLER-policy timeout handler runs for a minute."""

    def __init__(self) -> None:
        self.handler_sources: list[str] = []

    def get_steps(self) -> StepList[int]:
        return StepList.start_step(ParkThenComplete())

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(INBOX)

    async def handle_timeout(self, context: AsyncContext) -> StepDecision:  # type: ignore[override]
        self.handler_sources.append(context.from_step_execution_id)
        await asyncio.sleep(60)
        return dead_end()


def test_r27_r31_timeout_handler_is_from_start_and_never_counts_as_active() -> None:
    flow = SlowTimeoutFlow()
    options = StartFlowOptions(
        timeout=timedelta(seconds=1), timeout_policy=FlowTimeoutPolicy.HANDLER
    )
    engine = started(flow, 3, options=options)
    engine.run(until=lambda e: e.kind == EventKind.ATTEMPT_STARTED and e.step_type == TIMEOUT_STEP)
    run_now(engine)  # the handler's coroutine starts and sleeps
    assert flow.handler_sources == ["__start__"]
    assert active(engine) == {"ParkThenComplete-1": "waiting"}
    engine.client().publish("flow-1", INBOX, "go")
    engine.run_until_idle()
    assert engine.result("flow-1").status is FlowStatus.COMPLETED
    assert engine.result("flow-1").outputs == (3,)
    closed = of_kind(engine.history("flow-1"), EventKind.FLOW_CLOSED)[0]
    assert closed.time_ns - engine.history("flow-1").start.time_ns == 10**9  # type: ignore[union-attr]
