"""A snapshot that takes the engine's state over (``engine_state.take_over``) continues alike.

The explorer's bench restores a state, runs one unit and snapshots the result by handing the
engine's objects to the snapshot; the engine is restored before it runs again. Doing that
after every unit must end with the uninterrupted run's history and result, and each handed-over
snapshot must pickle to a copied snapshot's bytes and, restored in a new engine, continue alike.
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from dexviz import Flow
from dexviz.engine import engine_state
from dexviz.examples.contract_edit import ContractEdit, ContractEditFlow
from tests.engine.test_engine_state import _outcome, _start
from tests.engine.test_fast_path import _flows


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
