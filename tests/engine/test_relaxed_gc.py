"""Engine.run pauses the cyclic collector while it drives units, and leaves it working after.

A run keeps its history and state, so the collector has nothing to find while units run and is
paused then; afterwards it must collect as before, or every engine a notebook or an explorer
throws away (an engine holds reference cycles) would stay in memory.
"""

from __future__ import annotations

import gc

from dexviz import Context, Engine, Flow, Step, StepDecision, StepList, go_to, graceful_complete
from dexviz.engine.runtime import Runtime


class Count(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to(Count, n + 1) if n < 9 else graceful_complete(n)


class Counting(Flow[int]):
    def get_steps(self) -> StepList[int]:
        return StepList.start_step(Count())


def _live_runtimes() -> int:
    return sum(1 for o in gc.get_objects() if type(o) is Runtime)


def test_the_collector_is_paused_during_a_run_and_enabled_after() -> None:
    seen: list[bool] = []

    class Watch(Step[int]):
        def execute(self, context: Context, n: int) -> StepDecision:
            seen.append(gc.isenabled())
            return graceful_complete(n)

    class Watched(Flow[int]):
        def get_steps(self) -> StepList[int]:
            return StepList.start_step(Watch())

    flow = Watched()
    engine = Engine([flow], seed=0)
    engine.client().start_flow(flow, "w", 1)
    assert gc.isenabled()
    engine.run_until_idle()
    assert seen == [False]
    assert gc.isenabled()


def test_dropped_engines_are_collected_without_an_explicit_collect() -> None:
    gc.collect()
    before = _live_runtimes()
    for seed in range(300):
        flow = Counting()
        engine = Engine([flow], seed=seed)
        client = engine.client()
        for i in range(30):
            client.start_flow(flow, f"c{i}", 0)
        engine.run_until_idle()
        del engine, client, flow
    # The collector's own schedule (no gc.collect here) must have freed most of them.
    assert _live_runtimes() - before < 30


def test_dropped_large_engines_wait_for_at_most_the_promotion_budget() -> None:
    from dexviz.history import collector

    gc.collect()
    before = _live_runtimes()
    most = 0
    for seed in range(40):
        flow = Counting()
        engine = Engine([flow], seed=seed)
        client = engine.client()
        for i in range(600):  # ~32 k lasting objects: each run's batch is promoted
            client.start_flow(flow, f"c{i}", 0)
        engine.run_until_idle()
        del engine, client, flow
        most = max(most, _live_runtimes() - before)
    # Each run leaves ~32 k objects; the budget lets at most that many wait for a full pass.
    assert most <= collector.PROMOTION_BUDGET // 30_000 + 1
