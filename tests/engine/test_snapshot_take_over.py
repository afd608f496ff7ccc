"""A snapshot that takes the engine's state over (``engine_state.take_over``) continues alike.

The explorer's bench restores a state, runs one unit and snapshots the result by handing the
engine's objects to the snapshot; the engine is restored before it runs again. Doing that
after every unit must end with the uninterrupted run's history and result, and each handed-over
snapshot must pickle to a copied snapshot's bytes and, restored in a new engine, continue alike.
"""

from __future__ import annotations

import asyncio
import gc
import pickle
from typing import Any

import pytest

from dexviz import AsyncContext, Flow, Step, StepDecision, go_to, graceful_complete
from dexviz.engine import SnapshotError, engine_state
from dexviz.examples.contract_edit import ContractEdit, ContractEditFlow
from tests.engine.flows_a import AdHocFlow
from tests.engine.test_engine_state import _outcome, _start
from tests.engine.test_fast_path import _flows
from tests.engine.test_snapshot_coroutines import _async_flows, _save_fault, _several_flows


def _handed_over_every_unit(flow: Flow[Any], input: Any, seed: int) -> None:
    expected_engine = _start(flow, input, seed)
    engine = _start(flow, input, seed)
    if expected_engine is None or engine is None:
        pytest.skip("the start input is rejected before anything runs")
    expected_engine.run()
    expected = _outcome(expected_engine)
    rt = engine.runtime
    while not engine.is_idle:
        copied = engine.snapshot()
        taken = engine_state.take_over(rt)
        engine.restore(taken)
        assert taken.data == copied.data  # the same state as a copy taken at that point
        fresh = _start(flow, input, seed)
        assert fresh is not None
        fresh.restore(pickle.loads(pickle.dumps(taken)))
        fresh.run()
        assert _outcome(fresh) == expected
        engine.step()
    assert _outcome(engine) == expected


@pytest.mark.parametrize("name", sorted(_flows()))
def test_every_fast_path_flow_continues_identically_when_handed_over(name: str) -> None:
    flow, input = _flows()[name]
    _handed_over_every_unit(flow, input, 7)


def test_the_seed_flow_continues_identically_when_handed_over() -> None:
    _handed_over_every_unit(ContractEditFlow(), [ContractEdit(f"r{i}") for i in range(3)], 3)


class Lingers(Step[int]):
    """Heartbeats in a ``finally``: that runs again when a dropped Task's coroutine is closed."""

    async def execute(self, context: AsyncContext, n: int) -> StepDecision:  # type: ignore[override]
        try:
            await asyncio.sleep(1)
            await asyncio.sleep(0.5)
        finally:
            await context.heartbeat(n + 100)
        return go_to(Lingers, n + 1) if n < 2 else graceful_complete(n)


def _coroutine_flows() -> dict[str, tuple[Flow[Any], Any]]:
    return {
        **_async_flows(),
        **_several_flows(),
        "lingers": (AdHocFlow("SnapLingers", Lingers()), 0),
    }


def _handed_over_with_coroutines(flow: Flow[Any], input: Any, seed: int, faults: Any) -> int:
    """Hand the state over after every unit; restore each such snapshot twice, run it out.

    The Tasks of the state handed over are dropped by the restore and closed by the garbage
    collector (``gc.collect``): the snapshot's bytes must stay a copy's, and both restores
    end as the uninterrupted run. Returns how many states had coroutines in flight.
    """
    expected_engine = _start(flow, input, seed, faults())
    engine = _start(flow, input, seed, faults())
    assert expected_engine is not None and engine is not None
    expected_engine.run()
    expected = _outcome(expected_engine)
    rt, in_flight = engine.runtime, 0
    gc.freeze()  # what the test process holds already: each collection sees only new objects
    try:
        while not engine.is_idle:
            in_flight += _hand_over(engine, rt, expected)
    finally:
        gc.unfreeze()
    return in_flight


def _hand_over(engine: Any, rt: Any, expected: tuple[str, str]) -> int:
    """Hand the state over now, restore it twice and run it out, then step; 1 if in flight."""
    try:
        copied = engine.snapshot()
    except SnapshotError:
        with pytest.raises(SnapshotError):
            engine_state.take_over(rt)
        engine.step()
        return 0
    taken = engine_state.take_over(rt)
    assert taken._state is not None
    for _ in range(2):
        engine.restore(taken)
        gc.collect()  # the Tasks the restore dropped are closed now
        assert taken.data == copied.data
        engine.run()
        assert _outcome(engine) == expected
    engine.restore(copied)
    engine.step()
    return int(bool(taken._state.coroutines))


@pytest.mark.parametrize("name", sorted(_coroutine_flows()))
def test_a_state_with_coroutines_in_flight_handed_over_restores_as_a_copy(name: str) -> None:
    flow, input = _coroutine_flows()[name]
    assert _handed_over_with_coroutines(flow, input, 5, lambda: None) > 0


def test_the_seed_flow_with_a_save_fault_handed_over_restores_as_a_copy() -> None:
    edits = [ContractEdit(f"r{i}", should_withdraw=i == 0) for i in range(3)]
    assert _handed_over_with_coroutines(ContractEditFlow(), edits, 3, _save_fault) > 4
