"""Closing, crashing and dropping a simulation engine while coroutine handlers are pending.

A simulation runs coroutine handlers as Tasks on its VirtualLoop. Whatever ends the engine —
``close()``, a ``with`` block, a crash fault, or the user dropping it at a breakpoint — nothing
may be left that warns later ("coroutine ... was never awaited", asyncio's "Task was destroyed
but it is pending!", an unclosed event loop), and a dropped engine must be collected.
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import weakref
from typing import Any

import pytest

from dexviz import Channel, Context, Engine, FaultPlan, MemoryStore, Step, StepDecision, dead_end
from dexviz.engine import EngineCrashed
from dexviz.engine.core.loop import VirtualLoop
from dexviz.sdk.decision import StepMovement, go_to_many
from dexviz.sdk.results import FlowStatus
from tests.engine.flows_a import AdHocFlow
from tests.engine.leftovers import nothing_left

# -- a Flow whose handlers are pending at the breakpoint ----------------------------------------


class Fanout(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(StepMovement.of(Sleeper, n), StepMovement.of(Fresh, n))


class Sleeper(Step[int]):
    """Sleeps a minute; says what it saw of its end."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def execute(self, context: Context, n: int) -> StepDecision:  # type: ignore[override]
        self.seen.append("started")
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            self.seen.append("cancelled")
            raise
        finally:
            self.seen.append("finally")
        return dead_end()


class Fresh(Step[int]):
    """Starts two sub-Tasks with ``gather`` and waits for them."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def execute(self, context: Context, n: int) -> StepDecision:  # type: ignore[override]
        self.seen.append("started")
        await asyncio.gather(self.child(), self.child())
        return dead_end()

    async def child(self) -> None:
        self.seen.append("child")
        await asyncio.sleep(30)


def _flow() -> tuple[AdHocFlow, Sleeper, Fresh]:
    sleeper, fresh = Sleeper(), Fresh()
    return AdHocFlow("Pending", Fanout(), [sleeper, fresh]), sleeper, fresh


def _loop(engine: Engine) -> VirtualLoop:
    return engine._rt.loop


def _states(engine: Engine) -> list[str]:
    """The state of each pending Task's coroutine ("created" for a handler not called yet)."""
    states = []
    for task in _loop(engine).pending_tasks():
        coro = task.get_coro()
        if inspect.iscoroutine(coro):
            states.append(inspect.getcoroutinestate(coro).removeprefix("CORO_").lower())
        else:
            states.append("suspended" if coro.started else "created")  # type: ignore[attr-defined]
    return states


def _stop_with_pending(engine: Engine, flow: AdHocFlow, sleeper: Sleeper, fresh: Fresh) -> bool:
    """Step to a breakpoint where the Sleeper sleeps and Fresh's Task did not call it yet."""
    engine.client().start_flow(flow, "flow-1", 1)
    for _ in range(100):
        states = _states(engine) if engine._rt._loop is not None else []
        if sleeper.seen == ["started"] and fresh.seen == [] and "created" in states:
            return True
        if engine.is_idle:
            break
        engine.step()
    return False


def _pending_engine(seed: int = 0) -> tuple[Engine, Sleeper, Fresh]:
    """An engine at that breakpoint (the first seed from ``seed`` on that reaches it)."""
    for tried in range(seed, seed + 50):
        flow, sleeper, fresh = _flow()
        engine = Engine([flow], seed=tried)
        if _stop_with_pending(engine, flow, sleeper, fresh):
            return engine, sleeper, fresh
        engine.close()
    raise AssertionError(f"no seed from {seed} stops with a sleeping and an uncalled handler")


# -- close ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_close_cancels_the_pending_handler_tasks_and_leaves_nothing_to_warn(seed: int) -> None:
    with nothing_left() as left:
        engine, sleeper, fresh = _pending_engine(seed)
        events = len(engine.history("flow-1"))
        loop = _loop(engine)
        engine.close()
        assert loop.is_closed() and loop.pending_tasks() == []
        assert engine.closed
        # The sleeping handler saw its cancellation; the one never called stays uncalled.
        assert sleeper.seen == ["started", "cancelled", "finally"]
        assert fresh.seen == []
        assert len(engine.history("flow-1")) == events  # nothing recorded after close
        assert engine.result("flow-1").status is FlowStatus.RUNNING
        del engine, loop
    assert left == []


def test_close_cancels_sub_tasks_that_never_started() -> None:
    with nothing_left() as left:
        flow, _, fresh = _flow()
        engine = Engine([flow])
        engine.client().start_flow(flow, "flow-1", 1)
        for _ in range(100):
            if "started" in fresh.seen:
                break
            engine.step()
        # Fresh awaits gather: its two children are Tasks that have not run yet.
        assert fresh.seen == ["started"]
        assert _states(engine).count("created") >= 2
        engine.close()
        assert fresh.seen == ["started"]
        del engine
    assert left == []


def test_a_closed_engine_rejects_later_calls_with_a_clear_error() -> None:
    engine, _, _ = _pending_engine()
    engine.close()
    engine.close()  # closing twice is fine
    for call in (engine.step, engine.run, engine.run_until_idle, engine.client):
        with pytest.raises(RuntimeError, match="this Engine is closed; create a new one"):
            call()


def test_with_engine_closes_it_when_the_block_ends() -> None:
    with nothing_left() as left:
        engine, sleeper, _ = _pending_engine()
        with engine:
            loop = _loop(engine)
        assert engine.closed and loop.is_closed()
        assert sleeper.seen[-2:] == ["cancelled", "finally"]
        del engine, loop
    assert left == []


def test_with_engine_closes_it_when_the_block_raises() -> None:
    engine, sleeper, _ = _pending_engine()
    with pytest.raises(KeyError), engine:
        raise KeyError("the notebook cell failed")
    assert sleeper.seen == ["started", "cancelled", "finally"]
    assert engine.closed and _loop(engine).is_closed()


# -- crash ---------------------------------------------------------------------------------------


def _crash_with_pending() -> tuple[Engine, MemoryStore, Sleeper, int]:
    """Crash after the first commit at which a handler Task is pending."""
    for commit in range(1, 12):
        flow, sleeper, _ = _flow()
        store = MemoryStore()
        engine = Engine(
            [flow], store=store, faults=FaultPlan.of(FaultPlan.crash_after_commit(commit))
        )
        with pytest.raises(EngineCrashed):
            engine.client().start_flow(flow, "flow-1", 1)
            engine.run_until_idle()
        if engine._rt._loop is not None and sleeper.seen == ["started"]:
            return engine, store, sleeper, commit
    raise AssertionError("no crash while the Sleeper's Task was pending")


def test_a_crash_with_pending_tasks_runs_no_handler_code_and_leaves_nothing_to_warn() -> None:
    with nothing_left() as left:
        engine, store, sleeper, _ = _crash_with_pending()
        loop = _loop(engine)
        assert loop.is_closed() and loop.pending_tasks() == []
        assert sleeper.seen == ["started"]  # a killed process runs no except or finally block
        with pytest.raises(RuntimeError, match="crashed .* open its store with a new Engine"):
            engine.run_until_idle()
        with pytest.raises(RuntimeError, match="crashed"):
            engine.client()
        # The store stays usable: a new engine resumes the run to its end.
        flow, again, _ = _flow()
        with Engine([flow], store=store) as resumed:
            resumed.run_until_idle()
            assert again.seen == ["started", "finally"]  # its attempt ran again, to its end
        del engine, loop
    assert left == []


# -- drop ----------------------------------------------------------------------------------------


def test_an_engine_dropped_at_a_breakpoint_is_collected_and_leaves_nothing_to_warn() -> None:
    with nothing_left() as left:
        flow, sleeper, _ = _flow()
        engine = Engine([flow])
        engine.client().start_flow(flow, "flow-1", 1)
        engine.run(until=lambda e: str(e.kind) == "AttemptStarted" and e.step_type == "Fresh")
        assert _loop(engine).pending_tasks()
        dropped, loop = weakref.ref(engine), weakref.ref(_loop(engine))
        del engine
        gc.collect()
        assert dropped() is None and loop() is None
    assert left == []


@pytest.mark.parametrize("seed", range(4))
def test_an_engine_dropped_without_close_is_collected_and_leaves_nothing_to_warn(
    seed: int,
) -> None:
    with nothing_left() as left:
        engine, sleeper, _ = _pending_engine(seed)
        assert "suspended" in _states(engine) and "created" in _states(engine)
        dropped, loop = weakref.ref(engine), weakref.ref(_loop(engine))
        del engine
        gc.collect()
        assert dropped() is None and loop() is None
        # The collector closed the suspended handler (GeneratorExit): its finally block ran.
        assert sleeper.seen == ["started", "finally"]
    assert left == []


class Holding(Step[int]):
    """A handler that keeps the engine it runs in (the engine is then part of a cycle)."""

    def __init__(self) -> None:
        self.engine: Any = None

    async def execute(self, context: Context, n: int) -> StepDecision:  # type: ignore[override]
        engine = self.engine
        await asyncio.sleep(60)
        return dead_end() if engine is not None else dead_end()


class HoldingFanout(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(StepMovement.of(Holding, n), StepMovement.of(Sleeper, n))


@pytest.mark.parametrize("seed", range(4))
def test_an_engine_its_handlers_refer_to_is_still_collected_without_warnings(seed: int) -> None:
    with nothing_left() as left:
        holding = Holding()
        flow = AdHocFlow("Holding", HoldingFanout(), [holding, Sleeper()])
        engine = Engine([flow], seed=seed)
        holding.engine = engine
        engine.client().start_flow(flow, "flow-1", 1)
        engine.step()
        engine.step()
        assert _loop(engine).pending_tasks()
        dropped = weakref.ref(engine)
        del engine, holding, flow
        gc.collect()
        assert dropped() is None
    assert left == []


def test_many_dropped_engines_do_not_accumulate() -> None:
    with nothing_left() as left:
        refs = []
        for seed in range(20):
            engine, _, _ = _pending_engine(seed)
            refs.append(weakref.ref(engine))
            del engine
        gc.collect()
        assert [r for r in refs if r() is not None] == []
    assert left == []


# -- live mode -----------------------------------------------------------------------------------


def test_a_live_engine_has_no_virtual_loop_and_closes_as_before() -> None:
    flow, _, _ = _flow()
    with Engine([flow], mode="live") as engine:
        assert engine._rt._loop is None
    assert engine.closed
    with pytest.raises(RuntimeError, match="this Engine is closed"):
        engine.client()


class Closer(Step[int]):
    """A handler that closes the engine it runs in."""

    def __init__(self) -> None:
        self.engine: Any = None
        self.seen: list[str] = []

    async def execute(self, context: Context, n: int) -> StepDecision:  # type: ignore[override]
        self.engine.close()
        self.seen.append("closed")
        return dead_end()


def test_a_handler_may_close_its_own_engine() -> None:
    with nothing_left() as left:
        closer = Closer()
        flow = AdHocFlow("Closing", closer)
        engine = Engine([flow])
        closer.engine = engine
        engine.client().start_flow(flow, "flow-1", 1)
        engine.run_until_idle()
        assert engine.closed and closer.seen == ["closed"]
        assert engine.result("flow-1").status is FlowStatus.RUNNING  # its result was dropped
        del engine, closer, flow
    assert left == []


CH = Channel("ch", int)


class Publishing(Step[int]):
    """Publishes through a Client from inside its coroutine, then sleeps."""

    def __init__(self) -> None:
        self.engine: Any = None

    async def execute(self, context: Context, n: int) -> StepDecision:  # type: ignore[override]
        self.engine.client().publish("flow-1", CH, n)
        await asyncio.sleep(1)
        return dead_end()


def test_a_crash_inside_a_handler_s_client_call_leaves_the_engine_too() -> None:
    with nothing_left() as left:
        step = Publishing()
        flow = AdHocFlow("Publishing", step, [], [CH])
        # Commit 3 is the handler's publish: asyncio alone would keep the crash as its Task's
        # error, and the engine would go on (the attempt failed, then retried).
        engine = Engine([flow], faults=FaultPlan.of(FaultPlan.crash_after_commit(3)))
        step.engine = engine
        engine.client().start_flow(flow, "flow-1", 1)
        with pytest.raises(EngineCrashed):
            engine.run_until_idle()
        kinds = [str(e.kind) for e in engine.history("flow-1")]
        assert kinds[-1] == "MessagePublished" and "AttemptFailed" not in kinds
        assert engine.closed and _loop(engine).is_closed()
        with pytest.raises(RuntimeError, match="crashed"):
            engine.run_until_idle()
        del engine, step, flow
    assert left == []


def test_close_with_blocked_sync_handlers_is_bounded_names_them_and_lets_the_process_exit() -> None:
    import os
    import subprocess
    import sys
    import time as clock
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    began = clock.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "tests.engine.blocked_close_target"],
        cwd=root, env=env, capture_output=True, text=True, timeout=40,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    closed_s = float(done.stdout.split("closed in ")[1].split(" s")[0])
    assert closed_s < 7.0  # one bound for all 8 handlers, not 5 s each
    assert "8 sync handler(s) still running" in done.stdout
    assert "Stuck.execute" in done.stdout
    assert clock.monotonic() - began < 30.0  # the interpreter exited with the handlers blocked
