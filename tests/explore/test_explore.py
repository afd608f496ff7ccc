"""dexviz.explore end to end: proofs, counterexamples, replay, strategies, bounds and bad input."""

from __future__ import annotations

from typing import Any

import pytest

import dexviz
from dexviz import (
    Context,
    Flow,
    FlowStatus,
    History,
    Step,
    StepDecision,
    StepList,
    StepMovement,
    dead_end,
    go_to_many,
)
from dexviz.engine.core.choice import FaultBudget
from dexviz.examples.contract_edit import (
    CONTRACT_EDIT_TOKEN,
    ContractEdit,
    ContractEditFlow,
    SaveContractEdit,
)
from dexviz.examples.contract_edit_broken import BrokenContractEditFlow
from dexviz.explore import (
    Action,
    ExplorationReport,
    NondeterminismError,
    ViolationRun,
    checks,
    explore,
)
from tests.explore.flows import GO, ClientFlow, RaceFlow

TOKEN = "contractEditToken"
SEED_CHECKS = [checks.exclusive(TOKEN), checks.conserved(TOKEN), checks.terminates()]


def edits(count: int, withdraw: int = 0) -> list[ContractEdit]:
    return [ContractEdit(f"r{i}", should_withdraw=i == withdraw) for i in range(1, count + 1)]


def test_contract_edit_is_proven_for_three_reviewers_with_a_failing_save() -> None:
    report = explore(
        ContractEditFlow(), edits(3, withdraw=3), check=SEED_CHECKS,
        faults=FaultBudget.of(SaveContractEdit, count=1), progress=False,
    )
    assert report.proven and report.exhaustive and report.ok
    # 3 entry orders of the two savers and the withdrawer, times where the failure lands.
    assert len(report.terminal_states) == 18
    assert report.pruned > 0
    assert "PROVEN" in str(report)


def test_the_broken_variant_gives_a_shrunk_counterexample_that_replays() -> None:
    report = explore(BrokenContractEditFlow(), edits(2), check=SEED_CHECKS, progress=False)
    assert not report.ok and not report.exhaustive
    assert report.stopped_by == "violation"
    violation = report.violations[0]
    assert violation.check == f"exclusive({TOKEN})"
    assert "inside the 'contractEditToken' section at once" in violation.message
    assert len(violation.steps) <= violation.found_after
    run = violation.replay()
    assert isinstance(run, ViolationRun)
    assert run.history[-1].seq >= run.violating_seq
    violating = [e for e in run.history if e.seq == run.violating_seq]
    assert violating and violating[0].step_type == "EditContract"
    again = violation.replay()
    assert again.history.to_jsonl() == run.history.to_jsonl()


def test_the_replayed_counterexample_opens_in_the_debugger_at_the_violating_commit() -> None:
    report = explore(BrokenContractEditFlow(), edits(2), check=SEED_CHECKS, progress=False)
    run = report.violations[0].replay()
    debugger = run.debugger()
    # After the violating commit (its effects visible), with the checked Channel's lane.
    assert run.violating_last_seq is not None and run.violating_last_seq >= run.violating_seq
    assert debugger.event.seq == run.violating_last_seq
    assert debugger.token_channel == TOKEN
    assert run.debugger(token_channel=None).token_channel is None
    assert len(debugger.breakpoints) == 1
    bundle = run._repr_mimebundle_()
    assert bundle["text/plain"].startswith("ViolationRun(")
    assert f"#{run.violating_seq}" in bundle["text/html"]


def test_conserved_catches_a_second_token_from_a_client() -> None:
    report = explore(
        ContractEditFlow(), edits(1), check=[checks.conserved(TOKEN)],
        actions=[Action.publish(CONTRACT_EDIT_TOKEN, "extra")], progress=False,
    )
    assert report.violations[0].check == f"conserved({TOKEN}, count=1)"
    assert "2 messages" in report.violations[0].message


def test_terminates_and_status_catch_a_stall_and_a_stop() -> None:
    stalled = explore(ClientFlow(), "t", check=[checks.terminates()], progress=False)
    assert "stalled with work left" in stalled.violations[0].message
    stopped = explore(
        ClientFlow(), "t", check=[checks.status(FlowStatus.COMPLETED)],
        actions=[Action.publish(GO, "x"), Action.stop_flow()], progress=False,
    )
    assert "expected COMPLETED" in stopped.violations[0].message


def test_a_plain_callable_is_a_check() -> None:
    def short(history: History, state: Any) -> bool:
        return len(history) < 8

    report = explore(RaceFlow(), 1, check=short, progress=False)
    assert report.violations[0].check == "short"
    assert report.violations[0].message == "short does not hold"


@pytest.mark.parametrize("strategy", ["pct", "random"])
def test_sampling_strategies_find_the_broken_variant(strategy: str) -> None:
    report = explore(
        BrokenContractEditFlow(), edits(2), check=SEED_CHECKS, strategy=strategy,
        max_schedules=20, progress=False,
    )
    assert not report.ok and not report.exhaustive
    if strategy == "pct":
        assert report.bound is not None and "probability >=" in str(report.bound)


def test_random_walks_are_seeded() -> None:
    def run(seed: int) -> frozenset[str]:
        return explore(RaceFlow(), 2, check=[], strategy="random", max_schedules=5, seed=seed,
                       progress=False).terminal_states

    assert run(1) == run(1)


def test_limits_make_a_search_partial() -> None:
    flow, input = ContractEditFlow(), edits(3)
    capped = explore(flow, input, check=SEED_CHECKS, strategy="dfs", max_schedules=3,
                     progress=False)
    assert capped.schedules == 3 and not capped.exhaustive and capped.stopped_by == "max_schedules"
    shallow = explore(flow, input, check=SEED_CHECKS, max_depth=5, progress=False)
    assert shallow.depth_bounded > 0 and shallow.exhaustive and not shallow.proven
    assert "not a proof" in shallow.verdict()
    timed = explore(flow, input, check=SEED_CHECKS, strategy="dfs", time_budget=0.0,
                    progress=False)
    assert timed.schedules == 1 and timed.stopped_by == "time_budget"


def test_report_shows_counts_and_the_state_graph() -> None:
    report = explore(BrokenContractEditFlow(), edits(2), check=SEED_CHECKS, progress=False)
    assert isinstance(report, ExplorationReport)
    html = report._repr_html_()
    assert "schedules" in html and "VIOLATED" in html
    assert report.graph is not None
    dot = report.graph.to_dot()
    assert '#d64545' in dot and dot.startswith("digraph states {")
    assert repr(report).startswith("ExplorationReport(strategy='dpor', schedules=1,")


def test_dexviz_explore_is_callable_as_a_package_attribute() -> None:
    report = dexviz.explore(RaceFlow(), 1, check=[], progress=False)
    assert report.exhaustive


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"strategy": "bfs"}, ValueError, "strategy must be one of"),
        ({"check": 3}, TypeError, "a check is a callable"),
        ({"faults": "SaveContractEdit"}, TypeError, "faults takes a FaultBudget"),
        ({"actions": ["publish"]}, TypeError, "actions take Action values"),
        ({"max_depth": 0}, ValueError, "max_depth must be >= 1"),
        ({"max_schedules": 0}, ValueError, "max_schedules must be >= 1"),
    ],
)
def test_bad_arguments_are_rejected_with_a_clear_error(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    arguments: dict[str, Any] = {"check": [], "progress": False, **kwargs}
    with pytest.raises(error, match=message):
        explore(RaceFlow(), 1, **arguments)


def test_builtin_checks_reject_bad_input() -> None:
    with pytest.raises(ValueError, match="count must be >= 0"):
        checks.conserved(TOKEN, count=-1)
    with pytest.raises(TypeError, match="takes a FlowStatus"):
        checks.status("COMPLETED")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="a Channel or its name"):
        checks.exclusive(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="count must be >= 1"):
        Action.publish(TOKEN, "x", count=0)


CALLS: list[int] = []


class Moody(Step[int]):
    """Starts one more branch each time it runs: a handler with memory outside the engine."""

    def execute(self, context: Context, n: int) -> StepDecision:
        CALLS.append(n)
        return go_to_many(*[StepMovement.of(Rest, i) for i in range(len(CALLS) + 1)])


class Rest(Step[int]):
    """Ends its branch."""

    def execute(self, context: Context, i: int) -> StepDecision:
        return dead_end()


class MoodyFlow(Flow[int]):
    """Not deterministic: replaying a prefix meets other options."""

    def get_steps(self) -> StepList[int]:
        return StepList.start_step(Moody()).other_steps(Rest())


def test_a_flow_that_is_not_deterministic_is_reported_not_explored_wrongly() -> None:
    CALLS.clear()
    with pytest.raises(NondeterminismError, match="depends on something outside the engine"):
        explore(MoodyFlow(), 0, check=[], strategy="dfs", progress=False)


def test_a_client_call_is_tried_before_later_timers_not_only_at_the_end() -> None:
    # The action is ready at every instant: the time barrier must not hide its races.
    report = explore(
        ContractEditFlow(), edits(2), check=[checks.exclusive(TOKEN)],
        actions=[Action.publish(CONTRACT_EDIT_TOKEN, "extra")], progress=False,
    )
    assert report.violations and report.violations[0].check == f"exclusive({TOKEN})"
