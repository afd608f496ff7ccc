"""Liveness: every fair run closes, or a lasso (prefix + loop) shows one that never does.

The two livelock examples are caught with a lasso that replays concretely and comes back to
the same state; the seed Flow is proven live; a Flow whose only cycle is unfair (a ready unit
never gets its turn on it) is proven live because fairness rules the cycle out; a stall is
reported as ``terminates()`` reports it; a bounded search says it is inconclusive.
"""

from __future__ import annotations

import asyncio

import pytest

from dexviz import (
    AsyncContext,
    Channel,
    Context,
    EventKind,
    Flow,
    FlowState,
    FlowStatus,
    PersistenceSchema,
    Step,
    StepDecision,
    StepList,
    StepMovement,
    TimerId,
    Wait,
    force_complete,
    go_to,
    go_to_many,
)
from dexviz.engine.core.choice import FaultBudget
from dexviz.examples.contract_edit import ContractEditFlow, SaveContractEdit, sample_edits
from dexviz.examples.livelock_rally import RallyFlow
from dexviz.examples.livelock_retry import APPROVAL, ApprovalFlow
from dexviz.explore import Action, checks, explore
from dexviz.explore.liveness import LivenessReport, explore_liveness, loop_keys

NEVER = Channel("never", str)


class Begin(Step[None]):
    def execute(self, context: Context, nothing: None) -> StepDecision:
        return go_to_many(StepMovement.of(Spin), StepMovement.of(Stop))


class Spin(Step[None]):
    """Goes to itself at once, forever: a cycle that never lets Stop run is unfair."""

    def execute(self, context: Context, nothing: None) -> StepDecision:
        return go_to(Spin)


class Stop(Step[None]):
    def execute(self, context: Context, nothing: None) -> StepDecision:
        return force_complete("stopped")


class SpinUntilStoppedFlow(Flow[None]):
    """Live only under fairness: Stop, ready all along, eventually runs and closes the Flow."""

    def get_steps(self) -> StepList[None]:
        return StepList.start_step(Begin()).other_steps(Spin(), Stop())


class AwaitNever(Step[None]):
    def wait_for(self, context: Context, nothing: None) -> Wait:
        return Wait.until(NEVER.for_one())

    def execute(self, context: Context, nothing: None) -> StepDecision:
        return force_complete("never")


class StallFlow(Flow[None]):
    """Waits for a message nothing publishes: the run stops open."""

    def get_steps(self) -> StepList[None]:
        return StepList.start_step(AwaitNever())

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(NEVER)


class Tick(Step[None]):
    async def execute(self, context: AsyncContext, nothing: None) -> StepDecision:  # type: ignore[override]
        while True:
            await asyncio.sleep(1)


class CoroutineForeverFlow(Flow[None]):
    """A handler coroutine that never returns: no state of it can be keyed."""

    def get_steps(self) -> StepList[None]:
        return StepList.start_step(Tick())


def _lasso_report(report: LivenessReport) -> None:
    assert not report.ok and report.exhaustive
    (violation,) = report.violations
    assert violation.check == "eventually_closes()"
    assert violation.lasso is not None and violation.lasso.loop
    keys = loop_keys(violation)
    assert len(keys) == 3 and keys[0] is not None and len(set(keys)) == 1


def test_a_token_handed_back_and_forth_on_a_timer_forever_is_a_lasso() -> None:
    report = explore_liveness(RallyFlow(), 0)
    _lasso_report(report)
    lasso = report.violations[0].lasso
    assert lasso is not None
    assert len(lasso.prefix) == 4 and len(lasso.loop) == 6  # a round: Pong's hit, Ping's hit
    assert "Pong-1 wait_for" in lasso.loop[0]
    text = str(report.violations[0])
    assert "prefix 4 steps / loop 6 steps" in text and "  loop:" in text


def test_a_step_rescheduling_itself_for_a_message_that_never_comes_is_a_lasso() -> None:
    report = explore_liveness(ApprovalFlow(), "contract.pdf")
    _lasso_report(report)
    lasso = report.violations[0].lasso
    assert lasso is not None
    # Both Steps get their turn on the loop: it is fair, not a starved schedule.
    assert any("AwaitApproval" in step for step in lasso.loop)
    assert any("KeepAlive" in step for step in lasso.loop)


def test_a_client_action_that_can_always_land_eventually_does() -> None:
    approver = Action.publish(APPROVAL, "ok")
    report = explore_liveness(ApprovalFlow(), "contract.pdf", actions=[approver])
    assert report.proven
    assert report.liveness is not None and report.liveness.unfair_cycles == 1


def test_an_action_naming_an_execution_by_id_keeps_ids_in_the_state() -> None:
    # skip_timer("Ping-1") does something only to Ping-1: renumbered states differ for it, so
    # the loop is never closed and the search stays inconclusive instead of merging them.
    skip = Action.skip_timer("Ping-1", TimerId.by_condition_index(1))
    report = explore_liveness(RallyFlow(), 0, actions=[skip], max_states=60)
    assert report.ok and not report.proven
    assert report.liveness is not None and report.liveness.bound_reached


def test_a_lasso_replays_in_a_fresh_engine_and_opens_at_the_loop() -> None:
    violation = explore_liveness(RallyFlow(), 0).violations[0]
    lasso = violation.lasso
    assert lasso is not None
    run = violation.replay()
    assert run.result.status is FlowStatus.RUNNING
    # The loop starts with Pong-1's wait_for (the prefix created Pong-1).
    created = next(e for e in run.history if e.execution_id == "Pong-1")
    assert created.kind is EventKind.STEP_EXECUTION_CREATED
    loop_start = next(e for e in run.history if e.seq > created.seq)
    assert loop_start.execution_id == "Pong-1"
    assert run.violating_seq == loop_start.seq
    assert run.debugger().event.seq == loop_start.seq  # the Debugger opens at the loop
    # Twice around the loop: Ping and Pong executions of both rounds are in the history.
    assert {"Pong-2", "Ping-3"} <= {e.execution_id for e in run.history}


def test_the_seed_flow_is_proven_live() -> None:
    report = explore_liveness(ContractEditFlow(), sample_edits(2))
    assert report.proven
    assert report.verdict().startswith("PROVEN eventually_closes() under fair scheduling")
    assert report.liveness is not None and report.liveness.cycles == 0


def test_the_seed_flow_with_a_failed_save_is_proven_live() -> None:
    report = explore_liveness(
        ContractEditFlow(), sample_edits(2), faults=FaultBudget.of(SaveContractEdit)
    )
    assert report.proven


def test_a_cycle_that_starves_a_ready_unit_is_ruled_out_by_fairness() -> None:
    report = explore_liveness(SpinUntilStoppedFlow())
    assert report.proven
    assert report.liveness is not None
    assert report.liveness.cycles == 1 and report.liveness.unfair_cycles == 1
    assert "1 cycle ruled out by fairness" in report.verdict()


def test_a_stall_is_reported_as_terminates_reports_it() -> None:
    live = explore_liveness(StallFlow()).violations[0]
    safe = explore(StallFlow(), check=checks.terminates(), progress=False).violations[0]
    assert live.lasso is None
    assert live.message == safe.message == "the Flow stalled with work left: AwaitNever-1:waiting"
    assert live.replay().violating_seq > 0


def test_a_bounded_graph_is_inconclusive_never_a_proof() -> None:
    report = explore_liveness(ContractEditFlow(), sample_edits(2), max_states=20)
    assert report.ok and not report.proven and not report.exhaustive
    assert report.liveness is not None and report.liveness.bound_reached
    assert report.verdict().startswith("INCONCLUSIVE eventually_closes(): bound reached (20")


def test_a_coroutine_that_never_returns_is_inconclusive_not_an_endless_search() -> None:
    report = explore_liveness(CoroutineForeverFlow())
    assert report.ok and not report.proven
    assert report.liveness is not None and report.liveness.states < 300
    assert "200 steps in a row without a state it can key" in report.verdict()


def test_eventually_a_predicate_finds_the_loop_that_never_reaches_it() -> None:
    def completed(state: FlowState) -> bool:
        return state.status is FlowStatus.COMPLETED

    report = explore_liveness(RallyFlow(), 0, check=checks.eventually(completed))
    assert report.violations[0].check == "eventually(completed)"
    assert report.violations[0].lasso is not None


def test_eventually_a_predicate_that_holds_on_every_fair_run_is_proven() -> None:
    def stopped(state: FlowState) -> bool:
        return state.status is not FlowStatus.RUNNING

    report = explore_liveness(SpinUntilStoppedFlow(), check=checks.eventually(stopped, "stop"))
    assert report.proven and report.checks == ("eventually(stop)",)


def test_a_run_that_closes_without_the_predicate_ever_holding_violates_eventually() -> None:
    def never(state: FlowState) -> bool:
        return False

    report = explore_liveness(SpinUntilStoppedFlow(), check=checks.eventually(never))
    (violation,) = report.violations
    assert violation.lasso is None
    assert violation.message == "the run ran out of work and eventually(never) never held"
    assert violation.replay().result.status is FlowStatus.COMPLETED


def test_the_schedule_search_checks_the_finite_part_of_eventually_closes() -> None:
    report = explore(StallFlow(), check=checks.eventually_closes(), progress=False)
    assert report.violations[0].message.startswith("the Flow stalled")
    seed = explore(ContractEditFlow(), sample_edits(2), check=checks.eventually_closes(),
                   progress=False)  # fmt: skip
    assert seed.proven


def test_a_safety_check_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match=r"exclusive\(never\) is not one: give it to explore"):
        explore_liveness(StallFlow(), check=[checks.eventually_closes(), checks.exclusive("never")])


def test_eventually_needs_a_callable() -> None:
    with pytest.raises(TypeError, match="eventually\\(\\) takes a callable"):
        checks.eventually("done")  # type: ignore[arg-type]


@pytest.mark.parametrize("bound", [0, -3, 2.5, True])
def test_max_states_must_be_a_positive_whole_number(bound: object) -> None:
    with pytest.raises(ValueError, match="max_states must be a whole number >= 1"):
        explore_liveness(StallFlow(), max_states=bound)  # type: ignore[arg-type]


def test_a_fault_budget_naming_an_unknown_step_is_refused() -> None:
    with pytest.raises(ValueError, match="did you mean 'SaveContractEdit'"):
        explore_liveness(ContractEditFlow(), sample_edits(2),
                         faults=FaultBudget.of("SaveContractEdits"))  # fmt: skip


def test_explore_with_only_liveness_checks_runs_the_fair_cycle_search():
    report = explore(RallyFlow(), 0, check=checks.eventually_closes(), progress=False)
    assert isinstance(report, LivenessReport)
    assert report.violations and report.violations[0].lasso is not None
    explicit = explore(RallyFlow(), 0, check=[checks.eventually_closes()], strategy="liveness",
                       progress=False)  # fmt: skip
    assert explicit.verdict() == report.verdict()


def test_explore_liveness_bounds_its_states_by_max_schedules():
    report = explore(ContractEditFlow(), sample_edits(3), check=checks.eventually_closes(),
                     strategy="liveness", max_schedules=5, progress=False)  # fmt: skip
    assert report.verdict().startswith("INCONCLUSIVE")


def test_the_liveness_search_refuses_workers_and_symmetry():
    with pytest.raises(ValueError, match="drop workers, cluster and symmetric"):
        explore(RallyFlow(), 0, check=checks.eventually_closes(), strategy="liveness",
                workers=2, progress=False)  # fmt: skip


def test_a_schedule_strategy_checks_liveness_on_finite_schedules_only():
    report = explore(RallyFlow(), 0, check=checks.eventually_closes(), strategy="dfs",
                     max_schedules=3, max_depth=20, progress=False)  # fmt: skip
    assert not isinstance(report, LivenessReport)
