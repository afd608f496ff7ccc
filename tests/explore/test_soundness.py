"""The reduction is sound: on each small Flow, "dpor" reaches exactly the terminal states of "dfs".

"dfs" runs every schedule; "dpor" runs one per class of equivalent schedules. If a footprint
missed a dependency, "dpor" would skip a class and miss its terminal state — the comparison
below is what caught the reads a step makes without committing (a Wait checked by a timer, a
canceled coroutine), so keep it covering racing timers, waiters, actions and faults.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dexviz.engine.core.choice import FaultBudget
from dexviz.examples.contract_edit import (
    CONTRACT_EDIT_TOKEN,
    ContractEdit,
    ContractEditFlow,
    SaveContractEdit,
)
from dexviz.examples.contract_edit_broken import BrokenContractEditFlow
from dexviz.explore import Action, explore
from tests.explore.flows import (
    ACTIONS,
    CASES,
    Case,
    ClientFlow,
    FanFlow,
    RaceFlow,
    Tick,
    TimerRaceFlow,
)

SOUNDNESS_CASES = [c for c in CASES if c.name != "broken-contract-2"]
MAX_SCHEDULES = 20_000
"""Every exploration here is bounded; the largest fixed case needs 8,458 schedules."""
GENERATED_MAX_SCHEDULES = 2_000
"""A generated draw needing more is discarded (``assume``): its comparison would be partial."""


def _explore(  # type: ignore[no-untyped-def]
    case: Case, strategy: str, prune: bool = True, bound: int = MAX_SCHEDULES
):
    return explore(
        case.flow, case.input, check=[], actions=case.actions, faults=case.faults,
        strategy=strategy, progress=False, prune=prune, max_schedules=bound,
    )


def _compare_bounded(case: Case) -> None:
    every = _explore(case, "dfs", bound=GENERATED_MAX_SCHEDULES)
    assume(every.exhaustive)
    reduced = _explore(case, "dpor", bound=GENERATED_MAX_SCHEDULES)
    assert reduced.exhaustive
    assert reduced.terminal_states == every.terminal_states


def test_at_least_ten_flows_are_compared() -> None:
    assert len(SOUNDNESS_CASES) >= 10


@pytest.mark.parametrize("case", SOUNDNESS_CASES, ids=lambda c: c.name)
def test_dpor_reaches_the_terminal_states_of_dfs(case: Case) -> None:
    every = _explore(case, "dfs")
    reduced = _explore(case, "dpor")
    assert every.exhaustive and reduced.exhaustive
    assert reduced.terminal_states == every.terminal_states
    assert reduced.schedules <= every.schedules


def test_dpor_runs_fewer_schedules_where_units_commute() -> None:
    case = next(c for c in CASES if c.name == "contract-2-save-fails")
    every, reduced = _explore(case, "dfs"), _explore(case, "dpor")
    assert every.exhaustive and reduced.exhaustive
    assert reduced.schedules * 5 < every.schedules
    assert reduced.pruned > 0 and every.pruned == 0


reviewer = st.builds(
    ContractEdit,
    reviewer=st.sampled_from(["a", "b"]),
    should_fail_handoff=st.booleans(),
    should_fail_edit=st.booleans(),
    should_withdraw=st.booleans(),
)
generated = st.one_of(
    st.builds(Case, st.just("fan"), st.just(FanFlow()), st.integers(1, 3)),
    st.builds(Case, st.just("race"), st.just(RaceFlow()), st.integers(0, 3)),
    st.builds(Case, st.just("timer"), st.just(TimerRaceFlow()), st.integers(0, 2)),
    st.builds(
        Case, st.just("contract"), st.just(ContractEditFlow()), st.lists(reviewer, max_size=2),
        faults=st.sampled_from([None, FaultBudget.of(SaveContractEdit, count=1)]),
    ),
    st.builds(
        Case, st.just("client"), st.just(ClientFlow()), st.just("t"),
        actions=st.lists(st.sampled_from(ACTIONS), max_size=2, unique=True).map(tuple),
    ),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(generated)
def test_dpor_matches_dfs_on_generated_flows(case: Case) -> None:
    _compare_bounded(case)


@pytest.mark.parametrize("prune", [True, False], ids=["prune", "no-prune"])
def test_dpor_reaches_the_terminal_states_of_dfs_with_an_action_and_a_fault(prune: bool) -> None:
    # A step that makes a fault choice while it runs must still backtrack at its ready
    # choice: here the client's token has to move before EditContract-1's publish and the
    # SaveContractEdit attempt that may fail (2 of the 20 terminal states were missed).
    case = Case(
        "broken-handoff-extra-token-save-fails", BrokenContractEditFlow(),
        [ContractEdit("a", should_fail_handoff=True), ContractEdit("a")],
        actions=(Action.publish(CONTRACT_EDIT_TOKEN, "x"),),
        faults=FaultBudget.of(SaveContractEdit, count=1),
    )
    # dfs with pruning (649 schedules) reaches the same 20 states as without (8,458).
    every, reduced = _explore(case, "dfs"), _explore(case, "dpor", prune)
    assert every.exhaustive and reduced.exhaustive
    assert len(every.terminal_states) == 20
    assert reduced.terminal_states == every.terminal_states
    assert reduced.schedules < every.schedules


CONTRACT_ACTIONS = (Action.publish(CONTRACT_EDIT_TOKEN, "x"), Action.stop_flow())
clients_and_faults = st.one_of(
    st.builds(
        Case, st.just("contract-client-fault"),
        st.sampled_from([ContractEditFlow(), BrokenContractEditFlow()]),
        st.lists(reviewer, min_size=1, max_size=2),
        # One action: two with two reviewers take dfs ~20 s per example.
        actions=st.sampled_from(CONTRACT_ACTIONS).map(lambda action: (action,)),
        faults=st.just(FaultBudget.of(SaveContractEdit, count=1)),
    ),
    st.builds(
        Case, st.just("client-fault"), st.just(ClientFlow()), st.just("t"),
        actions=st.lists(st.sampled_from(ACTIONS), min_size=1, max_size=2, unique=True).map(tuple),
        faults=st.just(FaultBudget.of(Tick, count=1)),
    ),
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clients_and_faults)
def test_dpor_matches_dfs_with_client_actions_and_a_fault_budget(case: Case) -> None:
    # Client actions and budgeted faults together: a step's fault choice must not hide the
    # ready choice its races backtrack to. Bounded: an exploding draw is discarded, not run
    # for an hour.
    _compare_bounded(case)
