"""State pruning is sound: with and without it, a search finds the same violations and states.

``prune=True`` stops a schedule at a state already explored. Each case below is explored to
the end (``max_violations`` out of reach) both ways, by ``"dfs"`` and by ``"dpor"``, and must
give the same set of distinct violations (check and message) and the same terminal states;
the cases cover timers, Attribute locks, two Channels, client actions and injected failures.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from dexviz import (
    AsyncContext,
    Attribute,
    Context,
    Flow,
    FlowStatus,
    PersistenceSchema,
    Step,
    StepDecision,
    StepList,
    StepMovement,
    StepOptions,
    dead_end,
    go_to_many,
    graceful_complete,
)
from dexviz.engine.core.choice import FaultBudget
from dexviz.examples.contract_edit import (
    CONTRACT_EDIT_TOKEN,
    ContractEdit,
    ContractEditFlow,
    SaveContractEdit,
)
from dexviz.examples.contract_edit_broken import BrokenContractEditFlow
from dexviz.explore import Action, ExplorationReport, checks, explore
from tests.explore.flows import ACTIONS, CASES, Case, ClientFlow
from tests.explore.test_soundness import generated

TOKEN = CONTRACT_EDIT_TOKEN.name
ALL = 10**9
"""A max_violations no search reaches: every violating schedule is kept."""
COUNT = Attribute("count", int)


class Spread(Step[int]):
    """Start ``n`` adders."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(*[StepMovement.of(Add, n) for _ in range(n)])


class Add(Step[int]):
    """Add one to the count under its lock, sleeping in between; the last one completes."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_lock_attributes=(COUNT.lock(),))

    async def execute(  # type: ignore[override]
        self, context: AsyncContext, n: int
    ) -> StepDecision:
        seen = COUNT.get(context) or 0
        await asyncio.sleep(1)
        COUNT.set(context, seen + 1)
        return graceful_complete(seen + 1) if seen + 1 == n else dead_end()


class CounterFlow(Flow[int]):
    """Adders that take turns with an Attribute lock held across a coroutine's sleep."""

    def get_steps(self) -> StepList[int]:
        return StepList.start_step(Spread()).other_steps(Add())

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(COUNT)


LOCKED = Case("locked-counter-3", CounterFlow(), 3)


def _reviewers(count: int) -> list[ContractEdit]:
    return [ContractEdit(f"r{i}", should_withdraw=i == count) for i in range(1, count + 1)]


MORE = (
    LOCKED,
    Case("broken-contract-3", BrokenContractEditFlow(), _reviewers(3)),
    Case("contract-2-failing-exits", ContractEditFlow(),
         [ContractEdit("a", should_fail_edit=True), ContractEdit("b", should_fail_handoff=True)],
         faults=FaultBudget.of(SaveContractEdit, count=1)),
    Case("client-three-actions", ClientFlow(), "t", actions=ACTIONS[:3]),
)
"""Bigger cases than the shared ones: three reviewers, every exit of the section, three calls."""


def _checks(case: Case) -> list[Any]:
    found: list[Any] = [checks.terminates(), checks.status(FlowStatus.COMPLETED)]
    if case.name.startswith(("contract", "broken")):
        found += [checks.exclusive(TOKEN), checks.conserved(TOKEN)]
    return found


def _explore(case: Case, strategy: str, prune: bool, **options: Any) -> ExplorationReport:
    return explore(
        case.flow, case.input, check=_checks(case), actions=case.actions, faults=case.faults,
        strategy=strategy, prune=prune, max_violations=ALL, progress=False, **options,
    )


def _violations(report: ExplorationReport) -> set[tuple[str, str]]:
    return {(v.check, v.message) for v in report.violations}


def _same(case: Case, strategy: str) -> tuple[ExplorationReport, ExplorationReport]:
    every = _explore(case, strategy, prune=False)
    pruned = _explore(case, strategy, prune=True)
    assert every.exhaustive and pruned.exhaustive
    assert _violations(pruned) == _violations(every)
    assert pruned.terminal_states == every.terminal_states
    if strategy == "dfs":
        # dpor may run a few more: a pruned state's summary gives back options conservatively.
        assert pruned.schedules <= every.schedules
    assert every.states_pruned is None and pruned.states_pruned is not None
    return every, pruned


PAIRS = [
    pytest.param(case, strategy, id=f"{case.name}-{strategy}")
    for case in (*CASES, *MORE)
    for strategy in ("dfs", "dpor")
    # Every violating schedule of three broken reviewers: tens of seconds without reduction.
    if (case.name, strategy) != ("broken-contract-3", "dfs")
]


@pytest.mark.parametrize(("case", "strategy"), PAIRS)
def test_pruning_finds_the_same_violations_and_terminal_states(case: Case, strategy: str) -> None:
    _same(case, strategy)


def test_states_with_a_lock_and_a_timer_behind_them_are_pruned() -> None:
    # The lock's queue fixes the order once every adder has asked for it: what is left below
    # a pruned state is one path, so schedules stop earlier but are not fewer.
    every, pruned = _same(LOCKED, "dfs")
    assert pruned.states_pruned and pruned.schedules == every.schedules


def test_the_cases_have_violations_to_compare() -> None:
    violated = [c.name for c in CASES if _violations(_explore(c, "dpor", prune=False))]
    assert {"broken-contract-2", "contract-1-extra-token", "client-publish-stop"} <= set(violated)


def test_pruning_cuts_the_contract_edit_search_with_three_reviewers() -> None:
    case = Case("contract-3-save-fails", ContractEditFlow(), _reviewers(3),
                faults=FaultBudget.of(SaveContractEdit, count=1))
    every, pruned = _same(case, "dpor")
    # 217 schedules without pruning, 63 with it (40 of them stopped at an explored state).
    assert pruned.schedules * 3 < every.schedules
    assert pruned.states_pruned is not None and pruned.states_pruned > 0
    assert len(pruned.terminal_states) == 18 and pruned.proven


def test_pruning_cuts_dfs_on_two_reviewers() -> None:
    case = next(c for c in CASES if c.name == "contract-2-save-fails")
    every, pruned = _same(case, "dfs")
    assert pruned.schedules * 2 < every.schedules


def test_a_plain_callable_check_turns_pruning_off() -> None:
    # It reads the whole history, which no state describes: no state may be skipped.
    def short(history: Any, state: Any) -> bool:
        return len(history) < 1000

    report = explore(ContractEditFlow(), _reviewers(2), check=[short], strategy="dfs",
                     progress=False)
    assert report.states_pruned == 0
    assert report.schedules == explore(ContractEditFlow(), _reviewers(2), check=[short],
                                       strategy="dfs", prune=False, progress=False).schedules


def test_a_counterexample_found_with_pruning_replays() -> None:
    report = explore(
        ContractEditFlow(), _reviewers(2), check=[checks.exclusive(TOKEN)],
        actions=[Action.publish(CONTRACT_EDIT_TOKEN, "extra")], progress=False,
    )
    violation = report.violations[0]
    run = violation.replay()
    again = [e for e in run.history if e.seq == run.violating_seq]
    assert again and violation.check == f"exclusive({TOKEN})"


def test_sampling_strategies_do_not_prune() -> None:
    report = explore(ContractEditFlow(), _reviewers(2), check=[], strategy="random",
                     max_schedules=5, progress=False)
    assert report.states_pruned is None and "state pruning" not in report.counts()


def test_counts_use_the_right_plurals() -> None:
    case = next(c for c in CASES if c.name == "race-1")
    report = _explore(case, "dpor", prune=True)
    text = report.counts()
    assert text.startswith(f"{report.schedules} schedule")
    assert "(s)" not in text and " 1 states" not in text and " 1 schedules" not in text


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(generated)
def test_pruning_is_sound_on_generated_flows(case: Case) -> None:
    for strategy in ("dfs", "dpor"):
        every = _explore(case, strategy, prune=False)
        pruned = _explore(case, strategy, prune=True)
        assert _violations(pruned) == _violations(every)
        assert pruned.terminal_states == every.terminal_states


@pytest.mark.parametrize("strategy", ["dfs", "dpor"])
@pytest.mark.parametrize(("name", "depth"), [("contract-2-save-fails", 28), ("tick-fails", 6)])
def test_a_state_explored_with_a_depth_cut_is_pruned_only_as_deep(
    strategy: str, name: str, depth: int
) -> None:
    # Reached at a smaller step number, a state may be explored further than its first visit.
    case = next(c for c in CASES if c.name == name)
    every = _explore(case, strategy, prune=False, max_depth=depth)
    pruned = _explore(case, strategy, prune=True, max_depth=depth)
    assert every.depth_bounded and pruned.depth_bounded and pruned.states_pruned
    assert 0 < len(every.terminal_states) < len(_explore(case, strategy, prune=False)
                                                  .terminal_states)
    assert _violations(pruned) == _violations(every)
    assert pruned.terminal_states == every.terminal_states
