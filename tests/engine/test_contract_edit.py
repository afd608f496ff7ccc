"""Acceptance tests of the seed's ContractEditFlow and rules R167-R172 (the critical section).

For every seed 0..99, eight reviewers (``sample_edits(8)``) edit one contract: the Flow completes,
each reviewer reports once with the expected outcome, no two edits overlap in time, exactly one
token is left, and the same seed replays byte for byte while different seeds choose different
entry orders (Dex promises no FIFO among waiters, R46/R168). Then every exit of the section, and
a handoff canceled after it took the token (R57, R170), must hand the token on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest

from dexviz import (
    EventKind,
    FaultPlan,
    FlowStatus,
    SimulationRun,
    StopFlowOptions,
    StopType,
    simulate,
)
from dexviz.examples.contract_edit import (
    EXPECTED_OUTCOMES,
    ContractEdit,
    ContractEditFlow,
    ContractEditRecord,
    EnterContractEdit,
    ReleaseContractEditToken,
    SaveContractEdit,
    sample_edits,
)
from tests.engine.flows_b import (
    FINISHED_CHANNEL,
    TOKEN_CHANNEL,
    TokenInvariant,
    attempt_started,
    of_kind,
    run_until,
    settle_now,
    started,
)

SEEDS = range(100)
REVIEWERS = 8
FLOW = ContractEditFlow()


@dataclass(frozen=True)
class SeedOutcome:
    """What the tests read from one fault-free run (engines are not kept alive: cheaper GC)."""

    status: FlowStatus
    records: list[ContractEditRecord]
    entry_order: tuple[str, ...]
    jsonl: str
    channels: Mapping[str, tuple[Any, ...]]
    active: int


@cache
def run_seed(seed: int) -> SeedOutcome:
    """The fault-free run of eight reviewers with ``seed`` (shared by several tests)."""
    run = simulate(FLOW, sample_edits(REVIEWERS), seed=seed)
    state = run.engine.flow_state(run.flow_id)
    return SeedOutcome(
        run.result.status,
        records_of(run),
        entry_order(run),
        run.history.to_jsonl(),
        dict(state.channels),
        len(state.active_executions),
    )


def records_of(run: SimulationRun) -> list[ContractEditRecord]:
    """The records the Flow completed with."""
    (completion,) = run.result.completions
    records = completion.value
    assert isinstance(records, list)
    return records


def expected_outcome(reviewer: str) -> str:
    number = int(reviewer.rsplit("-", 1)[1])
    return EXPECTED_OUTCOMES.get(number % 8, "saved")


def assert_no_overlap(records: list[ContractEditRecord]) -> None:
    """No two [started, finished] intervals overlap; touching endpoints are allowed."""
    spans = sorted((r.started_at_millis, r.finished_at_millis, r.reviewer) for r in records)
    for (_, end, first), (start, _, second) in zip(spans, spans[1:], strict=False):
        assert start >= end, f"{first} and {second} overlap: {spans}"


def entry_order(run: SimulationRun) -> tuple[str, ...]:
    """The reviewers in the order their handoff took the token."""
    reviewer_of = {
        e.execution_id: e.payload["input"]["reviewer"]
        for e in of_kind(run.history, EventKind.STEP_EXECUTION_CREATED)
        if e.step_type == "EnterContractEdit"
    }
    return tuple(
        reviewer_of[e.execution_id]
        for e in of_kind(run.history, EventKind.WAIT_SATISFIED)
        if e.step_type == "EnterContractEdit"
    )


# -- acceptance: every seed ---------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_contract_edit_completes_with_one_record_per_reviewer(seed: int) -> None:
    outcome = run_seed(seed)
    assert outcome.status is FlowStatus.COMPLETED
    records = outcome.records
    assert sorted(r.reviewer for r in records) == sorted(e.reviewer for e in sample_edits(8))
    for record in records:
        assert record.outcome == expected_outcome(record.reviewer), record
    saved = [r for r in records if r.outcome == "saved"]
    assert len(saved) == 5
    assert_no_overlap(saved)
    assert_no_overlap(records)  # the failed and withdrawn exits held the token too
    assert outcome.channels[TOKEN_CHANNEL] == ("contract",)
    assert outcome.channels[FINISHED_CHANNEL] == ()
    assert outcome.active == 0


@pytest.mark.parametrize("seed", [0, 1, 7, 42, 99])
def test_contract_edit_intervals_follow_the_section_timing(seed: int) -> None:
    # Edit and save each hold the contract 2 s; reviewer 4's save fails twice (1 s backoff).
    records = run_seed(seed).records
    lengths = {r.reviewer: r.finished_at_millis - r.started_at_millis for r in records}
    assert lengths == {
        "reviewer-1": 4000,
        "reviewer-2": 0,
        "reviewer-3": 4000,
        "reviewer-4": 7000,
        "reviewer-5": 4000,
        "reviewer-6": 0,
        "reviewer-7": 4000,
        "reviewer-8": 4000,
    }


def test_contract_edit_records_follow_the_entry_order() -> None:
    for seed in SEEDS:
        outcome = run_seed(seed)
        assert tuple(r.reviewer for r in outcome.records) == outcome.entry_order, seed


def test_contract_edit_same_seed_gives_a_byte_identical_history() -> None:
    for seed in SEEDS:
        again = simulate(FLOW, sample_edits(REVIEWERS), seed=seed)
        assert again.history.to_jsonl() == run_seed(seed).jsonl, seed


def test_r168_contract_edit_different_seeds_give_different_entry_orders() -> None:
    orders = {run_seed(seed).entry_order for seed in SEEDS}
    assert all(len(order) == REVIEWERS for order in orders)
    assert len(orders) >= 2
    fifo = tuple(f"reviewer-{n}" for n in range(1, REVIEWERS + 1))
    assert orders != {fifo}


# -- R167-R172 ----------------------------------------------------------------------------------


def test_r167_one_token_is_published_before_any_branch_waits_for_it() -> None:
    run = simulate(FLOW, sample_edits(REVIEWERS), seed=0)
    published = [
        e
        for e in of_kind(run.history, EventKind.MESSAGE_PUBLISHED)
        if e.payload["channel"] == TOKEN_CHANNEL
    ]
    first = published[0]
    assert first.execution_id == "StartContractEdits-1"
    handoffs = [
        e for e in of_kind(run.history, EventKind.STEP_WAIT_FOR_COMPLETED)
        if e.step_type == "EnterContractEdit"
    ]
    assert len(handoffs) == REVIEWERS
    for event in handoffs:
        assert event.seq > first.seq
        labels = [c["label"] for c in event.payload["wait"]["conditions"]]
        assert labels == ["contractEditToken.for 1"]


@pytest.mark.parametrize("seed", range(20))
def test_r168_r172_one_token_and_one_branch_inside_after_every_commit(seed: int) -> None:
    engine = started(FLOW, sample_edits(REVIEWERS), seed=seed)
    invariant = TokenInvariant(engine)
    engine.run_until_idle()
    assert invariant.violations == []
    assert invariant.commits_checked >= 40  # the listener saw every commit of the run
    assert invariant.max_holders == 1
    assert engine.result("flow-1").status is FlowStatus.COMPLETED


@pytest.mark.parametrize("step", [ReleaseContractEditToken, SaveContractEdit])
def test_r169_failed_attempts_of_the_releasing_execute_publish_no_token(step: type) -> None:
    # Release is retried with the default policy; Save has 2 attempts, so fail only its first.
    attempts = (1, 2) if step is ReleaseContractEditToken else (1,)
    faults = FaultPlan.of(*(FaultPlan.fail(step, "execute", attempt=a) for a in attempts))
    for seed in range(10):
        engine = started(FLOW, sample_edits(REVIEWERS), seed=seed, faults=faults)
        invariant = TokenInvariant(engine)
        engine.run_until_idle()
        assert invariant.violations == []
        run_history = engine.history("flow-1")
        failed = [
            e
            for e in of_kind(run_history, EventKind.ATTEMPT_FAILED)
            if e.step_type == step.__name__
        ]
        assert failed, "the fault plan failed no attempt"
        token_publishers = [
            e.execution_id
            for e in of_kind(run_history, EventKind.MESSAGE_PUBLISHED)
            if e.payload["channel"] == TOKEN_CHANNEL and e.step_type == step.__name__
        ]
        assert len(token_publishers) == len(set(token_publishers))  # one token per execution
        assert engine.result("flow-1").status is FlowStatus.COMPLETED
        assert engine.flow_state("flow-1").channels[TOKEN_CHANNEL] == ("contract",)


EXITS = {
    "handoff_failure": (ContractEdit("leaver", should_fail_handoff=True), "failed"),
    "edit_failure": (ContractEdit("leaver", should_fail_edit=True), "failed"),
    "withdraw": (ContractEdit("leaver", should_withdraw=True), "withdrawn"),
}


@pytest.mark.parametrize("exit_name", sorted(EXITS))
def test_every_exit_of_the_section_returns_the_token(exit_name: str) -> None:
    leaver, outcome = EXITS[exit_name]
    releaser = "EditContract" if exit_name == "withdraw" else "ReleaseContractEditToken"
    for seed in range(10):
        run = simulate(FLOW, [leaver, ContractEdit("a"), ContractEdit("b")], seed=seed)
        assert run.result.status is FlowStatus.COMPLETED, seed
        outcomes = {r.reviewer: r.outcome for r in records_of(run)}
        assert outcomes == {"leaver": outcome, "a": "saved", "b": "saved"}
        leaver_exits = [
            e.execution_id
            for e in of_kind(run.history, EventKind.STEP_EXECUTION_CREATED)
            if e.step_type == releaser and e.payload["input"]["reviewer"] == "leaver"
        ]
        returned = [
            e
            for e in of_kind(run.history, EventKind.MESSAGE_PUBLISHED)
            if e.execution_id in leaver_exits and e.payload["channel"] == TOKEN_CHANNEL
        ]
        assert len(returned) == 1
        state = run.engine.flow_state(run.flow_id)
        assert state.channels[TOKEN_CHANNEL] == ("contract",)


def _canceled_handoff(seed: int, target: str, faults: list[Any]) -> SimulationRun:
    run = simulate(FLOW, sample_edits(REVIEWERS), seed=seed, faults=faults)
    reviewer = f"reviewer-{target.rsplit('-', 1)[1]}"
    created = of_kind(run.history, EventKind.STEP_EXECUTION_CREATED, target)
    assert created[0].payload["input"]["reviewer"] == reviewer  # numbering follows R16
    # The Flow waits forever for the 8th record, with the token back in its Channel.
    assert run.result.status is FlowStatus.RUNNING
    state = run.engine.flow_state(run.flow_id)
    assert state.channels[TOKEN_CHANNEL] == ("contract",)
    records = state.channels[FINISHED_CHANNEL]
    assert len(records) == REVIEWERS - 1
    published = [
        e
        for e in of_kind(run.history, EventKind.MESSAGE_PUBLISHED)
        if e.payload["channel"] == FINISHED_CHANNEL
    ]
    assert len(published) == REVIEWERS - 1
    assert reviewer not in {r.reviewer for r in records}
    assert [a.step_type for a in state.active_executions] == ["FinishContractEdits"]
    # It published nothing, and its failure route did not run.
    assert not of_kind(run.history, EventKind.MESSAGE_PUBLISHED, target)
    routed = [
        e
        for e in of_kind(run.history, EventKind.STEP_EXECUTION_CREATED)
        if e.payload["from_execution_id"] == target
    ]
    assert routed == []
    return run


def _token_went_back_to_the_front(run: SimulationRun, target: str) -> bool:
    """Check the returned token; True if another branch then entered with that same token."""
    events = list(run.history)
    (canceled,) = of_kind(events, EventKind.EXECUTION_CANCELED, target)
    (returned,) = of_kind(events, EventKind.MESSAGE_RETURNED, target)
    (consumed,) = of_kind(events, EventKind.MESSAGE_CONSUMED, target)
    assert canceled.payload["phase"] == "execute"
    token = consumed.payload["message_id"]
    assert returned.payload["message_id"] == token
    later = [
        e
        for e in of_kind(events, EventKind.MESSAGE_CONSUMED)
        if e.seq > returned.seq and e.payload["channel"] == TOKEN_CHANNEL
    ]
    if not later:
        return False
    assert later[0].payload["message_id"] == token  # the front of the queue: the same message
    assert later[0].execution_id != target
    return True


def test_r57_r170_a_handoff_canceled_after_taking_the_token_returns_it_to_the_front() -> None:
    target = "EnterContractEdit-3"
    faults = [FaultPlan.cancel(target, at=EventKind.WAIT_SATISFIED)]
    entered = [
        _token_went_back_to_the_front(_canceled_handoff(seed, target, faults), target)
        for seed in range(20)
    ]
    assert any(entered)


@pytest.mark.parametrize(
    ("target", "extra"),
    [
        ("EnterContractEdit-2", []),  # reviewer 2's handoff fails by itself
        ("EnterContractEdit-3", [FaultPlan.fail(EnterContractEdit, "execute", attempt=1)]),
    ],
)
def test_r57_r170_a_handoff_canceled_at_its_execute_attempt_returns_the_token(
    target: str, extra: list[Any]
) -> None:
    # A synchronous attempt that succeeds commits in the unit that starts it, so a cancel at its
    # AttemptStarted lands during the retry backoff of a failed attempt, token still reserved.
    def at_execute(event: Any) -> bool:
        return attempt_started(target)(event)

    faults = [*extra, FaultPlan.cancel(target, at=at_execute)]
    entered = [
        _token_went_back_to_the_front(_canceled_handoff(seed, target, faults), target)
        for seed in range(20)
    ]
    assert any(entered)


def test_r94_canceling_a_handoff_after_its_execute_committed_changes_nothing() -> None:
    target = "EnterContractEdit-3"
    faults = [FaultPlan.cancel(target, at=EventKind.STEP_EXECUTE_COMPLETED)]
    run = simulate(FLOW, sample_edits(REVIEWERS), seed=5, faults=faults)
    assert run.result.status is FlowStatus.COMPLETED
    assert not of_kind(run.history, EventKind.EXECUTION_CANCELED)
    assert len(records_of(run)) == REVIEWERS


@pytest.mark.parametrize("stop", [StopType.CANCEL, StopType.FAIL, StopType.TERMINATE])
def test_r171_forced_closes_end_every_branch_while_one_holds_the_token(stop: StopType) -> None:
    engine = started(FLOW, sample_edits(REVIEWERS), seed=3)
    run_until(engine, attempt_started("EditContract-1"))
    settle_now(engine)
    waiting = [a for a in engine.flow_state("flow-1").active_executions if a.phase == "waiting"]
    assert len(waiting) >= 2  # other branches wait for the token
    engine.client().stop_flow("flow-1", StopFlowOptions(type=stop))
    engine.run_until_idle()
    assert engine.result("flow-1").status is not FlowStatus.RUNNING
    events = list(engine.history("flow-1"))
    assert events[-1].kind == EventKind.FLOW_CLOSED
    assert engine.flow_state("flow-1").active_executions == ()
    assert not of_kind(events, EventKind.STEP_EXECUTE_COMPLETED, "EditContract-1")
