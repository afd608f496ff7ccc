"""Engine rules R92-R101 (cancellation), R57-R58 (returned messages), R147-R148 and R152.

engine-semantics.md §7 and §13: which executions a decision or an RPC cancels, what a canceled
execution loses and keeps, and how forced closes end every branch.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

from dexviz import (
    Attribute,
    Channel,
    Context,
    EventKind,
    FlowNotActiveError,
    FlowStatus,
    RPCResult,
    Step,
    StepDecision,
    StepExecutionId,
    StepMovement,
    StepOptions,
    StopFlowOptions,
    StopType,
    Timer,
    TimerId,
    Wait,
    current_time_millis,
    dead_end,
    force_complete,
    force_fail,
    go_to,
    go_to_many,
    graceful_complete,
    rpc,
)
from dexviz.history.kinds import SEMANTIC_KINDS
from tests.engine.flows_b import (
    EPOCH_NS,
    SECOND_NS,
    BFlow,
    active,
    attempt_started,
    created,
    event_is,
    history,
    now_s,
    of_kind,
    outputs,
    queued,
    rel_s,
    retries,
    run_until,
    settle_now,
    settled,
    started,
)

EPOCH_S = EPOCH_NS // SECOND_NS

GATE = Channel("gate", str)
GO = Channel("go", str)
TOK = Channel("tok", str)
OUT = Channel("out", str)
X = Attribute("x", int)
Y = Attribute("y", int)


class Waiter(Step[str]):
    """Waits for a ``gate`` message that never comes; ends its branch if it gets one."""

    def wait_for(self, context: Context, tag: str) -> Wait:
        return Wait.until(GATE.for_one())

    def execute(self, context: Context, tag: str) -> StepDecision:
        return dead_end()


class Decider(Step[str]):
    """Waits for ``go``, then returns the decision named by its input."""

    def wait_for(self, context: Context, order: str) -> Wait:
        return Wait.until(GO.for_one())

    def execute(self, context: Context, order: str) -> StepDecision:
        return DECIDER_ORDERS[order]()


DECIDER_ORDERS: dict[str, Any] = {
    "cancel_siblings": lambda: dead_end().with_canceling_sibling_steps(Waiter),
    "cancel_both": lambda: dead_end()
    .with_canceling_sibling_steps(Waiter)
    .with_canceling_steps(Waiter),
    "restart_waiters": lambda: go_to(Waiter, "new").with_canceling_steps(Waiter),
    "cancel_self_type": lambda: dead_end().with_canceling_steps(Decider),
    "cancel_nothing": lambda: graceful_complete("g").with_canceling_steps(Ghost),
    "graceful_cancel_siblings": lambda: graceful_complete("v").with_canceling_sibling_steps(
        Waiter
    ),
    "cancel_takers_then_take": lambda: go_to(Taker, "second").with_canceling_steps(Taker),
    "cancel_takers": lambda: dead_end().with_canceling_steps(Taker),
    "cancel_union": lambda: dead_end().with_canceling_steps(Waiter).with_canceling_steps(Taker),
}


class Ghost(Step[str]):
    """A Step that selectors name while no execution of it exists; ends its branch."""

    def execute(self, context: Context, tag: str) -> StepDecision:
        return dead_end()


class Parent(Step[str]):
    """'p1/<order>' starts a Decider and a Waiter as siblings; 'p2' starts one Waiter."""

    def execute(self, context: Context, which: str) -> StepDecision:
        if which.startswith("p1/"):
            return go_to_many(
                StepMovement.of(Decider, which[3:]), StepMovement.of(Waiter, "sibling")
            )
        return go_to(Waiter, "cousin")


def movement(item: str) -> StepMovement:
    """'Type:input' as a movement to the registered Step of that type."""
    step_type, _, value = item.partition(":")
    return StepMovement.of(step_type, value)


class Root(Step[list[str]]):
    """Fans out to the Steps named in its input ('Type:input')."""

    def execute(self, context: Context, items: list[str]) -> StepDecision:
        return go_to_many(*(movement(item) for item in items))


def waiter_by_tag(engine: Any, tag: str) -> str:
    return next(
        e.execution_id or ""
        for e in of_kind(history(engine), EventKind.STEP_EXECUTION_CREATED)
        if e.step_type == "Waiter" and e.payload["input"] == tag
    )


def family_flow() -> BFlow:
    return BFlow("Family", Root(), [Parent(), Decider(), Waiter(), Ghost()], [GATE, GO])


# -- R92-R94 ------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_r92_sibling_selector_cancels_only_same_parent_executions(seed: int) -> None:
    engine = settled(family_flow(), ["Parent:p1/cancel_siblings", "Parent:p2"], seed=seed)
    sibling, cousin = waiter_by_tag(engine, "sibling"), waiter_by_tag(engine, "cousin")
    engine.client().publish("flow-1", GO, "go")
    engine.run_until_idle()
    assert of_kind(history(engine), EventKind.EXECUTION_CANCELED, sibling)
    assert not of_kind(history(engine), EventKind.EXECUTION_CANCELED, cousin)
    assert active(engine) == {cousin: "waiting"}


def test_r92_the_flow_wide_selector_wins_over_the_sibling_selector() -> None:
    engine = settled(family_flow(), ["Parent:p1/cancel_both", "Parent:p2"])
    engine.client().publish("flow-1", GO, "go")
    engine.run_until_idle()
    canceled = {e.execution_id for e in of_kind(history(engine), EventKind.EXECUTION_CANCELED)}
    assert canceled == {waiter_by_tag(engine, "sibling"), waiter_by_tag(engine, "cousin")}
    assert active(engine) == {}


def test_r92_repeated_selectors_combine_as_a_union() -> None:
    engine = settled(taker_flow(Taker()), ["Waiter:w", "Taker:one", "Decider:cancel_union"])
    engine.client().publish("flow-1", GO, "go")
    engine.run_until_idle()
    canceled = {e.execution_id for e in of_kind(history(engine), EventKind.EXECUTION_CANCELED)}
    assert canceled == {"Waiter-1", "Taker-1"}
    assert active(engine) == {}


def test_r93_a_decision_cancels_old_executions_but_not_the_ones_it_starts() -> None:
    engine = settled(family_flow(), ["Waiter:old", "Decider:restart_waiters"])
    engine.client().publish("flow-1", GO, "go")
    engine.run_until_idle()
    events = history(engine)
    decided = of_kind(events, EventKind.STEP_EXECUTE_COMPLETED, "Decider-1")[0]
    assert decided.payload["decision"]["canceled"] == ["Waiter-1"]
    assert decided.payload["decision"]["next"][0]["execution_id"] == "Waiter-2"
    canceled = of_kind(events, EventKind.EXECUTION_CANCELED, "Waiter-1")[0]
    created_new = of_kind(events, EventKind.STEP_EXECUTION_CREATED, "Waiter-2")[0]
    assert decided.seq < canceled.seq < created_new.seq
    assert of_kind(events, EventKind.STEP_WAIT_FOR_COMPLETED, "Waiter-2")
    assert active(engine) == {"Waiter-2": "waiting"}


def test_r93_a_decider_cannot_cancel_itself() -> None:
    engine = settled(family_flow(), ["Decider:cancel_self_type", "Decider:cancel_self_type"])
    engine.client().publish("flow-1", GO, "go")
    engine.run_until_idle()
    completed = of_kind(history(engine), EventKind.STEP_EXECUTE_COMPLETED)
    deciders = [e for e in completed if e.step_type == "Decider"]
    assert len(deciders) == 1
    winner = deciders[0].execution_id
    loser = "Decider-2" if winner == "Decider-1" else "Decider-1"
    assert not of_kind(history(engine), EventKind.EXECUTION_CANCELED, winner)
    assert of_kind(history(engine), EventKind.EXECUTION_CANCELED, loser)


def test_r94_canceling_absent_types_is_a_harmless_no_op() -> None:
    engine = settled(family_flow(), ["Decider:cancel_nothing"])
    engine.client().publish("flow-1", GO, "go")
    engine.run_until_idle()
    assert engine.result("flow-1").status is FlowStatus.COMPLETED
    assert outputs(engine) == [("Decider", "Decider-1", "g")]
    assert not of_kind(history(engine), EventKind.EXECUTION_CANCELED)


def test_r94_selectors_do_not_reach_future_executions() -> None:
    engine = settled(family_flow(), ["Decider:restart_waiters"])
    engine.client().publish("flow-1", GO, "go")
    engine.run_until_idle()
    # No Waiter existed when the decision committed; the one it starts runs normally.
    assert not of_kind(history(engine), EventKind.EXECUTION_CANCELED)
    assert active(engine) == {"Waiter-1": "waiting"}


# -- R95-R97 ------------------------------------------------------------------------------------


class Worker(Step[str]):
    """WaitFor sets x=1; Execute stages y=1 and a publication, works 10 s, then fails.

    Its 1 s heartbeat timeout lets a cancel request reach the running handler on the worker's
    next heartbeat (R107 as corrected); ``Worker(heartbeat=None)`` never learns of it.
    """

    def __init__(self, heartbeat: timedelta | None = timedelta(seconds=1)) -> None:
        self.log: list[tuple[str, Any]] = []
        self.heartbeat = heartbeat

    def get_step_options(self) -> StepOptions:
        options = StepOptions(execute_retry=retries(3), heartbeat_timeout=self.heartbeat)
        return options.on_execute_failure_proceed_to(Recovery)

    def wait_for(self, context: Context, mode: str) -> Wait:
        X.set(context, 1)
        return Wait.skip_immediately()

    async def execute(self, context: Context, mode: str) -> StepDecision:  # type: ignore[override]
        Y.set(context, 1)
        OUT.publish(context, "m")
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            self.log.append(("signal", context.is_cancellation_requested()))
            if mode != "ignore":
                raise
            await asyncio.sleep(5)  # ignores the signal and carries on
        self.log.append(("returned", current_time_millis() // 1000 - EPOCH_S))
        if mode == "ignore":
            return go_to(Recovery, "after")
        raise RuntimeError("would have been retried and routed")


class Recovery(Step[str]):
    """The Worker's recovery Step."""

    def execute(self, context: Context, mode: str) -> StepDecision:
        return dead_end()


class KillWorker(Step[str]):
    """After a 1 s timer, cancels every Worker and moves on to Ghost (or force-closes)."""

    def wait_for(self, context: Context, mode: str) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(seconds=1)))

    def execute(self, context: Context, mode: str) -> StepDecision:
        if mode == "force_fail":
            return force_fail("x")
        if mode == "force_complete":
            return force_complete("done")
        return go_to(Ghost, "moved on").with_canceling_steps(Worker)


def worker_flow(worker: Worker) -> BFlow:
    return BFlow(
        "Workers", Root(), [worker, Recovery(), KillWorker(), Ghost()], [X, Y, OUT]
    )


def test_r95_a_canceled_execution_loses_its_current_method_only() -> None:
    worker = Worker()
    engine = settled(worker_flow(worker), ["Worker:obey", "KillWorker:cancel"])
    assert engine.client().get_attribute("flow-1", X) == 1  # the WaitFor's write stays
    assert engine.client().get_attribute("flow-1", Y) is None
    assert queued(engine, "out") == ()
    assert "Recovery-1" not in created(engine)
    assert len(of_kind(history(engine), EventKind.ATTEMPT_STARTED, "Worker-1")) == 2
    assert not of_kind(history(engine), EventKind.ATTEMPT_FAILED, "Worker-1")
    assert worker.log == [("signal", True)]


def test_r107_without_a_heartbeat_timeout_a_canceled_handler_runs_to_its_end() -> None:
    """Cancellation reaches a running handler only through heartbeats: without a heartbeat
    timeout it is never interrupted, runs its full 10 s, and what it did is discarded."""
    worker = Worker(heartbeat=None)
    engine = settled(worker_flow(worker), ["Worker:obey", "KillWorker:cancel"])
    assert worker.log == [("returned", 10)]
    assert engine.client().get_attribute("flow-1", Y) is None
    assert queued(engine, "out") == ()
    assert "Recovery-1" not in created(engine)
    assert not of_kind(history(engine), EventKind.ATTEMPT_FAILED, "Worker-1")


def test_r96_cancellation_is_cooperative_and_the_late_result_is_discarded() -> None:
    worker = Worker()
    engine = settled(worker_flow(worker), ["Worker:ignore", "KillWorker:cancel"])
    # The Flow moved on at t=1; the handler ignored the signal, ran until t=6 and returned.
    moved_on = of_kind(history(engine), EventKind.STEP_EXECUTION_CREATED, "Ghost-1")[0]
    assert rel_s(moved_on.time_ns) == 1.0
    assert worker.log == [("signal", True), ("returned", 6)]
    assert "Recovery-1" not in created(engine)
    assert engine.client().get_attribute("flow-1", Y) is None


class TimedWaiter(Step[str]):
    """Waits for a ``gate`` message or a 1 h timer 't'."""

    def wait_for(self, context: Context, tag: str) -> Wait:
        return Wait.any_of(
            Timer.by_duration(timedelta(hours=1), condition_id="t"), GATE.for_one()
        )

    def execute(self, context: Context, tag: str) -> StepDecision:
        return dead_end()


class CancelTimed(Step[str]):
    """Waits for ``go``, then cancels every TimedWaiter."""

    def wait_for(self, context: Context, tag: str) -> Wait:
        return Wait.until(GO.for_one())

    def execute(self, context: Context, tag: str) -> StepDecision:
        return dead_end().with_canceling_steps(TimedWaiter)


def test_r97_canceling_a_waiting_execution_drops_its_timers() -> None:
    flow = BFlow("R97", Root(), [TimedWaiter(), CancelTimed()], [GATE, GO])
    engine = started(flow, ["TimedWaiter:a", "CancelTimed:b"])
    settle_now(engine)
    assert active(engine) == {"TimedWaiter-1": "waiting", "CancelTimed-1": "waiting"}
    engine.client().publish("flow-1", GO, "go")
    settle_now(engine)
    assert of_kind(history(engine), EventKind.EXECUTION_CANCELED, "TimedWaiter-1")
    timer = TimerId.by_condition_id("t")
    engine.client().skip_timer("flow-1", StepExecutionId("TimedWaiter"), timer)
    engine.run_until_idle()
    assert not of_kind(history(engine), EventKind.TIMER_SKIPPED)
    assert not of_kind(history(engine), EventKind.TIMER_FIRED)
    assert not of_kind(history(engine), EventKind.ATTEMPT_STARTED, "TimedWaiter-1")[1:]
    assert now_s(engine) == 0.0  # the dropped 1 h timer no longer keeps the engine busy


# -- R98-R101 -----------------------------------------------------------------------------------


class RpcFlow(BFlow):
    """A Flow whose RPC restarts Waiter (and can publish while canceling)."""

    def __init__(self) -> None:
        super().__init__("RpcCancel", Waiter(), [], [GATE, OUT])

    @rpc
    def restart(self, context: Context, tag: str) -> RPCResult[str]:
        return RPCResult("ok", next_steps=(StepMovement.of(Waiter, tag),)).with_canceling_steps(
            Waiter
        )

    @rpc
    def publish_and_cancel(self, context: Context, value: str) -> RPCResult[str]:
        GATE.publish(context, value)
        return RPCResult("ok").with_canceling_steps(Waiter)


def test_r98_an_rpc_cancels_flow_wide_before_queuing_its_next_steps() -> None:
    flow = RpcFlow()
    engine = settled(flow, "first")
    assert engine.client().invoke_rpc(flow.restart, "flow-1", "second") == "ok"
    engine.run_until_idle()
    canceled = of_kind(history(engine), EventKind.EXECUTION_CANCELED, "Waiter-1")
    assert [e.payload["by"] for e in canceled] == ["rpc:restart"]
    assert active(engine) == {"Waiter-2": "waiting"}
    created_new = of_kind(history(engine), EventKind.STEP_EXECUTION_CREATED, "Waiter-2")[0]
    assert created_new.payload["from_execution_id"] == "__rpc/restart"
    assert not hasattr(RPCResult("x"), "with_canceling_sibling_steps")


def test_r58_r117_an_rpc_that_publishes_and_cancels_keeps_the_message_queued() -> None:
    flow = RpcFlow()
    engine = settled(flow, "first")
    engine.client().invoke_rpc(flow.publish_and_cancel, "flow-1", "m")
    engine.run_until_idle()
    assert of_kind(history(engine), EventKind.EXECUTION_CANCELED, "Waiter-1")
    assert queued(engine, "gate") == ("m",)
    assert not of_kind(history(engine), EventKind.WAIT_SATISFIED)


def test_r99_canceled_executions_vanish_and_leave_no_semantic_event() -> None:
    engine = settled(family_flow(), ["Waiter:old", "Decider:restart_waiters"])
    engine.client().publish("flow-1", GO, "go")
    engine.run_until_idle()
    assert "Waiter-1" not in active(engine)
    assert EventKind.EXECUTION_CANCELED not in SEMANTIC_KINDS
    about_victim = [e for e in history(engine) if e.execution_id == "Waiter-1"]
    canceled_at = of_kind(about_victim, EventKind.EXECUTION_CANCELED)[0].seq
    assert [e for e in about_victim if e.seq >= canceled_at and e.kind in SEMANTIC_KINDS] == []


def test_r100_canceled_executions_count_as_finished_for_completion() -> None:
    engine = settled(
        family_flow(), ["Waiter:a", "Waiter:b", "Decider:graceful_cancel_siblings"]
    )
    engine.client().publish("flow-1", GO, "go")
    engine.run_until_idle()
    assert engine.result("flow-1").status is FlowStatus.COMPLETED
    assert outputs(engine) == [("Decider", "Decider-1", "v")]
    assert len(of_kind(history(engine), EventKind.EXECUTION_CANCELED)) == 2


def test_r101_waits_have_no_cancellation_selectors() -> None:
    wait = Wait.until(GATE.for_one())
    for name in ("with_canceling_steps", "with_canceling_sibling_steps"):
        assert not hasattr(wait, name)
        assert hasattr(dead_end(), name)


# -- R57, R58: consumed messages of canceled executions ---------------------------------------


class Taker(Step[str]):
    """Takes ``tok`` messages (one, or two for 'pair'), then works 10 s in Execute."""

    def __init__(self) -> None:
        self.took: list[tuple[str, tuple[str, ...]]] = []

    def wait_for(self, context: Context, mode: str) -> Wait:
        return Wait.until(TOK.for_n(2) if mode == "pair" else TOK.for_one())

    async def execute(self, context: Context, mode: str) -> StepDecision:  # type: ignore[override]
        self.took.append((context.step_execution_id, tuple(TOK.results(context))))
        await asyncio.sleep(10)
        return dead_end()


def taker_flow(taker: Taker) -> BFlow:
    return BFlow("Takers", Root(), [taker, Decider(), Waiter(), Ghost()], [TOK, GO, GATE])


@pytest.mark.parametrize("mode", ["one", "pair"])
def test_r57_canceled_consumer_returns_messages_to_the_front(mode: str) -> None:
    taker = Taker()
    engine = settled(taker_flow(taker), [f"Taker:{mode}", "Decider:cancel_takers_then_take"])
    client = engine.client()
    taken = ("T1", "T2") if mode == "pair" else ("T1",)
    client.publish("flow-1", TOK, *taken)
    run_until(engine, attempt_started("Taker-1"))
    client.publish("flow-1", TOK, "U")
    assert queued(engine, "tok") == ("U",)
    client.publish("flow-1", GO, "go")
    run_until(engine, event_is(EventKind.EXECUTION_CANCELED, "Taker-1"))
    assert queued(engine, "tok") == (*taken, "U")
    returned = of_kind(history(engine), EventKind.MESSAGE_RETURNED, "Taker-1")
    consumed = of_kind(history(engine), EventKind.MESSAGE_CONSUMED, "Taker-1")
    assert [e.payload["message_id"] for e in returned] == [
        e.payload["message_id"] for e in consumed
    ]
    engine.run_until_idle()
    # The next waiter (Taker-2 takes one message) gets the first returned message.
    assert taker.took[-1] == ("Taker-2", taken[:1])
    assert queued(engine, "tok") == (*taken[1:], "U")


class PublishAndCancel(Step[str]):
    """Waits for ``go``, then publishes 'm' to ``gate`` in the Execute that cancels Waiters."""

    def wait_for(self, context: Context, order: str) -> Wait:
        return Wait.until(GO.for_one())

    def execute(self, context: Context, order: str) -> StepDecision:
        GATE.publish(context, "m")
        return dead_end().with_canceling_steps(Waiter)


def test_r57_messages_of_several_canceled_consumers_return_in_publish_order() -> None:
    taker = Taker()
    engine = settled(taker_flow(taker), ["Taker:one", "Taker:one", "Decider:cancel_takers"])
    client = engine.client()
    client.publish("flow-1", TOK, "T1", "T2")
    settle_now(engine)
    assert sorted(took for _, took in taker.took) == [("T1",), ("T2",)]
    client.publish("flow-1", TOK, "U")
    client.publish("flow-1", GO, "go")
    settle_now(engine)
    assert len(of_kind(history(engine), EventKind.EXECUTION_CANCELED)) == 2
    assert queued(engine, "tok") == ("T1", "T2", "U")


class SlowWaitFor(Step[str]):
    """An async WaitFor that sets x = 1 and works 10 s before returning its Wait."""

    async def wait_for(self, context: Context, tag: str) -> Wait:  # type: ignore[override]
        X.set(context, 1)
        OUT.publish(context, "from wait_for")
        await asyncio.sleep(10)
        return Wait.skip_immediately()

    def execute(self, context: Context, tag: str) -> StepDecision:
        return dead_end()


class CancelSlowWaitFor(Step[str]):
    """After a 1 s timer, cancels every SlowWaitFor."""

    def wait_for(self, context: Context, tag: str) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(seconds=1)))

    def execute(self, context: Context, tag: str) -> StepDecision:
        return dead_end().with_canceling_steps(SlowWaitFor)


def test_r95_a_wait_for_canceled_in_flight_commits_nothing() -> None:
    flow = BFlow("R95b", Root(), [SlowWaitFor(), CancelSlowWaitFor()], [X, OUT])
    engine = settled(flow, ["SlowWaitFor:a", "CancelSlowWaitFor:b"])
    canceled = of_kind(history(engine), EventKind.EXECUTION_CANCELED, "SlowWaitFor-1")
    assert [e.payload["phase"] for e in canceled] == ["wait_for"]
    assert engine.client().get_attribute("flow-1", X) is None
    assert queued(engine, "out") == ()
    assert not of_kind(history(engine), EventKind.STEP_WAIT_FOR_COMPLETED, "SlowWaitFor-1")


def test_r58_a_step_canceled_by_a_commit_never_gets_that_commits_messages() -> None:
    flow = BFlow("R58", Root(), [PublishAndCancel(), Waiter()], [GO, GATE])
    engine = settled(flow, ["Waiter:w", "PublishAndCancel:x"])
    engine.client().publish("flow-1", GO, "go")
    engine.run_until_idle()
    assert of_kind(history(engine), EventKind.EXECUTION_CANCELED, "Waiter-1")
    assert queued(engine, "gate") == ("m",)
    assert not of_kind(history(engine), EventKind.WAIT_SATISFIED, "Waiter-1")


# -- R147, R148, R152: forced closes -----------------------------------------------------------


@pytest.mark.parametrize("mode", ["force_fail", "force_complete"])
def test_r148_forced_closes_cancel_branches_without_their_effects(mode: str) -> None:
    worker = Worker()
    engine = settled(worker_flow(worker), ["Worker:obey", f"KillWorker:{mode}"])
    status = FlowStatus.FAILED if mode == "force_fail" else FlowStatus.COMPLETED
    assert engine.result("flow-1").status is status
    assert queued(engine, "out") == ()
    assert not of_kind(history(engine), EventKind.MESSAGE_PUBLISHED)
    assert "Recovery-1" not in created(engine)
    canceled = of_kind(history(engine), EventKind.EXECUTION_CANCELED, "Worker-1")
    assert [e.payload["by"] for e in canceled] == ["flow_close"]


@pytest.mark.parametrize("stop", [StopType.CANCEL, StopType.FAIL, StopType.TERMINATE])
def test_r148_stop_flow_returns_reserved_messages_and_ends_every_branch(stop: StopType) -> None:
    taker = Taker()
    engine = settled(taker_flow(taker), ["Taker:one", "Waiter:w"])
    engine.client().publish("flow-1", TOK, "T")
    run_until(engine, attempt_started("Taker-1"))
    engine.client().stop_flow("flow-1", StopFlowOptions(type=stop))
    engine.run_until_idle()
    assert engine.result("flow-1").status is not FlowStatus.RUNNING
    assert active(engine) == {}
    assert queued(engine, "tok") == ("T",)
    assert not of_kind(history(engine), EventKind.STEP_EXECUTE_COMPLETED, "Taker-1")


def test_r152_a_late_result_after_the_close_changes_nothing() -> None:
    worker = Worker()
    engine = settled(worker_flow(worker), ["Worker:ignore", "KillWorker:force_complete"])
    assert worker.log == [("signal", True), ("returned", 6)]
    closed = of_kind(history(engine), EventKind.FLOW_CLOSED)[0]
    assert rel_s(closed.time_ns) == 1.0
    assert [e for e in history(engine) if e.seq > closed.seq] == []
    assert engine.client().get_attribute("flow-1", Y) is None
    assert "Recovery-1" not in created(engine)


class SlowLockFlow(BFlow):
    """A Step force-completes after 1 s; an async RPC holding a lock on x works for 5 s."""

    def __init__(self) -> None:
        super().__init__("SlowLock", KillWorker(), [Ghost()], [X])

    @rpc(lock_attributes=[X.lock()])
    async def slow(self, context: Context, value: int) -> RPCResult[str]:
        await asyncio.sleep(5)
        X.set(context, value)
        return RPCResult("done")

    @rpc
    def late(self, context: Context, value: int) -> RPCResult[str]:
        return RPCResult("late", next_steps=(StepMovement.of(Ghost, "late"),))


def test_r147_an_admitted_locking_rpc_finishes_before_the_flow_reports_closed() -> None:
    flow = SlowLockFlow()
    engine = started(flow, "force_complete")
    statuses: list[FlowStatus] = []
    engine._rt.recorder.listeners.append(
        lambda e: statuses.append(engine.result("flow-1").status)
        if e.kind == EventKind.STEP_EXECUTE_COMPLETED
        else None
    )
    assert engine.client().invoke_rpc(flow.slow, "flow-1", 7) == "done"
    engine.run_until_idle()
    assert statuses == [FlowStatus.RUNNING]  # still RUNNING after the force_complete commit
    assert engine.result("flow-1").status is FlowStatus.COMPLETED
    assert engine.client().get_attribute("flow-1", X) == 7


def test_r147_no_new_step_starts_once_the_flow_closed() -> None:
    flow = SlowLockFlow()
    engine = settled(flow, "force_complete")
    assert engine.result("flow-1").status is FlowStatus.COMPLETED
    with pytest.raises(FlowNotActiveError):
        engine.client().invoke_rpc(flow.late, "flow-1", 1)
    engine.run_until_idle()
    assert "Ghost-1" not in created(engine)


class SpawnFlow(BFlow):
    """No start Step; an RPC starts Waiters and Deciders (R123)."""

    def __init__(self) -> None:
        steps = [Waiter(), Decider(), Root(), Parent(), Ghost()]
        super().__init__("Spawn", None, steps, [GATE, GO])

    @rpc
    def spawn(self, context: Context, item: str) -> RPCResult[str]:
        return RPCResult("ok", next_steps=(movement(item),))


def test_r123_steps_of_separate_rpc_invocations_are_not_siblings() -> None:
    flow = SpawnFlow()
    engine = settled(flow, None)
    client = engine.client()
    client.invoke_rpc(flow.spawn, "flow-1", "Waiter:first")
    client.invoke_rpc(flow.spawn, "flow-1", "Decider:cancel_siblings")
    engine.run_until_idle()
    lineage = {
        e.execution_id: e.payload["from_execution_id"]
        for e in of_kind(history(engine), EventKind.STEP_EXECUTION_CREATED)
    }
    assert lineage == {"Waiter-1": "__rpc/spawn", "Decider-1": "__rpc/spawn"}
    client.publish("flow-1", GO, "go")
    engine.run_until_idle()
    assert not of_kind(history(engine), EventKind.EXECUTION_CANCELED)
    assert active(engine) == {"Waiter-1": "waiting"}


def test_r123_a_sibling_cancel_from_another_lineage_does_not_reach_rpc_started_steps() -> None:
    flow = SpawnFlow()
    engine = settled(flow, None)
    client = engine.client()
    client.invoke_rpc(flow.spawn, "flow-1", "Waiter:rpc")
    client.invoke_rpc(flow.spawn, "flow-1", "Parent:p1/cancel_siblings")
    engine.run_until_idle()
    client.publish("flow-1", GO, "go")
    engine.run_until_idle()
    canceled = [e.execution_id for e in of_kind(history(engine), EventKind.EXECUTION_CANCELED)]
    assert canceled == [waiter_by_tag(engine, "sibling")]
    assert active(engine) == {waiter_by_tag(engine, "rpc"): "waiting"}
