"""Recovery: an engine opened on a store resumes every open run (crash after every commit).

Each scenario is a Flow of the test suite (the contract edit, timers, RPCs, SubFlows, retries,
locks). It is crashed right after every commit k in turn; a new engine resumes from the store and
runs to the end. Then: the state rebuilt from the store equals the state in memory at commit k;
the run closes with the same status and outputs as without the crash; no message is lost or
delivered twice; for the contract edit, exactly one token exists at every commit and no two
holders overlap.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from dexviz import (
    Channel,
    Context,
    Engine,
    EventKind,
    FlowConfig,
    FlowStatus,
    MemoryStore,
    SQLiteStore,
    StartFlowOptions,
    Step,
    StepDecision,
    current_time_millis,
    exclusive_sections,
    force_fail,
    go_to,
    graceful_complete,
)
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits
from dexviz.sdk.codec import to_json_ready
from tests.engine.crash_harness import (
    Scenario,
    baseline,
    crash_and_resume,
    deliveries_ok,
    outcome,
    settle,
)
from tests.engine.flows_b import EPOCH_NS, TOKEN_CHANNEL, BFlow, TokenInvariant, retries
from tests.engine.test_continue_as_new import INBOX as TALLY_INBOX
from tests.engine.test_continue_as_new import _tally_flow
from tests.engine.test_flow_options import AsyncHandler, SyncHandler, timeout
from tests.engine.test_locks import LOCK_N, Increment, LockFlow
from tests.engine.test_retries import flaky
from tests.engine.test_rpc import COUNTER, INBOX, Account
from tests.engine.test_subflows import all_plan, family
from tests.engine.test_timers import CH, TimerOrMessage


def _edits(flows: Sequence[Any]) -> list[Any]:
    flow = flows[0]
    return [lambda e: e.client().start_flow(flow, "flow-1", sample_edits(5)), settle]


def _reviewers(outputs: Any) -> Any:
    """Contract-edit outputs without their times (a re-run attempt may finish later)."""
    records = to_json_ready(outputs)
    return sorted(
        (r["reviewer"], r["outcome"])
        for out in records
        for r in (out if isinstance(out, list) else [out])
    )


def _timers(flows: Sequence[Any]) -> list[Any]:
    flow = flows[0]
    return [lambda e: e.client().start_flow(flow, "flow-1", "t"), settle]


def _timer_then_message(flows: Sequence[Any]) -> list[Any]:
    flow = flows[0]
    return [
        lambda e: e.client().start_flow(flow, "flow-1", "t"),
        lambda e: e.client().publish("flow-1", CH, "early"),
        settle,
    ]


def _rpc(flows: Sequence[Any]) -> list[Any]:
    flow = flows[0]
    return [
        lambda e: e.client().start_flow(flow, "a", 0),
        settle,
        lambda e: e.client().invoke_rpc(flow.deposit, "a", 5),
        settle,
        lambda e: e.client().set_attribute("a", COUNTER, 7),
        lambda e: e.client().publish("a", INBOX, "hello"),
        settle,
    ]


def _subflows() -> Sequence[Any]:
    parent, child, _, _ = family(all_plan)
    return [parent, child]


def _parent(flows: Sequence[Any]) -> list[Any]:
    parent = flows[0]
    return [lambda e: e.client().start_flow(parent, "p", "all"), settle]


def _retries() -> Sequence[Any]:
    return [flaky(retries(3))[1]]


def _start_with(value: Any) -> Any:
    def actions(flows: Sequence[Any]) -> list[Any]:
        flow = flows[0]
        return [lambda e: e.client().start_flow(flow, "flow-1", value), settle]

    return actions


class FailEarly(Step[int]):
    """Fails the Flow during its first virtual second; the Flow retry after it completes."""

    def execute(self, context: Context, n: int) -> StepDecision:
        if current_time_millis() < EPOCH_NS // 10**6 + 500:
            return force_fail("too early")
        return graceful_complete(n * 2)


def _retried(flows: Sequence[Any]) -> list[Any]:
    flow = flows[0]
    options = StartFlowOptions(retry_policy=retries(3, 2))
    return [lambda e: e.client().start_flow(flow, "flow-1", 21, options), settle]


def _delayed(flows: Sequence[Any]) -> list[Any]:
    flow = flows[0]
    options = StartFlowOptions(start_delay=timedelta(seconds=30))
    return [lambda e: e.client().start_flow(flow, "flow-1", 21, options), settle]


def _continued(flows: Sequence[Any]) -> list[Any]:
    flow = flows[0]
    options = StartFlowOptions(config_override=FlowConfig(continue_as_new_threshold=5))
    return [
        lambda e: e.client().start_flow(flow, "c", 4, options),
        lambda e: e.client().publish("c", TALLY_INBOX, *"wxyz"),
        settle,
    ]


def _timed_out(flows: Sequence[Any]) -> list[Any]:
    flow = flows[0]
    return [lambda e: e.client().start_flow(flow, "flow-1", 1, timeout()), settle]


SCENARIOS = [
    Scenario("contract_edit", lambda: [ContractEditFlow()], _edits, 4, _reviewers),
    Scenario("timers", lambda: [BFlow("Timers", TimerOrMessage(), schema=[CH])], _timers),
    Scenario(
        "timer_or_message",
        lambda: [BFlow("Timers", TimerOrMessage(), schema=[CH])],
        _timer_then_message,
    ),
    Scenario("rpc", lambda: [Account()], _rpc, 1),
    Scenario("subflows", _subflows, _parent, 2),
    Scenario("retries", _retries, _start_with(2)),
    Scenario("locks", lambda: [LockFlow(Increment(LOCK_N))], _start_with(1), 3),
    Scenario("timeout_handler", lambda: [AsyncHandler()], _timed_out),
    Scenario("timeout_handler_sync", lambda: [SyncHandler()], _timed_out),
    Scenario("flow_retry", lambda: [BFlow("Retried", FailEarly())], _retried),
    Scenario("start_delay", lambda: [BFlow("Delayed", FailEarly())], _delayed),
    Scenario("continue_as_new", lambda: [_tally_flow()], _continued),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_r57_a_crash_after_every_commit_resumes_to_the_same_end(
    scenario: Scenario, tmp_path: Path
) -> None:
    reference, commits = baseline(scenario)
    expected = outcome(reference, scenario)
    assert commits >= 3
    for k in range(1, commits + 1):
        store = MemoryStore() if k % 2 else SQLiteStore(tmp_path / f"{k}.db", durability="normal")
        crashed = crash_and_resume(scenario, k, store)
        found = outcome(crashed.resumed, scenario)
        assert found.results == expected.results, (scenario.name, k)
        assert found.states == expected.states, (scenario.name, k)
        for flow_id in crashed.resumed.flow_ids():
            history = crashed.resumed.history(flow_id)
            assert deliveries_ok(history) == [], (scenario.name, k, flow_id)
            assert [e.seq for e in history] == list(range(1, len(history) + 1))
        crashed.resumed.close()


def test_r172_contract_edit_keeps_one_token_at_every_commit_across_a_crash(tmp_path: Path) -> None:
    scenario = SCENARIOS[0]
    _, commits = baseline(scenario)
    watchers: list[TokenInvariant] = []
    for k in range(1, commits + 1):
        store = SQLiteStore(tmp_path / f"{k}.db", durability="normal")
        crashed = crash_and_resume(scenario, k, store, lambda e: watchers.append(TokenInvariant(e)))
        history = crashed.resumed.history("flow-1")
        assert exclusive_sections(history, TOKEN_CHANNEL).ok, k
        assert crashed.resumed.result("flow-1").status is FlowStatus.COMPLETED
        crashed.resumed.close()
    assert all(w.violations == [] for w in watchers)
    assert all(w.max_holders <= 1 for w in watchers)
    assert sum(w.commits_checked for w in watchers) > commits


def test_recovered_runs_record_the_crash_and_rerun_the_lost_attempt() -> None:
    scenario = SCENARIOS[0]
    store = MemoryStore()
    # Commit 3: the handoff of one edit took the token (its Execute has not committed yet).
    for k in range(2, 12):
        store = MemoryStore()
        crashed = crash_and_resume(scenario, k, store)
        history = crashed.resumed.history("flow-1")
        recovered = [e for e in history if e.kind == EventKind.RECOVERED]
        assert len(recovered) == 1
        lost = [
            e
            for e in history
            if e.kind == EventKind.ATTEMPT_FAILED and e.payload["reason"] == "crash"
        ]
        for event in lost:
            again = [
                e
                for e in history
                if e.kind == EventKind.ATTEMPT_STARTED
                and e.execution_id == event.execution_id
                and e.method == event.method
                and e.attempt == event.attempt + 1
            ]
            assert again and again[0].seq > event.seq
        assert len({e.run_id for e in history}) == 1  # one run spans the crash


def test_an_engine_on_an_empty_store_recovers_nothing() -> None:
    engine = Engine([ContractEditFlow()], store=MemoryStore())
    assert engine.recovered.open_runs == () and engine.recovered.closed_runs == ()


def test_views_show_a_run_that_spans_a_crash_as_one_run() -> None:
    from dexviz.analysis.executions import build_executions
    from dexviz.analysis.state import state_at

    scenario = SCENARIOS[0]
    reference, commits = baseline(scenario)
    expected = build_executions(reference.history("flow-1"))
    for k in (3, commits // 2, commits - 1):
        crashed = crash_and_resume(scenario, k, MemoryStore())
        history = crashed.resumed.history("flow-1")
        found = build_executions(history)
        assert sorted(found) == sorted(expected), k  # the same executions, one run
        assert found.close is not None and found.close.status == "COMPLETED"
        lost = [
            e
            for e in history
            if e.kind == EventKind.ATTEMPT_FAILED and e.payload["reason"] == "crash"
        ]
        for event in lost:
            attempts = found[event.execution_id or ""].attempts
            assert len(attempts) >= 2, (k, event.execution_id)  # the lost one and its re-run
        assert state_at(history, len(history) - 1).closed == "COMPLETED"


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_every_scenario_reads_back_from_sqlite_as_recorded(
    scenario: Scenario, tmp_path: Path
) -> None:
    in_memory, _ = baseline(scenario)
    on_disk, _ = baseline(scenario, SQLiteStore(tmp_path / "h.db", durability="normal"))
    for flow_id in in_memory.flow_ids():
        stored = SQLiteStore(tmp_path / "h.db", readonly=True).history(flow_id)
        assert stored.to_jsonl() == in_memory.history(flow_id).to_jsonl(), flow_id
        assert stored == on_disk.history(flow_id)


NOTES = Channel("notes", int)


class Note(Step[int]):
    """Publishes its input and goes on until 6 (one ready unit at a time: no choice is made)."""

    def execute(self, context: Context, n: int) -> StepDecision:
        NOTES.publish(context, n)
        return go_to(Note, n + 1) if n < 6 else graceful_complete(n)


def test_the_id_source_resumes_exactly_where_the_last_commit_left_it() -> None:
    scenario = Scenario("notes", lambda: [BFlow("Notes", Note(), schema=[NOTES])], _start_with(0))
    reference, commits = baseline(scenario)

    def ids(engine: Engine) -> list[str]:
        history = engine.history("flow-1")
        return [e.payload["message_id"] for e in history if e.kind == EventKind.MESSAGE_PUBLISHED]

    expected = ids(reference)
    assert len(expected) == 7
    for k in range(1, commits + 1):
        crashed = crash_and_resume(scenario, k, MemoryStore())
        assert ids(crashed.resumed) == expected, k
        assert crashed.resumed.history("flow-1").run_ids == reference.history("flow-1").run_ids
