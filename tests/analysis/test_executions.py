"""Execution records folded from hand-made histories (docs/history-format.md)."""

from __future__ import annotations

import pytest

from dexviz.analysis.executions import AttemptOutcome, ExecutionStatus, as_run, build_executions
from dexviz.history import EventKind, History
from tests.analysis.factory import (
    SECOND,
    HistoryBuilder,
    canceled_holder_history,
    contract_edit_history,
)


@pytest.fixture(scope="module")
def run():
    return build_executions(contract_edit_history())


def test_one_record_per_execution_in_creation_order(run):
    assert len(run) == 25
    assert list(run)[:3] == ["StartContractEdits-1", "EnterContractEdit-1", "EnterContractEdit-2"]
    assert run.flow_type == "ContractEditFlow"
    assert run.close is not None and run.close.status == "COMPLETED"
    assert run.seconds(run.end_ns) == 28.0


def test_lineage_and_children(run):
    start = run["StartContractEdits-1"]
    assert start.parent == "__start__" and start.reason == "start"
    assert len(start.next) == 9
    assert run["ReleaseContractEditToken-1"].parent == "EnterContractEdit-2"
    assert run["ReleaseContractEditToken-1"].reason == "recovery"


def test_phase_windows_of_a_handoff(run):
    enter = run["EnterContractEdit-3"]  # third holder: waits 0..5 s, hands off at 5 s
    assert run.seconds(enter.wait_for_start_ns) == 0.0
    assert run.seconds(enter.wait_start_ns) == 0.0
    assert run.seconds(enter.wait_end_ns) == 5.0
    assert run.seconds(enter.execute_start_ns) == run.seconds(enter.execute_end_ns) == 5.0
    assert enter.consumed[0].channel == "contractEditToken"


def test_failed_attempts_keep_error_and_retry_delay(run):
    save = run["SaveContractEdit-3"]  # reviewer 4: two 2 s attempts with a 1 s backoff
    first, second = save.attempts_of("execute")
    assert first.outcome is AttemptOutcome.FAILED and not first.final
    assert first.retry_delay_ns == SECOND and first.retry_at_ns == second.start_ns
    assert (first.duration_ns, second.duration_ns) == (2 * SECOND, 2 * SECOND)
    assert second.final and second.error_message == "boom"
    assert save.status is ExecutionStatus.FAILED and save.outcome == "FAILED"
    assert save.recovery == "ReleaseContractEditToken-2"
    assert save.error_message == "contract edit failed"


def test_canceled_is_sticky_and_cuts_the_running_attempt():
    run = build_executions(canceled_holder_history())
    enter = run["EnterContractEdit-1"]
    assert enter.status is ExecutionStatus.CANCELED
    assert (enter.canceled_by, enter.canceled_phase) == ("Canceller-1", "execute")
    assert enter.attempts[-1].outcome is AttemptOutcome.CANCELED
    assert enter.attempts[-1].end_ns == enter.canceled_ns
    late = run["Late-1"]
    assert late.status is ExecutionStatus.CANCELED and late.wait_end_ns == late.canceled_ns


def test_live_statuses_waiting_active_and_queued():
    b = HistoryBuilder()
    b.start({"flow_type": "F", "start_step": "A", "channels": []}, None)
    b.wait_for("A-1", "ch", "ch.for 1")
    waiting = build_executions(b.history())["A-1"]
    assert waiting.status is ExecutionStatus.WAITING and waiting.wait_end_ns == b.now
    b.satisfy("A-1", [("ch", "m-1")])
    b.start_attempt("A-1")
    b.advance(3)
    active = build_executions(b.history())["A-1"]
    assert active.status is ExecutionStatus.ACTIVE
    assert active.attempts[-1].outcome is AttemptOutcome.RUNNING
    b.create("B", None, "A-1")
    assert build_executions(b.history())["B-1"].status is ExecutionStatus.PENDING


def test_pending_at_close_ends_the_attempt_at_the_close():
    b = HistoryBuilder()
    b.start({"flow_type": "F", "start_step": "A"}, None)
    b.start_attempt("A-1")
    b.advance(2)
    b.emit(EventKind.STEP_EXECUTE_PENDING, "A-1", method="execute", attempt=1, phase="started")
    b.close("CANCELED")
    record = build_executions(b.history())["A-1"]
    assert record.status is ExecutionStatus.PENDING and record.outcome == "PENDING"
    assert record.attempts[0].outcome is AttemptOutcome.PENDING
    assert record.attempts[0].duration_ns == 2 * SECOND


def test_the_last_run_is_read_by_default_and_unknown_runs_are_named():
    first = contract_edit_history(count=2)
    b = HistoryBuilder(run_id="run-2", now=first[-1].time_ns + SECOND)
    b.events = list(first)
    b.start({"flow_type": "ContractEditFlow", "start_step": "StartContractEdits"}, [])
    history = History(b.events)
    assert build_executions(history).run_id == "run-2"
    assert len(build_executions(history, "run-1")) > len(build_executions(history))
    with pytest.raises(ValueError, match="has no run 'run-9' \\(runs: run-1, run-2\\)"):
        build_executions(history, "run-9")


def test_empty_history_is_a_clear_error():
    with pytest.raises(ValueError, match="history is empty"):
        build_executions(History())


def test_as_run_passes_records_through_and_checks_the_run(run):
    assert as_run(run) is run
    with pytest.raises(ValueError, match="records are of run 'run-1', not 'other'"):
        as_run(run, "other")
