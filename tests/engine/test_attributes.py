"""Engine rules R63-R78: Attributes (engine-semantics.md §5)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from dexviz import (
    AsyncContext,
    Attribute,
    AttributeMap,
    Context,
    Event,
    EventKind,
    Flow,
    FlowDefinitionError,
    FlowStatus,
    PersistenceSchema,
    RpcLockConflictError,
    RPCResult,
    StartFlowOptions,
    Step,
    StepDecision,
    StepList,
    StepMovement,
    StepOptions,
    Timer,
    Wait,
    dead_end,
    go_to_many,
    graceful_complete,
    rpc,
    simulate,
)
from tests.engine.flows_a import (
    NO_RETRY,
    AdHocFlow,
    active,
    failed_attempts,
    of_kind,
    retries,
    started,
)

N = Attribute("n", int)
NAME = Attribute("name", str)
RATIO = Attribute("ratio", float)
FLAG = Attribute("flag", bool)
PREFS = AttributeMap("prefs", str)
UNDECLARED = Attribute("undeclared", int)
ALL = (N, NAME, RATIO, FLAG, PREFS)


def client_get(engine: object, attribute: object, *instance: str) -> object:
    return engine.client().get_attribute("flow-1", attribute, *instance)  # type: ignore[attr-defined]


# -- R63, R64 ------------------------------------------------------------------------------


class WriteUndeclared(Step[int]):
    def get_step_options(self) -> StepOptions:
        return NO_RETRY

    def execute(self, context: Context, n: int) -> StepDecision:
        UNDECLARED.set(context, 1)
        return dead_end()


class ReadUndeclared(WriteUndeclared):
    def execute(self, context: Context, n: int) -> StepDecision:
        UNDECLARED.get(context)
        return dead_end()


@pytest.mark.parametrize("step", [WriteUndeclared, ReadUndeclared], ids=["write", "read"])
def test_r63_undeclared_attribute_fails_the_attempt(step: type[Step[int]]) -> None:
    run = simulate(AdHocFlow("Undeclared", step(), schema=[N]), 1)
    failures = failed_attempts(run.history)
    assert len(failures) == 1 and "'undeclared'" in failures[0]["error_message"]
    assert run.result.status is FlowStatus.FAILED


def test_r63_client_set_of_undeclared_attribute_is_rejected() -> None:
    engine = started(AdHocFlow("Undeclared", Parked(), schema=[N]), 1)
    with pytest.raises(ValueError, match="'undeclared'"):
        engine.client().set_attribute("flow-1", UNDECLARED, 3)


class SetThenRaise(Step[int]):
    def get_step_options(self) -> StepOptions:
        return NO_RETRY

    def execute(self, context: Context, n: int) -> StepDecision:
        N.set(context, 1)
        PREFS.set(context, "theme", "dark")
        raise RuntimeError("after writing")


def test_r64_failed_method_writes_nothing() -> None:
    run = simulate(AdHocFlow("Atomic", SetThenRaise(), schema=ALL), 1)
    assert run.result.status is FlowStatus.FAILED
    assert run.engine.flow_state("flow-1").attributes == {}
    assert client_get(run.engine, N) is None


# -- R65, R66 ------------------------------------------------------------------------------


class Parked(Step[int]):
    """Waits for ever on a 1-day timer loop (keeps the Flow open without Steps failing)."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(days=1)))

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


class Deleter(Step[int]):
    """Deletes (or sets None on) every Attribute, then records what a handler reads."""

    def __init__(self) -> None:
        self.read: list[object] = []

    def wait_for(self, context: Context, n: int) -> Wait:
        N.delete(context)
        NAME.set(context, None)  # type: ignore[arg-type]
        RATIO.delete(context)
        FLAG.delete(context)
        PREFS.delete(context, "theme")
        return Wait.skip_immediately()

    def execute(self, context: Context, n: int) -> StepDecision:
        self.read = [
            N.get(context),
            NAME.get(context),
            RATIO.get(context),
            FLAG.get(context),
            PREFS.get(context, "theme"),
        ]
        return dead_end()


def test_r65_deleted_attributes_read_as_type_defaults_and_none() -> None:
    step = Deleter()
    options = (
        StartFlowOptions()
        .with_attribute(N, 4)
        .with_attribute(NAME, "ann")
        .with_attribute(RATIO, 0.5)
        .with_attribute(FLAG, True)
        .with_attribute(PREFS, "theme", "dark")
    )
    run = simulate(AdHocFlow("Delete", step, schema=ALL), 1, options=options)
    assert step.read == [0, None, 0.0, False, None]
    assert run.engine.flow_state("flow-1").attributes == {}
    assert [client_get(run.engine, a) for a in (N, NAME, RATIO, FLAG)] == [None] * 4
    assert client_get(run.engine, PREFS, "theme") is None
    writes = of_kind(run.history, EventKind.STEP_WAIT_FOR_COMPLETED)[0].payload["writes"]
    assert all(w["deleted"] for w in writes) and len(writes) == 5


class Rewriter(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        N.set(context, 1)
        NAME.set(context, "b")
        N.set(context, 2)
        return dead_end()


def test_r66_last_write_wins_and_one_write_is_emitted() -> None:
    run = simulate(AdHocFlow("Rewrite", Rewriter(), schema=ALL), 1)
    assert client_get(run.engine, N) == 2
    writes = of_kind(run.history, EventKind.STEP_EXECUTE_COMPLETED)[0].payload["writes"]
    assert sorted((w["attribute"], w["value"]) for w in writes) == [("n", 2), ("name", "b")]


def test_r66_writes_keep_first_write_order() -> None:
    run = simulate(AdHocFlow("Rewrite", Rewriter(), schema=ALL), 1)
    writes = of_kind(run.history, EventKind.STEP_EXECUTE_COMPLETED)[0].payload["writes"]
    assert [w["attribute"] for w in writes] == ["n", "name"]


# -- R67 -----------------------------------------------------------------------------------


class InitialReader(Step[int]):
    def __init__(self) -> None:
        self.read: list[object] = []

    def wait_for(self, context: Context, n: int) -> Wait:
        self.read.extend([NAME.get(context), PREFS.get(context, "k")])
        return Wait.skip_immediately()

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


def test_r67_initial_attributes_are_visible_to_the_first_step() -> None:
    step = InitialReader()
    options = StartFlowOptions().with_attribute(NAME, "queued").with_attribute(PREFS, "k", "v")
    run = simulate(AdHocFlow("Initial", step, schema=ALL), 1, options=options)
    assert step.read == ["queued", "v"]
    start = run.history.start
    assert start is not None
    assert start.payload["initial_attributes"] == [
        {"attribute": "name", "value": "queued"},
        {"attribute": "prefs/k", "value": "v"},
    ]


def test_r67_initial_attributes_must_be_declared() -> None:
    flow = AdHocFlow("Initial", InitialReader(), schema=[NAME])
    options = StartFlowOptions().with_attribute(UNDECLARED, 1)
    with pytest.raises(FlowDefinitionError, match="'undeclared'"):
        simulate(flow, 1, options=options)


# -- R68 -----------------------------------------------------------------------------------


class MapReader(Step[int]):
    seen: list[object] = []

    def get_step_options(self) -> StepOptions:
        return NO_RETRY

    def execute(self, context: Context, n: int) -> StepDecision:
        MapReader.seen.append(PREFS.get(context, "theme"))
        return dead_end()


def test_r68_unselected_attribute_map_instance_is_read_without_load_selection() -> None:
    """dexviz's documented choice (A13/R68, marked uncertain in the API notes): AttributeMap
    values are delivered without ``*_load_attribute_map*`` selection, as the 0.2 engine did,
    so Flows of both SDK generations read them the same way."""
    options = StartFlowOptions().with_attribute(PREFS, "theme", "dark")
    MapReader.seen.clear()
    run = simulate(AdHocFlow("Load", MapReader(), schema=ALL), 1, options=options)
    assert not failed_attempts(run.history)
    assert MapReader.seen == ["dark"]


class MapKeys(Step[int]):
    """Sets "b", deletes "a", and records the keys and size it sees."""

    def __init__(self) -> None:
        self.seen: list[object] = []

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_load_attribute_maps=(PREFS,))

    def execute(self, context: Context, n: int) -> StepDecision:
        self.seen.append(PREFS.get_all_instance_keys(context))
        PREFS.set(context, "b", "B")
        PREFS.delete(context, "a")
        self.seen.append(PREFS.get_all_instance_keys(context))
        self.seen.append(PREFS.get_map_size(context))
        self.seen.append(PREFS.get(context, "b"))
        return dead_end()


def test_r68_r69_map_keys_include_own_staged_writes_sorted() -> None:
    step = MapKeys()
    options = StartFlowOptions().with_attribute(PREFS, "c", "C").with_attribute(PREFS, "a", "A")
    run = simulate(AdHocFlow("Keys", step, schema=ALL), 1, options=options)
    assert step.seen == [("a", "c"), ("b", "c"), 2, "B"]
    assert run.engine.flow_state("flow-1").attributes == {"prefs/b": "B", "prefs/c": "C"}
    assert client_get(run.engine, PREFS, "b") == "B"


# -- R70, R71 ------------------------------------------------------------------------------


class Increment(Step[int]):
    """Reads n, sleeps 1 s, writes n + 1 (no lock unless its options add one)."""

    async def execute(self, context: AsyncContext, n: int) -> StepDecision:  # type: ignore[override]
        value = N.get(context)
        await asyncio.sleep(1)
        N.set(context, value + 1)
        return dead_end()


class LockedIncrement(Increment):
    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_lock_attributes=(N.lock(),))


class TwoIncrements(Step[int]):
    def __init__(self, step: type[Step[int]]) -> None:
        self.step = step

    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(StepMovement.of(self.step, 1), StepMovement.of(self.step, 2))


@pytest.mark.parametrize("seed", [0, 1])
def test_r70_unlocked_concurrent_writers_lose_an_update(seed: int) -> None:
    flow = AdHocFlow("Lost", TwoIncrements(Increment), [Increment()], ALL)
    run = simulate(flow, 0, seed=seed)
    assert client_get(run.engine, N) == 1


@pytest.mark.parametrize("seed", [0, 1])
def test_r71_locked_read_modify_write_serialises(seed: int) -> None:
    flow = AdHocFlow("Locked", TwoIncrements(LockedIncrement), [LockedIncrement()], ALL)
    run = simulate(flow, 0, seed=seed)
    assert client_get(run.engine, N) == 2
    done = of_kind(run.history, EventKind.STEP_EXECUTE_COMPLETED)
    times = sorted(e.time_ns for e in done if e.step_type == "LockedIncrement")
    assert times[1] - times[0] == 10**9


class LockingWaiter(Step[int]):
    """WaitFor locks n, then waits for a day."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(wait_for_lock_attributes=(N.lock(),))

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(days=1)))

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


class LaterLockedIncrement(LockedIncrement):
    """Waits 1 s (so LockingWaiter has committed its WaitFor), then a locked increment."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(seconds=1)))


class StartLockingWaiterAndIncrement(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(
            StepMovement.of(LockingWaiter, 0), StepMovement.of(LaterLockedIncrement, 0)
        )


def increment_done(event: Event) -> bool:
    return (
        event.kind == EventKind.STEP_EXECUTE_COMPLETED and event.step_type == "LaterLockedIncrement"
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_r71_wait_for_locks_are_released_before_waiting(seed: int) -> None:
    steps = [LockingWaiter(), LaterLockedIncrement()]
    flow = AdHocFlow("WaitLock", StartLockingWaiterAndIncrement(), steps, ALL)
    engine = started(flow, 0, seed=seed)
    engine.run(until=increment_done)
    assert client_get(engine, N) == 1
    assert active(engine) == {"LockingWaiter-1": "waiting"}
    assert engine.time_ns - engine.history("flow-1").start.time_ns == 2 * 10**9  # type: ignore[union-attr]


class MapLocked(Step[str]):
    """Locks one prefs instance, sleeps 1 s, writes it."""

    def get_step_options(self) -> StepOptions:
        return StepOptions()

    async def execute(self, context: AsyncContext, key: str) -> StepDecision:  # type: ignore[override]
        await asyncio.sleep(1)
        PREFS.set(context, key, "done")
        return dead_end()


class StartMapLocked(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        lock = StepOptions(execute_lock_attributes=(PREFS.lock("x"),))
        other = StepOptions(execute_lock_attributes=(PREFS.lock("y"),))
        return go_to_many(
            StepMovement.of(MapLocked, "x", options=lock),
            StepMovement.of(MapLocked, "x", options=lock),
            StepMovement.of(MapLocked, "y", options=other),
        )


def test_r69_r71_map_locks_are_per_instance() -> None:
    run = simulate(AdHocFlow("MapLock", StartMapLocked(), [MapLocked()], ALL), 0)
    done = {
        e.execution_id: (e.time_ns - run.history.start.time_ns) // 10**9  # type: ignore[union-attr]
        for e in of_kind(run.history, EventKind.STEP_EXECUTE_COMPLETED)
        if e.step_type == "MapLocked"
    }
    assert sorted(done.values()) == [1, 1, 2]  # the two "x" holders serialise, "y" runs alongside
    assert done["MapLocked-3"] == 1


# -- R72, R73 ------------------------------------------------------------------------------


class LockFlow(Flow[int]):
    """A Step holding the lock on n, and an RPC that wants it."""

    def __init__(self, holder: Step[int]) -> None:
        self.holder = holder
        self.rpc_calls = 0

    def get_steps(self) -> StepList[int]:
        return StepList.start_step(self.holder)

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(*ALL)

    @rpc(lock_attributes=[N.lock()])
    def bump(self, context: Context) -> RPCResult[int]:
        self.rpc_calls += 1
        N.set(context, N.get(context) + 10)
        return RPCResult(N.get(context))


class SlowLockHolder(Step[int]):
    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_lock_attributes=(N.lock(),))

    async def execute(self, context: AsyncContext, n: int) -> StepDecision:  # type: ignore[override]
        await asyncio.sleep(30)
        N.set(context, 1)
        return dead_end()


def test_r72_rpc_lock_conflict_fails_fast_without_running() -> None:
    flow = LockFlow(SlowLockHolder())
    engine = started(flow, 0)
    engine.run(until=EventKind.ATTEMPT_STARTED)
    with pytest.raises(RpcLockConflictError):
        engine.client().invoke_rpc(flow.bump, "flow-1")
    assert flow.rpc_calls == 0
    engine.run_until_idle()
    assert engine.client().invoke_rpc(flow.bump, "flow-1") == 11
    assert flow.rpc_calls == 1


class FlakyLockHolder(Step[int]):
    """Holds the lock on n in Execute; fails twice with a 10 s backoff, then writes 1."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_lock_attributes=(N.lock(),), execute_retry=retries(3, 10))

    def execute(self, context: Context, n: int) -> StepDecision:
        if context.attempt < 3:
            raise RuntimeError("flaky")
        N.set(context, 1)
        return dead_end()


def test_r73_step_locks_span_retries() -> None:
    flow = LockFlow(FlakyLockHolder())
    engine = started(flow, 0)
    engine.run(until=EventKind.ATTEMPT_FAILED)
    with pytest.raises(RpcLockConflictError):
        engine.client().invoke_rpc(flow.bump, "flow-1")
    engine.run(until=EventKind.ATTEMPT_FAILED)
    with pytest.raises(RpcLockConflictError):
        engine.client().invoke_rpc(flow.bump, "flow-1")
    engine.run_until_idle()
    assert engine.client().invoke_rpc(flow.bump, "flow-1") == 11
    assert flow.rpc_calls == 1


# -- R75, R78 ------------------------------------------------------------------------------


class SetAndFinish(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        N.set(context, n)
        return graceful_complete()


def test_r75_attributes_are_readable_after_close() -> None:
    run = simulate(AdHocFlow("Closed", SetAndFinish(), schema=ALL), 42)
    assert run.result.status is FlowStatus.COMPLETED
    assert client_get(run.engine, N) == 42


class Reader(Step[int]):
    """After a timer, records n and name."""

    def __init__(self) -> None:
        self.read: list[tuple[int, str]] = []

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(seconds=10)))

    def execute(self, context: Context, n: int) -> StepDecision:
        self.read.append((N.get(context), NAME.get(context)))
        return dead_end()


def test_r78_client_set_attribute_is_one_recorded_commit() -> None:
    reader = Reader()
    engine = started(AdHocFlow("Set", reader, schema=ALL), 0)
    engine.run(until=EventKind.TIMER_STARTED)
    before = len(engine.history("flow-1"))
    engine.client().set_attribute("flow-1", N, 7)
    engine.client().set_attribute("flow-1", PREFS, "theme", "dark")
    new = engine.history("flow-1")[before:]
    assert [e.kind for e in new] == [EventKind.RPC_EXECUTION_COMPLETED] * 2
    assert all(e.payload["is_set_attribute_api"] for e in new)
    assert [w["attribute"] for e in new for w in e.payload["writes"]] == ["n", "prefs/theme"]
    engine.run_until_idle()
    assert reader.read == [(7, None)]
    assert client_get(engine, PREFS, "theme") == "dark"
