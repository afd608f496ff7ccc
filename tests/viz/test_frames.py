"""frames(): pandas tables of a run, with UTC times and seconds since the Flow start."""

from __future__ import annotations

import pytest

from dexviz.viz.frames import frames
from tests.analysis.factory import canceled_holder_history, contract_edit_history

pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def tables():
    return frames(contract_edit_history())


def test_executions_has_one_row_per_execution_with_phase_times(tables):
    table = tables.executions.set_index("execution_id")
    assert len(table) == 25
    assert str(table["created"].dtype) == "datetime64[ns, UTC]"
    enter = table.loc["EnterContractEdit-4"]
    assert (enter["wait_start_s"], enter["wait_end_s"], enter["execute_end_s"]) == (0.0, 9.0, 9.0)
    assert enter["wait_end"] == pd.Timestamp("2026-01-01T00:00:09Z")
    assert enter["parent"] == "StartContractEdits-1"
    assert enter["input"]["reviewer"] == "reviewer-4"
    save = table.loc["SaveContractEdit-3"]
    assert (save["status"], save["outcome"], save["execute_attempts"]) == ("Failed", "FAILED", 2)
    assert save["recovery"] == "ReleaseContractEditToken-2"
    assert pd.isna(table.loc["EditContract-1"]["wait_start"])  # no WaitFor: NaT


def test_attempts_carry_errors_and_retry_delays(tables):
    failed = tables.attempts.query("outcome == 'failed'")
    assert len(failed) == 4
    first = failed.iloc[0]
    assert first["retry_delay_s"] == 1.0 and first["error_type"].endswith("ContractEditError")
    assert set(tables.attempts["method"].cat.categories) == {"execute", "wait_for"}


def test_messages_follow_publish_consume_and_return():
    table = frames(canceled_holder_history()).messages
    token = table[table["message_id"] == "m-1"]
    assert list(token["consumer"]) == ["EnterContractEdit-1", "EnterContractEdit-2"]
    assert list(token["returned_s"].isna()) == [False, True]
    assert token.iloc[0]["returned_s"] == 1.0


def test_events_and_segments_tables(tables):
    events = tables.events
    assert list(events["seq"]) == list(range(1, 145))
    assert set(events.loc[events["semantic"], "kind"]) == {
        "FlowStartedOrContinued", "StepWaitForCompleted", "StepExecuteCompleted",
        "StepExecuteFailed", "FlowClosed"}
    assert events["time_s"].iloc[-1] == 28.0
    segments = tables.segments
    assert set(segments["kind"]) >= {"wait_for", "waiting", "execute", "backoff"}
    assert (segments["duration_s"] >= 0).all()
    assert [name for name, _ in tables.tables()] == [
        "events", "executions", "attempts", "messages", "segments"]
