"""The benchmarks' Dex floor records what dexviz records for the same Flows (benchmarks/README.md).

``make bench`` prints the floor beside dexviz as the cost of Dex's events without checks; that
comparison only means something if the floor does the same work: the same events, of the same
kinds, in the same numbers, for the chains and the token hand-off, and the same outcome.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import dexviz

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
KINDS = {
    0: "AttemptStarted",
    1: "StepWaitForCompleted",
    2: "WaitSatisfied",
    3: "MessageConsumed",
    4: "StepExecuteCompleted",
    5: "MessagePublished",
    6: "StepExecutionCreated",
}


@pytest.fixture
def modules() -> Iterator[tuple[Any, Any]]:
    """``floor_engine`` and ``_flows`` from benchmarks/, with their module state restored."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import _flows  # type: ignore[import-not-found]
        import floor_engine  # type: ignore[import-not-found]

        rounds = (_flows.ROUNDS, floor_engine.ROUNDS)
        yield floor_engine, _flows
        _flows.ROUNDS, floor_engine.ROUNDS = rounds
    finally:
        sys.path.remove(str(BENCHMARKS))


def _dexviz_kinds(flow: dexviz.Flow[int], input: int, seed: int) -> Counter[str]:
    engine = dexviz.Engine([flow], seed=seed)
    engine.client().start_flow(flow, "f", input)
    engine.run_until_idle()
    kinds = Counter(str(event.kind) for event in engine.history("f"))
    # The floor records no Flow start, completion request or close: one each per Flow, not
    # per transition, so they do not change what a transition costs.
    for flow_level in ("FlowStartedOrContinued", "CompletionRequested", "FlowClosed"):
        kinds.pop(flow_level, None)
    return kinds


def _floor_kinds(floor: Any, step: type, input: int, seed: int) -> Counter[str]:
    engine = floor.FloorEngine(seed=seed)
    run = engine.start("f", step, input)
    engine.run()
    return Counter(KINDS[event[2]] for event in run.history)


@pytest.mark.parametrize("seed", [1, 7])
@pytest.mark.parametrize(("contenders", "rounds"), [(1, 3), (2, 3), (5, 2)])
def test_floor_hand_off_records_dexviz_events(
    modules: tuple[Any, Any], contenders: int, rounds: int, seed: int
) -> None:
    floor, flows = modules
    flows.ROUNDS = floor.ROUNDS = rounds
    mine = _dexviz_kinds(flows.Handoff(), contenders, seed)
    theirs = _floor_kinds(floor, floor.Contend, contenders, seed)
    assert theirs == mine
    assert theirs["MessageConsumed"] == contenders * rounds  # every hand-off happened


@pytest.mark.parametrize("seed", [1, 7])
def test_floor_chain_records_dexviz_events(
    modules: tuple[Any, Any], seed: int
) -> None:
    floor, flows = modules
    mine = _dexviz_kinds(flows.Chain(), 0, seed)
    theirs = _floor_kinds(floor, floor.Link, 0, seed)
    assert theirs == mine
    assert theirs["StepExecuteCompleted"] == floor.CHAIN_LENGTH
