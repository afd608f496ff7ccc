"""Engine rules R71-R73 (Attribute locks) through StepOptions (R114), and RPCs (R115-R124).

engine-semantics.md §5, §8 and §9. Locked Steps read-modify-write the Attribute ``n`` in an async
Execute that sleeps between the read and the write, so without a lock two branches interleave.
RPC locks fail fast (R72, R119); the RPC rules that follow test what an RPC may do, atomicity,
the order of its effects, transactional admission and its history event. R118 (RPC timeouts)
needs the live engine.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dexviz import (
    Attribute,
    Channel,
    Context,
    DexServiceError,
    Event,
    EventKind,
    FlowNotActiveError,
    FlowStatus,
    RpcLockConflictError,
    RPCResult,
    Step,
    StepDecision,
    StepMovement,
    StepOptions,
    Wait,
    WorkerInvocationError,
    dead_end,
    go_to_many,
    graceful_complete,
    rpc,
)
from tests.engine.flows_b import (
    BFlow,
    active,
    attempt_started,
    attempt_starts,
    event_is,
    history,
    of_kind,
    retries,
    run_until,
    settled,
    started,
)

N = Attribute("n", int)
OTHER = Attribute("other", int)
GATE = Channel("gate", str)
LOCK_N = StepOptions(execute_lock_attributes=(N.lock(),))


class Increment(Step[int]):
    """Reads n, works ``seconds`` (the input), writes n + 1."""

    def __init__(self, options: StepOptions | None = None) -> None:
        self.options = options
        self.read: list[int] = []

    def get_step_options(self) -> StepOptions | None:
        return self.options

    async def execute(self, context: Context, seconds: int) -> StepDecision:  # type: ignore[override]
        value = N.get(context)
        self.read.append(value)
        await asyncio.sleep(seconds)
        N.set(context, value + 1)
        return dead_end()


class TwoIncrements(Step[int]):
    """Starts two Increment branches at once."""

    def execute(self, context: Context, seconds: int) -> StepDecision:
        return go_to_many(
            StepMovement.of(Increment, seconds), StepMovement.of(Increment, seconds)
        )


class LockFlow(BFlow):
    """Increments under (or without) a lock on n; RPCs that lock n or another Attribute."""

    def __init__(self, *steps: Step[Any], start: Step[Any] | None = None) -> None:
        super().__init__("Locks", start or TwoIncrements(), steps, [N, OTHER, GATE])
        self.rpc_calls: list[str] = []

    @rpc(lock_attributes=[N.lock()])
    def bump(self, context: Context, by: int) -> RPCResult[int]:
        self.rpc_calls.append("bump")
        N.set(context, N.get(context) + by)
        return RPCResult(N.get(context))

    @rpc(lock_attributes=[OTHER.lock()])
    def touch_other(self, context: Context, value: int) -> RPCResult[int]:
        self.rpc_calls.append("touch_other")
        OTHER.set(context, value)
        return RPCResult(value)


@pytest.mark.parametrize("seed", range(5))
def test_r71_r114_locked_read_modify_writes_do_not_lose_updates(seed: int) -> None:
    step = Increment(LOCK_N)
    engine = settled(LockFlow(step), 1, seed=seed)
    assert engine.client().get_attribute("flow-1", N) == 2
    assert sorted(step.read) == [0, 1]
    # The second locked Execute only starts (and takes its snapshot) once the first commits.
    starts = sorted(attempt_starts(engine, "Increment-1") + attempt_starts(engine, "Increment-2"))
    assert starts == [0.0, 1.0]


def test_r70_without_a_lock_the_later_commit_wins() -> None:
    step = Increment()
    engine = settled(LockFlow(step), 1)
    assert engine.client().get_attribute("flow-1", N) == 1
    assert step.read == [0, 0]


class LockedWaitFor(Step[int]):
    """Its WaitFor locks n and then waits for ``gate``."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(wait_for_lock_attributes=(N.lock(),))

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(GATE.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


class WaitForThenIncrement(Step[int]):
    """Starts LockedWaitFor and a locked Increment side by side."""

    def execute(self, context: Context, seconds: int) -> StepDecision:
        return go_to_many(
            StepMovement.of(LockedWaitFor, 0), StepMovement.of(Increment, seconds)
        )


def test_r71_wait_for_locks_are_released_before_the_step_waits() -> None:
    flow = LockFlow(LockedWaitFor(), Increment(LOCK_N), start=WaitForThenIncrement())
    engine = settled(flow, 1)
    # The Increment took the lock and committed while LockedWaitFor still waits for its gate.
    assert engine.client().get_attribute("flow-1", N) == 1
    assert active(engine) == {"LockedWaitFor-1": "waiting"}
    assert engine.client().invoke_rpc(flow.bump, "flow-1", 10) == 11


def test_r72_an_rpc_whose_lock_is_held_fails_at_once_without_running() -> None:
    flow = LockFlow(Increment(LOCK_N))
    engine = started(flow, 5)
    run_until(engine, attempt_started("Increment-1"))
    with pytest.raises(RpcLockConflictError):
        engine.client().invoke_rpc(flow.bump, "flow-1", 10)
    assert flow.rpc_calls == []
    # A lock on another Attribute is free.
    assert engine.client().invoke_rpc(flow.touch_other, "flow-1", 3) == 3
    engine.run_until_idle()
    assert engine.client().get_attribute("flow-1", N) == 2
    assert engine.client().invoke_rpc(flow.bump, "flow-1", 10) == 12
    assert flow.rpc_calls == ["touch_other", "bump"]


class FlakyLocked(Step[int]):
    """Holds the lock on n; fails its first ``fail`` attempts, retried every 5 s (3 attempts)."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(
            execute_lock_attributes=(N.lock(),), execute_retry=retries(3, 5)
        ).on_execute_failure_proceed_to(GaveUp)

    def execute(self, context: Context, fail: int) -> StepDecision:
        if context.attempt <= fail:
            raise RuntimeError("not yet")
        N.set(context, 100)
        return dead_end()


class GaveUp(Step[int]):
    """FlakyLocked's recovery Step; keeps the Flow open for the RPC afterwards."""

    def execute(self, context: Context, fail: int) -> StepDecision:
        return dead_end()


@pytest.mark.parametrize("fail", [2, 3])
def test_r73_step_locks_are_held_across_retries_until_the_final_outcome(fail: int) -> None:
    flow = LockFlow(GaveUp(), start=FlakyLocked())
    engine = started(flow, fail)
    for attempt in (1, 2):
        run_until(engine, event_is(EventKind.ATTEMPT_FAILED, "FlakyLocked-1"))
        assert len(of_kind(history(engine), EventKind.ATTEMPT_FAILED)) == attempt
        with pytest.raises(RpcLockConflictError):  # during the backoff
            engine.client().invoke_rpc(flow.bump, "flow-1", 1)
    engine.run_until_idle()
    assert attempt_starts(engine, "FlakyLocked-1") == [0.0, 5.0, 10.0]
    expected = 100 if fail == 2 else None
    assert engine.client().get_attribute("flow-1", N) == expected
    assert engine.client().invoke_rpc(flow.bump, "flow-1", 1) == (expected or 0) + 1
    assert flow.rpc_calls == ["bump"]


def test_r71_a_canceled_holder_releases_its_lock_to_a_waiting_step() -> None:
    step = Increment(LOCK_N)
    engine = started(LockFlow(step), 10)
    def first_start(e: Event) -> bool:
        return e.kind == EventKind.ATTEMPT_STARTED and e.step_type == "Increment"

    holder = next(e for e in run_until(engine, first_start) if first_start(e)).execution_id
    assert holder is not None
    assert engine.cancel_execution("flow-1", holder)
    engine.run_until_idle()
    other = "Increment-2" if holder == "Increment-1" else "Increment-1"
    assert attempt_starts(engine, other) == [0.0]
    assert engine.client().get_attribute("flow-1", N) == 1


# -- R115-R124: RPC invocations (R118's timeout needs the live engine) -------------------------

OUT = Channel("out", str)


class Parked(Step[str]):
    """Waits for ``gate``; records what it took."""

    def wait_for(self, context: Context, tag: str) -> Wait:
        return Wait.until(GATE.for_one())

    def execute(self, context: Context, tag: str) -> StepDecision:
        return dead_end()


class RpcLab(BFlow):
    """A Flow whose start Step parks; its RPCs write, publish, start and cancel Steps."""

    def __init__(self) -> None:
        super().__init__("RpcLab", Parked(), [], [N, OTHER, GATE, OUT])
        self.calls: list[str] = []

    @rpc
    def all_effects(self, context: Context, value: int) -> RPCResult[str]:
        self.calls.append("all_effects")
        N.set(context, value)
        GATE.publish(context, "m")
        result = RPCResult("done", next_steps=(StepMovement.of(Parked, "new"),))
        return result.with_canceling_steps(Parked)

    @rpc
    def write_then_raise(self, context: Context, value: int) -> RPCResult[str]:
        self.calls.append("write_then_raise")
        N.set(context, value)
        OUT.publish(context, "lost")
        raise RuntimeError("handler broke")

    @rpc
    def close_it(self, context: Context, value: int) -> Any:
        self.calls.append("close_it")
        return graceful_complete("from rpc")

    @rpc
    def read(self, context: Context, value: int) -> RPCResult[int]:
        self.calls.append("read")
        return RPCResult(N.get(context) + value)

    @rpc
    def write(self, context: Context, value: int) -> RPCResult[int]:
        self.calls.append("write")
        N.set(context, value)
        return RPCResult(value)

    @rpc(lock_attributes=[N.lock()])
    def locked_read(self, context: Context, value: int) -> RPCResult[int]:
        self.calls.append("locked_read")
        return RPCResult(N.get(context))


def test_r115_r117_an_rpc_writes_publishes_cancels_and_starts_steps_in_order() -> None:
    flow = RpcLab()
    engine = settled(flow, "first")
    assert engine.client().invoke_rpc(flow.all_effects, "flow-1", 5) == "done"
    rpc_seq = of_kind(history(engine), EventKind.RPC_EXECUTION_COMPLETED)[0].seq
    commit = [e for e in history(engine) if e.seq >= rpc_seq]
    kinds = [str(e.kind) for e in commit[:4]]
    assert kinds == [
        "RpcExecutionCompleted",
        "MessagePublished",
        "ExecutionCanceled",
        "StepExecutionCreated",
    ]
    assert commit[2].execution_id == "Parked-1"
    assert commit[3].execution_id == "Parked-2"
    assert commit[3].payload["from_execution_id"] == "__rpc/all_effects"
    engine.run_until_idle()
    assert engine.client().get_attribute("flow-1", N) == 5
    # The canceled Parked-1 never took "m"; the new Parked-2 did.
    assert not of_kind(history(engine), EventKind.WAIT_SATISFIED, "Parked-1")
    assert of_kind(history(engine), EventKind.WAIT_SATISFIED, "Parked-2")


def test_r115_an_rpc_cannot_close_the_flow() -> None:
    flow = RpcLab()
    engine = settled(flow, "first")
    with pytest.raises(DexServiceError):
        engine.client().invoke_rpc(flow.close_it, "flow-1", 0)
    assert engine.result("flow-1").status is FlowStatus.RUNNING
    assert not of_kind(history(engine), EventKind.RPC_EXECUTION_COMPLETED)


def test_r116_a_failing_rpc_applies_nothing_and_is_not_retried() -> None:
    flow = RpcLab()
    engine = settled(flow, "first")
    with pytest.raises(WorkerInvocationError) as raised:
        engine.client().invoke_rpc(flow.write_then_raise, "flow-1", 9)
    assert raised.value.worker_error_detail == "handler broke"
    assert flow.calls == ["write_then_raise"]
    assert engine.client().get_attribute("flow-1", N) is None
    assert engine.flow_state("flow-1").channels["out"] == ()
    assert not of_kind(history(engine), EventKind.RPC_EXECUTION_COMPLETED)


def test_r119_rpcs_take_no_lock_unless_they_declare_one() -> None:
    flow = LockFlow(Increment(LOCK_N))
    engine = started(flow, 5)
    run_until(engine, attempt_started("Increment-1"))
    # An RPC without a lock declaration runs even though a Step holds n.
    assert engine.client().invoke_rpc(flow.touch_other, "flow-1", 4) == 4
    engine.run_until_idle()
    # A locking RPC releases its lock when it finishes: the next one gets it too.
    assert engine.client().invoke_rpc(flow.bump, "flow-1", 1) == 3
    assert engine.client().invoke_rpc(flow.bump, "flow-1", 1) == 4


def test_r120_a_read_only_rpc_is_served_by_a_closed_flow() -> None:
    flow = RpcLab()
    engine = settled(flow, "first")
    engine.client().invoke_rpc(flow.write, "flow-1", 2)
    engine.client().stop_flow("flow-1")
    assert engine.client().invoke_rpc(flow.read, "flow-1", 40) == 42


def test_r120_a_locking_rpc_needs_an_active_flow_and_never_runs_on_a_closed_one() -> None:
    flow = RpcLab()
    engine = settled(flow, "first")
    engine.client().stop_flow("flow-1")
    with pytest.raises(FlowNotActiveError):
        engine.client().invoke_rpc(flow.locked_read, "flow-1", 0)
    assert flow.calls == []


def test_r120_r121_an_rpc_with_effects_on_a_closed_flow_is_rejected_after_running() -> None:
    flow = RpcLab()
    engine = settled(flow, "first")
    engine.client().stop_flow("flow-1")
    with pytest.raises(FlowNotActiveError):
        engine.client().invoke_rpc(flow.write, "flow-1", 3)
    assert flow.calls == ["write"]
    assert engine.client().get_attribute("flow-1", N) is None


def test_r124_a_successful_rpc_is_recorded_with_its_effects() -> None:
    flow = RpcLab()
    engine = settled(flow, "first")
    engine.client().invoke_rpc(flow.all_effects, "flow-1", 5)
    (event,) = of_kind(history(engine), EventKind.RPC_EXECUTION_COMPLETED)
    payload = event.payload
    assert (payload["rpc"], payload["input"], payload["output"]) == ("all_effects", 5, "done")
    assert payload["writes"] == [{"attribute": "n", "value": 5, "deleted": False}]
    assert len(payload["published"]) == 1
    assert [n["execution_id"] for n in payload["next"]] == ["Parked-2"]
    assert payload["canceled"] == ["Parked-1"]
    assert event.method == "rpc"
