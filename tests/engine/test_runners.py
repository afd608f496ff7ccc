"""Handler runners: a coroutine handler whose Task is cancelled before it started leaves nothing.

In simulation an async handler runs as a Task on the VirtualLoop. When the Task is cancelled
before its first step (here: a method timeout due at the same instant, R104, R106), its handler
coroutine never ran; it must be closed, not left for the garbage collector to report as "never
awaited".
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import inspect
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest

from dexviz import (
    Attribute,
    Context,
    EventKind,
    RetryPolicy,
    Step,
    StepDecision,
    StepMovement,
    StepOptions,
    dead_end,
    go_to_many,
    simulate,
)
from dexviz.engine.core.loop import CANCEL_ROUNDS, VirtualLoop
from dexviz.engine.core.runners import DeferredCall, SimRunner, reraise_exit
from dexviz.engine.core.scheduler import Scheduler
from tests.engine.flows_a import AdHocFlow

LOCK = Attribute("lock", int)


@contextmanager
def unawaited_coroutines(*names: str) -> Iterator[list[str]]:
    """Collect the "never awaited" RuntimeWarnings about coroutines named ``names``.

    Garbage left by earlier tests is collected first, and only the named coroutines count, so
    the warnings are those of what the block ran (checked after a GC at its end).
    """
    gc.collect()
    found: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield found
        gc.collect()
    found.extend(
        message
        for message in (str(w.message) for w in caught if issubclass(w.category, RuntimeWarning))
        if "never awaited" in message and any(f"'{name}'" in message for name in names)
    )


# -- the engine: a method timeout that wins the race against the Task's first step ------------


class Fanout(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(StepMovement.of(Holder, 0), StepMovement.of(Late, 0))


class Holder(Step[int]):
    """Holds the lock for 5 s."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_lock_attributes=(LOCK.lock(),))

    async def execute(self, context: Context, n: int) -> StepDecision:  # type: ignore[override]
        await asyncio.sleep(5)
        return dead_end()


class Late(Step[int]):
    """Waits for the lock past its 2 s total_duration: its attempt starts with 0 s left."""

    def __init__(self) -> None:
        self.ran: list[int] = []

    def get_step_options(self) -> StepOptions:
        retry = RetryPolicy(maximum_attempts=1, total_duration=timedelta(seconds=2))
        return StepOptions(execute_lock_attributes=(LOCK.lock(),), execute_retry=retry)

    async def execute(self, context: Context, n: int) -> StepDecision:  # type: ignore[override]
        self.ran.append(n)
        await asyncio.sleep(1)
        return dead_end()


def test_r104_an_attempt_timed_out_before_its_task_started_leaves_no_unawaited_coroutine() -> None:
    raced = 0
    for seed in range(12):
        late = Late()
        with unawaited_coroutines("Late.execute", "Holder.execute", "guard_exits") as unawaited:
            run = simulate(AdHocFlow("Race", Fanout(), [Holder(), late], [LOCK]), 0, seed=seed)
            failed = [
                e for e in run.history.of_kind(EventKind.ATTEMPT_FAILED) if e.step_type == "Late"
            ]
            del run
        assert unawaited == [], f"seed {seed}"
        if failed and not late.ran:
            # The timeout came first: the handler never ran, and its attempt failed as a timeout.
            raced += 1
            assert failed[0].payload["reason"] == "timeout"
    assert raced >= 2  # the race this test is about did happen, on several seeds


# -- the runner itself ----------------------------------------------------------------------


def _runner() -> tuple[Scheduler, SimRunner]:
    scheduler = Scheduler(0)
    loop = VirtualLoop(scheduler)
    return scheduler, SimRunner(lambda: loop, lambda: 0)


def _drain(scheduler: Scheduler) -> None:
    while (unit := scheduler.pop()) is not None:
        unit()


def _recorder() -> tuple[list[tuple[Any, BaseException | None, bool]], Callable[..., None]]:
    outcomes: list[tuple[Any, BaseException | None, bool]] = []
    return outcomes, lambda *outcome: outcomes.append(outcome)


def test_a_task_cancelled_before_its_first_step_closes_the_handler_coroutine() -> None:
    scheduler, runner = _runner()
    ran: list[str] = []

    async def handler(context: object, value: int) -> int:
        ran.append("started")
        return value

    outcomes, done = _recorder()
    name = "test_a_task_cancelled_before_its_first_step_closes_the_handler_coroutine.<locals>"
    with unawaited_coroutines(f"{name}.handler", "guard_exits") as unawaited:
        task = runner.run_async(handler, (None, 1), done)
        task.cancel()
        _drain(scheduler)
        del task
    assert unawaited == []
    assert ran == [] and outcomes == [(None, None, True)]


@pytest.mark.parametrize("cancel", [False, True])
def test_a_started_handler_runs_to_its_end_or_to_its_cancellation(cancel: bool) -> None:
    scheduler, runner = _runner()
    seen: list[str] = []

    async def handler(context: object, value: int) -> int:
        try:
            await asyncio.sleep(1)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        return value * 2

    outcomes, done = _recorder()
    name = "test_a_started_handler_runs_to_its_end_or_to_its_cancellation.<locals>.handler"
    with unawaited_coroutines(name, "guard_exits") as unawaited:
        task = runner.run_async(handler, (None, 21), done)
        scheduler.pop()()  # the Task's first step: the handler starts and sleeps
        if cancel:
            task.cancel()
        _drain(scheduler)
        del task
    assert unawaited == []
    assert outcomes == ([(None, None, True)] if cancel else [(42, None, False)])
    assert seen == (["cancelled"] if cancel else [])


def test_a_handler_error_is_still_reported_as_the_attempt_s_error() -> None:
    scheduler, runner = _runner()

    async def handler(context: object, value: int) -> int:
        raise ValueError(f"bad {value}")

    outcomes, done = _recorder()
    runner.run_async(handler, (None, 3), done)
    _drain(scheduler)
    ((result, error, cancelled),) = outcomes
    assert (result, cancelled) == (None, False)
    assert isinstance(error, ValueError) and str(error) == "bad 3"


def test_the_handler_runs_in_the_runner_s_context() -> None:
    scheduler, runner = _runner()
    marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="outside")

    async def handler(context: object, value: int) -> str:
        return marker.get()

    outcomes, done = _recorder()
    token = marker.set("caller")
    try:
        runner.run_async(handler, (None, 0), done)
    finally:
        marker.reset(token)
    _drain(scheduler)
    assert outcomes == [("caller", None, False)]  # copied at the call, as before


# -- a Task holds only the call until its first step -----------------------------------------


def _coroutines_of(function: Any) -> list[Any]:
    code = function.__code__
    return [o for o in gc.get_objects() if inspect.iscoroutine(o) and o.cr_code is code]


def test_an_unstarted_task_holds_no_handler_coroutine_only_the_call() -> None:
    scheduler, runner = _runner()

    async def handler(context: object, value: int) -> int:
        return value

    outcomes, done = _recorder()
    task = runner.run_async(handler, (None, 5), done)
    coro = task.get_coro()
    assert isinstance(coro, DeferredCall) and not coro.started
    assert _coroutines_of(handler) == []  # nothing that could be reported as never awaited
    assert "handler" in repr(task)  # asyncio names the handler in the Task's repr
    _drain(scheduler)
    assert coro.started and outcomes == [(5, None, False)]


def test_a_handler_error_is_the_task_s_result_so_a_dropped_task_logs_nothing() -> None:
    scheduler, runner = _runner()

    async def handler(context: object, value: int) -> int:
        raise ValueError("bad")

    task = runner.run_async(handler, (None, 0), lambda *outcome: None)
    scheduler.pop()()  # the Task runs and fails; its done callback is still queued
    assert task.done() and task.exception() is None  # nothing for asyncio to report
    assert isinstance(reraise_guarded(task), ValueError)


def reraise_guarded(task: asyncio.Task[Any]) -> BaseException:
    try:
        reraise_exit(task.result())
    except ValueError as error:
        return error
    raise AssertionError("the handler's error was lost")


def test_a_deferred_call_closed_or_thrown_into_before_it_starts_never_calls_the_handler() -> None:
    called: list[int] = []

    async def handler(value: int) -> int:
        called.append(value)
        return value

    closed = DeferredCall(handler, (1,))
    closed.close()
    assert closed.started
    with pytest.raises(RuntimeError, match="cannot reuse"):
        closed.send(None)
    thrown = DeferredCall(handler, (2,))
    with pytest.raises(asyncio.CancelledError):
        thrown.throw(asyncio.CancelledError())
    assert thrown.started and called == []


# -- the loop keeps its Tasks; closing cancels them -----------------------------------------


def test_the_loop_keeps_a_pending_task_it_was_handed_and_forgets_it_once_done() -> None:
    scheduler, runner = _runner()
    loop = VirtualLoop(scheduler)

    async def child() -> None:
        await asyncio.sleep(1)

    task = loop.create_task(child())
    assert loop.pending_tasks() == [task]
    del task
    gc.collect()
    assert len(loop.pending_tasks()) == 1  # not collected while it is pending
    _drain(scheduler)
    assert loop.pending_tasks() == []
    loop.close()
    assert loop.is_closed()


def test_closing_the_loop_delivers_cancellation_and_runs_no_timer() -> None:
    scheduler = Scheduler(0)
    loop = VirtualLoop(scheduler)
    seen: list[str] = []

    async def stubborn() -> None:
        try:
            while True:  # ignores every cancellation; its timers never fire while closing
                try:
                    await asyncio.sleep(1)
                except asyncio.CancelledError:
                    seen.append("cancelled")
        finally:
            seen.append("finally")

    task = loop.start_task(stubborn(), contextvars.copy_context())
    scheduler.pop()()  # first step: it sleeps
    loop.close()
    # Cancelled CANCEL_ROUNDS times, then its coroutine is closed: its finally block ran.
    assert seen == ["cancelled"] * CANCEL_ROUNDS + ["finally"]
    assert loop.is_closed() and loop.pending_tasks() == [] and not task.done()
    late = stubborn()
    with pytest.raises(RuntimeError, match="closed"):
        loop.create_task(late)
    late.close()


def test_abandoning_the_loop_runs_no_handler_code() -> None:
    scheduler = Scheduler(0)
    loop = VirtualLoop(scheduler)
    seen: list[str] = []

    async def sleeper() -> None:
        try:
            await asyncio.sleep(1)
        finally:
            seen.append("finally")

    async def wrapper(inner: Any) -> None:
        await inner

    loop.start_task(sleeper(), contextvars.copy_context())
    scheduler.pop()()
    # A native wrapper handed a fresh coroutine, never started: both are closed quietly.
    loop.start_task(wrapper(sleeper()), contextvars.copy_context())
    with unawaited_coroutines("sleeper", "wrapper") as unawaited:
        loop.abandon()
    assert seen == [] and loop.is_closed() and unawaited == []
