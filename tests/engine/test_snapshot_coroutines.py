"""Snapshots with coroutine handlers in flight continue byte for byte (R1: determinism).

A state whose ``async def`` handlers are suspended (in a sleep, between steps, done with their
outcome not yet taken) is snapshotted with each handler's trace; a restore calls the handler
again with a fresh context of the same attempt and re-drives it through its recorded steps at
their virtual times. Every Flow below is snapshotted after every unit and each snapshot is
restored in the same engine and, after a pickle round trip, in a new engine: both must finish
with the uninterrupted run's history and result. A handler the re-drive cannot rebuild is
refused with the Flow, Step and execution named.
"""

from __future__ import annotations

import asyncio
import pickle
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dexviz import (
    AsyncContext,
    Attribute,
    Channel,
    Engine,
    Flow,
    RetryPolicy,
    Step,
    StepDecision,
    StepMovement,
    StepOptions,
    Stream,
    Wait,
    current_time_millis,
    dead_end,
    go_to,
    go_to_many,
    graceful_complete,
)
from dexviz.engine import FaultPlan, SnapshotError
from dexviz.examples.contract_edit import ContractEdit, ContractEditFlow, SaveContractEdit
from tests.engine.flows_a import AdHocFlow, retries
from tests.engine.test_engine_state import (
    _check_every_snapshot,
    _outcome,
    _pickled_now_and_after_the_run,
    _start,
)

ASYNC_DONE = Channel("snap_async_done", int)
ASYNC_COUNT = Attribute("snap_async_count", int)


class ClockHop(Step[int]):
    """Reads the clock before, between and after its awaits, and carries the readings on."""

    async def execute(self, context: AsyncContext, n: int) -> StepDecision:  # type: ignore[override]
        before = current_time_millis()
        await asyncio.sleep(0.25 * (n + 1))
        await asyncio.sleep(0)  # a bare yield: the next step is queued as ready work
        after = current_time_millis()
        await asyncio.sleep(1)
        total = n + (after - before) + (current_time_millis() - after)
        return go_to(ClockHop, n + 1) if n < 3 else graceful_complete(total)


class AsyncFan(Step[int]):
    async def execute(self, context: AsyncContext, width: int) -> StepDecision:  # type: ignore[override]
        await asyncio.sleep(0.5)
        moves = [StepMovement.of(AsyncLeaf, i) for i in range(width)]
        return go_to_many(*moves, StepMovement.of(AsyncJoin, width))


class AsyncLeaf(Step[int]):
    """Stages effects before its await (re-driven into a fresh context) and after it."""

    async def execute(self, context: AsyncContext, i: int) -> StepDecision:  # type: ignore[override]
        ASYNC_DONE.publish(context, i)
        await asyncio.sleep(1 + i % 3)
        if i == 1:
            ASYNC_COUNT.set(context, current_time_millis() % 1000)
        return dead_end()


class AsyncJoin(Step[int]):
    async def wait_for(self, context: AsyncContext, width: int) -> Wait:  # type: ignore[override]
        await asyncio.sleep(0)
        return Wait.until(ASYNC_DONE.for_n(width))

    async def execute(self, context: AsyncContext, width: int) -> StepDecision:  # type: ignore[override]
        await asyncio.sleep(2)
        return graceful_complete(sum(ASYNC_DONE.results(context)))


class AsyncFlaky(Step[int]):
    """Fails its first attempts after a sleep: the retries' coroutines are in flight too."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_retry=retries(3))

    async def execute(self, context: AsyncContext, n: int) -> StepDecision:  # type: ignore[override]
        await asyncio.sleep(1)
        if context.attempt < 3:
            raise RuntimeError(f"attempt {context.attempt} of {n} fails")
        return graceful_complete(n * 10 + context.attempt)


PROGRESS = Stream("snap_progress", str)


class WritesAndBeats(Step[int]):
    """Writes a Stream and heartbeats around its awaits: effects the engine takes at once."""

    async def execute(self, context: AsyncContext, n: int) -> StepDecision:  # type: ignore[override]
        PROGRESS.write(context, f"start {n} at {current_time_millis()}")
        await asyncio.sleep(1)
        await context.heartbeat(n)
        PROGRESS.write(context, f"beat {n} at {current_time_millis()}")
        await asyncio.sleep(1)
        return go_to(WritesAndBeats, n + 1) if n < 2 else graceful_complete(n)


class TimesOut(Step[int]):
    """Sleeps past its attempt timeout: the timed-out Task is left unwinding."""

    def get_step_options(self) -> StepOptions:
        policy = RetryPolicy(maximum_attempts=1, total_duration=timedelta(seconds=1))
        return StepOptions(execute_retry=policy)

    async def execute(self, context: AsyncContext, n: int) -> StepDecision:  # type: ignore[override]
        try:
            await asyncio.sleep(5)
        finally:
            await asyncio.sleep(1)  # unwinding awaits: nothing a re-drive could reproduce
        return dead_end()


class Sleeper(Step[int]):
    """Sleeps long: a sibling cancels its execution, or fails the Flow, while it sleeps."""

    async def execute(self, context: AsyncContext, n: int) -> StepDecision:  # type: ignore[override]
        await asyncio.sleep(2 + n)
        return dead_end()


class CancelsSleepers(Step[int]):
    """Wakes first and cancels the Sleepers in flight: their Tasks end after the cancel."""

    async def execute(self, context: AsyncContext, n: int) -> StepDecision:  # type: ignore[override]
        await asyncio.sleep(1)
        return go_to(Sleeper, 9).with_canceling_steps(Sleeper)


class FailsFlow(Step[int]):
    """Wakes first and fails, with no retry: the Flow closes with the Sleepers in flight."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_retry=RetryPolicy(maximum_attempts=1))

    async def execute(self, context: AsyncContext, n: int) -> StepDecision:  # type: ignore[override]
        await asyncio.sleep(1)
        raise RuntimeError(f"{n} fails the Flow")


class Beating(Step[int]):
    """Heartbeats between its sleeps: its heartbeat timer fires while its siblings sleep."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(heartbeat_timeout=timedelta(seconds=2))

    async def execute(self, context: AsyncContext, n: int) -> StepDecision:  # type: ignore[override]
        for _ in range(3):
            await asyncio.sleep(1 + n % 2)
            await context.heartbeat(n)
        return dead_end()


class CancelsBeating(Step[int]):
    """Cancels the heartbeating siblings: the next beat cancels their Tasks (R107)."""

    async def execute(self, context: AsyncContext, n: int) -> StepDecision:  # type: ignore[override]
        await asyncio.sleep(1.5)
        return go_to(Sleeper, 0).with_canceling_steps(Beating)


class FanOut(Step[int]):
    """Starts ``n`` of ``many`` and the sibling ``last`` names, all coroutines at once."""

    def __init__(self, last: type[Step[int]], many: type[Step[int]] = Sleeper) -> None:
        self.last, self.many = last, many

    def execute(self, context: Any, n: int) -> StepDecision:
        moves = [StepMovement.of(self.many, i) for i in range(n)]
        return go_to_many(*moves, StepMovement.of(self.last, n))


def _several_flows() -> dict[str, tuple[Flow[Any], Any]]:
    return {
        "canceled_in_flight": (
            AdHocFlow("SnapCancelsMany", FanOut(CancelsSleepers), [Sleeper(), CancelsSleepers()]),
            3,
        ),
        "flow_closed_in_flight": (
            AdHocFlow("SnapFailsMany", FanOut(FailsFlow), [Sleeper(), FailsFlow()]),
            3,
        ),
        "heartbeats_in_flight": (
            AdHocFlow("SnapBeatsMany", FanOut(Sleeper, Beating), [Beating(), Sleeper()]),
            3,
        ),
    }


def _async_flows() -> dict[str, tuple[Flow[Any], Any]]:
    return {
        "clock_reads": (AdHocFlow("SnapClockHop", ClockHop()), 0),
        "fan_in": (
            AdHocFlow(
                "SnapAsyncFan", AsyncFan(), [AsyncLeaf(), AsyncJoin()], [ASYNC_DONE, ASYNC_COUNT]
            ),
            4,
        ),
        "retries": (AdHocFlow("SnapAsyncRetry", AsyncFlaky()), 7),
        "streams_and_beats": (AdHocFlow("SnapWrites", WritesAndBeats(), schema=[PROGRESS]), 0),
    }


@pytest.mark.parametrize("name", sorted(_async_flows()))
@pytest.mark.parametrize("seed", [0, 5])
def test_a_run_with_coroutines_in_flight_continues_identically_from_every_unit(
    name: str, seed: int
) -> None:
    taken, refused = _check_every_snapshot(name, lambda: _async_flows()[name], seed)
    assert taken >= 4 and refused == 0


def _stream(engine: Engine) -> list[Any]:
    return list(engine._rt.streams.log("flow-1", PROGRESS).messages)


def test_a_restored_handler_does_not_write_its_streams_twice() -> None:
    flow, input = _async_flows()["streams_and_beats"]
    engine = _start(flow, input, 0)
    assert engine is not None
    snapshots = []
    while not engine.is_idle:
        engine.step()
        snapshots.append(engine.snapshot())
    expected = _stream(engine)
    assert len(expected) == 6
    for snapshot in snapshots:
        engine.restore(snapshot)
        engine.run()
        assert _stream(engine) == expected


def _save_fault() -> FaultPlan:
    return FaultPlan.of(FaultPlan.fail(SaveContractEdit, execution_id="SaveContractEdit-2"))


@pytest.mark.parametrize("reviewers", [3, 8])
def test_the_seed_flow_with_a_save_fault_continues_identically_from_every_unit(
    reviewers: int,
) -> None:
    def build() -> tuple[Flow[Any], Any]:
        edits = [ContractEdit(f"r{i}", should_fail_edit=i == 1) for i in range(reviewers)]
        return ContractEditFlow(), edits

    taken, refused = _check_every_snapshot("ContractEditFlow", build, 3, _save_fault)
    assert taken > 4 * reviewers and refused == 0


def _in_flight(engine: Engine) -> bool:
    loop = engine._rt._loop
    return loop is not None and bool(loop.pending_tasks())


def test_a_snapshot_with_a_suspended_edit_pickles_without_its_frame() -> None:
    engine = _start(ContractEditFlow(), [ContractEdit("a"), ContractEdit("b")], 1)
    assert engine is not None
    while not _in_flight(engine):
        engine.step()
    snapshot = engine.snapshot()
    data = pickle.dumps(snapshot)
    assert b"EditContract" in data and b"_asyncio" not in data
    copy = pickle.loads(data)
    assert copy == snapshot


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), at=st.integers(0, 60), reviewers=st.integers(2, 4))
def test_restoring_any_mid_run_snapshot_of_the_seed_flow_ends_as_the_run_does(
    seed: int, at: int, reviewers: int
) -> None:
    edits = [ContractEdit(f"r{i}", should_withdraw=i == 0) for i in range(reviewers)]
    engine = _start(ContractEditFlow(), edits, seed)
    assert engine is not None
    for _ in range(at):
        if engine.is_idle:
            break
        engine.step()
    snapshot = engine.snapshot()
    engine.run()
    expected = _outcome(engine)
    engine.restore(snapshot)
    engine.run()
    assert _outcome(engine) == expected
    fresh = Engine([ContractEditFlow()], seed=seed + 1)
    fresh.restore(pickle.loads(pickle.dumps(snapshot)))
    fresh.run()
    assert _outcome(fresh) == expected


def test_a_timed_out_coroutine_still_unwinding_is_refused_naming_its_execution() -> None:
    engine = _start(AdHocFlow("SnapTimesOut", TimesOut()), 1, 0)
    assert engine is not None
    errors = []
    while not engine.is_idle:
        engine.step()
        try:
            engine.snapshot()
        except SnapshotError as error:
            errors.append(str(error))
    assert errors, "the attempt times out while its Task sleeps"
    assert all("coroutine handler cannot be snapshotted" in text for text in errors)
    assert any("TimesOut" in text for text in errors)


@pytest.mark.parametrize("name", sorted(_several_flows()))
@pytest.mark.parametrize("seed", [0, 5])
def test_several_coroutines_in_flight_whose_executions_end_continue_identically(
    name: str, seed: int
) -> None:
    # A canceled execution (or one of a closed Flow) keeps its Task, which runs on to its end
    # and has its outcome dropped: snapshots before, during and after that all restore alike.
    taken, refused = _check_every_snapshot(name, lambda: _several_flows()[name], seed)
    assert taken >= 4 and refused == 0


@pytest.mark.parametrize("name", ["canceled_in_flight", "flow_closed_in_flight"])
def test_an_ended_task_left_on_its_execution_pickles_as_an_ended_stand_in(name: str) -> None:
    from dexviz.engine.snapshot_names import ENDED_TASK

    flow, input = _several_flows()[name]
    engine = _start(flow, input, 0)
    assert engine is not None
    engine.run()
    ended = [ex for ex in engine._rt.runs["flow-1"].executions.values() if ex.task is not None]
    assert ended and all(isinstance(ex.task, asyncio.Task) and ex.task.done() for ex in ended)
    snapshot = engine.snapshot()
    assert b"_asyncio" not in snapshot.data
    fresh = Engine([_several_flows()[name][0]])
    fresh.restore(pickle.loads(pickle.dumps(snapshot)))
    restored = fresh._rt.runs["flow-1"].executions
    assert all(restored[ex.execution_id].task is ENDED_TASK for ex in ended)
    # The stand-in is written as the Task was: the restored state pickles again.
    assert b"EndedTask" not in fresh.snapshot().data


def test_canceled_heartbeating_coroutines_are_refused_by_name_not_by_pickle() -> None:
    # The beat that delivers the cancellation cancels the Task: while it unwinds, the snapshot
    # is refused naming the execution (a re-drive cannot throw into it); every other state
    # snapshots, pickles and continues identically.
    def build() -> tuple[Flow[Any], Any]:
        steps = [Beating(), CancelsBeating(), Sleeper()]
        return AdHocFlow("SnapCancelsBeats", FanOut(CancelsBeating, Beating), steps), 2

    taken, refused = _check_every_snapshot("SnapCancelsBeats", build, 0)
    assert refused > 0 and taken >= 4


@pytest.mark.parametrize("name", sorted(_several_flows()))
def test_several_coroutines_in_flight_pickle_when_taken_and_stay_unchanged(name: str) -> None:
    # Pickled at once, while the Tasks run (a fired heartbeat timer's handle still names the
    # attempt's context, which leads back to the live run), and again after the run ended.
    flow, input = _several_flows()[name]
    engine = _start(flow, input, 0)
    assert engine is not None
    pairs = _pickled_now_and_after_the_run(engine)
    assert len(pairs) >= 4
    for index, (then, after) in enumerate(pairs):
        assert after == then, f"{name}: snapshot {index} changed after it was taken"
