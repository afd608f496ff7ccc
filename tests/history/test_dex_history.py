"""from_dex: every JSON shape of a Dex server's history loads into a History the views read."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import dexviz
from dexviz.analysis.executions import as_run
from dexviz.analysis.failures import step_failures
from dexviz.history import EventKind
from dexviz.history.dex_history import UNKNOWN_KIND, DexHistory, DexHistoryWarning
from tests.dex_support import (
    FLOW_ID,
    RUN_2,
    RUN_ID,
    TOKEN,
    continue_as_new_chain,
    contract_edit_run,
    dex_value,
    rfc3339,
    to_dexcli,
)


def _shapes() -> dict[str, Any]:
    events = contract_edit_run().events
    cli = to_dexcli(events)
    half = len(events) // 2
    return {
        "web page": contract_edit_run().page(),
        "web pages": [{"events": events[:half], "nextPageToken": "MQ==",
                       "nextInternalEventId": 9},
                      {"events": [], "nextPageToken": "Mg==", "nextInternalEventId": 9},
                      {"events": events[half:], "nextPageToken": "", "nextInternalEventId": 99}],
        "web events": events,
        "dexcli history": cli,
        "dexcli events": cli["events"],
        "dexcli inspect": {"summary": {}, "state": {}, "history": cli},
    }


SHAPES = sorted(_shapes())


@pytest.fixture(scope="module")
def reference() -> DexHistory:
    return dexviz.from_dex(contract_edit_run().page())


def _same(a: DexHistory, b: DexHistory) -> list[tuple[Any, ...]]:
    """The events, without the Dex event ids a shape may lack (dexcli's {type, payload})."""
    def key(h: DexHistory) -> list[tuple[Any, ...]]:
        return [(e.seq, e.time_ns, str(e.kind), e.execution_id, e.method, e.attempt,
                 {k: v for k, v in e.payload.items() if k != "dex_event_id"}) for e in h]
    del b
    return key(a)


@pytest.mark.parametrize("shape", SHAPES)
def test_every_shape_loads_the_same_run(shape: str, reference: DexHistory) -> None:
    history = dexviz.from_dex(_shapes()[shape])
    assert (history.flow_id, history.run_ids) == (FLOW_ID, (RUN_ID,))
    assert _same(history, history) == _same(reference, reference)


def test_bare_type_payload_events_load_and_state_the_missing_times() -> None:
    bare = [{"type": e["type"], "payload": e["payload"]}
            for e in to_dexcli(contract_edit_run().events)["events"]]
    history = dexviz.from_dex(bare)
    assert [e.kind for e in history if e.kind.is_semantic] == [
        e.kind for e in dexviz.from_dex(contract_edit_run().page()) if e.kind.is_semantic]
    assert "has no eventTime" in str({loss.topic: loss for loss in history.losses}["time"])
    assert dexviz.exclusive_sections(history, TOKEN).intervals


@pytest.mark.parametrize("shape", ["web page", "dexcli history"])
def test_a_file_path_loads_like_the_value(shape: str, tmp_path: Path,
                                          reference: DexHistory) -> None:
    path = tmp_path / "history.json"
    path.write_text(json.dumps(_shapes()[shape]), encoding="utf-8")
    history = dexviz.from_dex(path)
    assert history.source == str(path)
    assert _same(history, history) == _same(reference, reference)


def test_lineage_comes_from_from_step_execution_id(reference: DexHistory) -> None:
    created = {e.execution_id: (e.payload["from_execution_id"], e.payload["reason"])
               for e in reference.of_kind(EventKind.STEP_EXECUTION_CREATED)}
    assert created["StartContractEdits-1"] == ("__start__", "start")
    assert created["ReleaseContractEditToken-1"] == ("EnterContractEdit-2", "recovery")
    assert created["SaveContractEdit-2"] == ("EditContract-2", "decision")
    decision = reference.of_kind(EventKind.STEP_EXECUTE_COMPLETED)[0].payload["decision"]
    assert [n["execution_id"] for n in decision["next"]] == [
        "EnterContractEdit-1", "EnterContractEdit-2", "EnterContractEdit-3",
        "FinishContractEdits-1"]


@pytest.mark.parametrize("shape", SHAPES)
def test_every_view_reads_every_shape(shape: str, tmp_path: Path) -> None:
    history = dexviz.from_dex(_shapes()[shape])
    report = dexviz.exclusive_sections(history, TOKEN)
    assert report.ok and [h.holder for h in report.intervals] == [
        "EnterContractEdit-2", "EnterContractEdit-3", "EnterContractEdit-1"]
    tables = dexviz.frames(history)
    assert len(tables.executions) == 10
    assert set(tables.executions["status"]) == {"Completed", "Failed"}
    path = dexviz.critical_path(history)
    assert path.execution_ids[-1] == "FinishContractEdits-1"
    assert path.duration_s == pytest.approx(10.15)
    assert dexviz.state_at(history, len(history) - 1).closed == "COMPLETED"
    assert dexviz.timeline(history, channel=TOKEN) is not None
    assert dexviz.execution_graph(history) is not None
    assert len(dexviz.Debugger(history)) == len(history)
    page = history.to_html(tmp_path / "run.html", token_channel=TOKEN)
    assert "EnterContractEdit-2" in page.read_text(encoding="utf-8")
    (failure,) = step_failures(as_run(history))
    assert (failure.execution_id, failure.error_type, failure.error_message) == (
        "EnterContractEdit-2", "examples.contract_edit.ContractEditError",
        "contract handoff failed")
    # Dex folded the two attempts into one event: the summary counts both.
    assert failure.attempts == 2
    assert "failed after 2 attempts" in failure.describe()


def test_overlapping_holders_are_reported() -> None:
    history = dexviz.from_dex(contract_edit_run(extra_token=True).page())
    report = dexviz.exclusive_sections(history, TOKEN)
    assert not report.ok
    (overlap,) = report.overlaps
    assert overlap.execution_ids == ("EnterContractEdit-3", "EnterContractEdit-1")
    assert (overlap.end_ns - overlap.start_ns) / 1e9 == pytest.approx(3.65)


def test_continue_as_new_chain_is_one_history_with_its_runs_told_apart() -> None:
    history = dexviz.from_dex(continue_as_new_chain())
    assert history.run_ids == (RUN_ID, RUN_2)
    closes = history.of_kind(EventKind.FLOW_CLOSED)
    assert [(e.run_id, e.payload["status"]) for e in closes] == [
        (RUN_ID, "CONTINUED_AS_NEW"), (RUN_2, "COMPLETED")]
    resumed = [e for e in history.of_kind(EventKind.STEP_EXECUTION_CREATED)
               if e.run_id == RUN_2]
    assert {e.execution_id for e in resumed} >= {"EnterContractEdit-1", "FinishContractEdits-1"}
    report = dexviz.exclusive_sections(history, TOKEN)  # the chain reads as one run (R13)
    assert report.ok and [h.holder for h in report.intervals][-1] == "EnterContractEdit-1"
    pending = history.of_kind(EventKind.FLOW_STARTED_OR_CONTINUED)[1].payload
    assert [m["channel"] for m in pending["pending_messages"]] == [
        "contractEditFinished", "contractEditFinished", TOKEN]
    assert dexviz.state_at(history, len(history) - 1).closed == "COMPLETED"


def test_run_id_picks_one_run() -> None:
    second = dexviz.from_dex(continue_as_new_chain(), run_id=RUN_2)
    assert second.run_ids == (RUN_2,)
    assert second[0].payload["previous_run_id"] == RUN_ID
    with pytest.raises(ValueError, match=r"has no run 'nope' \(its runs: "):
        dexviz.from_dex(continue_as_new_chain(), run_id="nope")
    with pytest.raises(ValueError, match="holds Flow 'contract-7', not 'other'"):
        dexviz.from_dex(continue_as_new_chain(), flow_id="other")


def test_losses_are_stated(reference: DexHistory) -> None:
    topics = {loss.topic: loss for loss in reference.losses}
    assert "EnterContractEdit-2 execute: 2 attempts are folded" in str(topics["attempts"])
    assert set(topics) == {"spec", "message ids", "attempts"}
    assert reference.describe_losses().startswith("- spec: a Dex history holds no Flow")


def test_blob_values_are_unavailable_not_invented() -> None:
    run = contract_edit_run()
    run.events[1]["payload"]["input"]["stepInput"] = {
        "__dexBlobReference": {"id": "blob-9", "kind": "object"}}
    history = dexviz.from_dex(run.page())
    assert {loss.topic for loss in history.losses} >= {"values"}
    created = history.of_kind(EventKind.STEP_EXECUTION_CREATED)[0]
    assert created.payload["input"] == {"__dexStoredValueUnavailable": True,
                                        "__dexBlobReference": {"id": "blob-9",
                                                               "kind": "object"}}


def _with_unknown() -> list[dict[str, Any]]:
    events = contract_edit_run().events
    last = events[-1]["eventId"]
    extra = [
        {"eventId": last + 1, "eventTime": rfc3339(11), "type": "ChannelExternalDelete",
         "payload": {"messages": [{"channelName": TOKEN, "messageId": "m-1"}]}},
        {"eventId": last + 2, "eventTime": rfc3339(12), "type": "FancyNewEvent",
         "payload": {"x": 1}},
        {"eventId": last + 3, "eventTime": rfc3339(13), "type": "FancyNewEvent", "payload": {}},
    ]
    return events + extra


def test_unknown_event_types_are_kept_with_one_warning() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        history = dexviz.from_dex(_with_unknown())
    assert [str(w.message) for w in caught if w.category is DexHistoryWarning] == [
        "<Dex history value>: 3 events of types dexviz does not know were kept with kind "
        "'unknown': ChannelExternalDelete (1), FancyNewEvent (2)"]
    unknown = history.of_kind(UNKNOWN_KIND)
    assert [e.payload["dex_type"] for e in unknown] == [
        "ChannelExternalDelete", "FancyNewEvent", "FancyNewEvent"]
    labels = dexviz.Debugger(history).index_.labels
    assert labels[-1].endswith(" unknown") and labels[-1].startswith(f"#{len(history)} ")


def test_dexcli_unspecified_events_recover_their_payload_case() -> None:
    events = contract_edit_run().events
    cli = to_dexcli(events)
    fork = {"eventId": str(events[-1]["eventId"] + 1), "eventTime": rfc3339(11),
            "type": "Unspecified", "payload": None,
            "timeTravelFork": {"previousRunId": "old-run"}}
    blank = {"eventId": str(events[-1]["eventId"] + 2), "eventTime": rfc3339(12),
             "type": "Unspecified", "payload": None}
    cli["events"] += [fork, blank]
    with pytest.warns(DexHistoryWarning, match=r"1 event .* was kept .*: Unspecified \(1\)"):
        history = dexviz.from_dex(cli)
    assert history.of_kind(EventKind.TIME_TRAVEL_FORK)[0].payload["previous_run_id"] == "old-run"


def test_forced_close_reports_pending_methods() -> None:
    run = contract_edit_run(until=5.7)
    run.add("StepExecutePending", 5.75, {
        "input": {"stepInput": dex_value({"reviewer": "reviewer-1"})}, "phase": 2,
        "context": run.context("EnterContractEdit-1", "StartContractEdits-1", 5.75, 6.0)})
    run.closed(6.0, 6)
    history = dexviz.from_dex(run.page())
    pending = history.of_kind(EventKind.STEP_EXECUTE_PENDING)[0]
    assert (pending.execution_id, pending.payload["phase"]) == ("EnterContractEdit-1", "started")
    record = as_run(history).get("EnterContractEdit-1")
    assert record is not None
    assert record.status.value == "Pending"
    assert history.of_kind(EventKind.FLOW_CLOSED)[0].payload["status"] == "CANCELED"


def test_rpc_publications_and_the_steps_it_starts() -> None:
    run = contract_edit_run(until=5.7)
    run.add("RpcExecutionCompleted", 5.8, {
        "rpcName": "reopen", "input": dex_value({"why": "typo"}), "output": dex_value(True),
        "publishToChannel": [{"channelName": TOKEN, "value": dex_value("contract"),
                              "messageId": "0195a0c4-0000-7000-8000-00000000000a"}],
        "upsertAttributes": [{"key": "reopened", "value": dex_value(1)}],
        "stepDecision": {"nextSteps": [{"stepType": "EnterContractEdit",
                                        "stepInput": dex_value({"reviewer": "reviewer-4"})}]}})
    run.wait_for("EnterContractEdit-4", "__rpc/reopen", 5.85, 5.9, {"reviewer": "reviewer-4"},
                 TOKEN, 1)
    history = dexviz.from_dex(run.page())
    rpc = history.of_kind(EventKind.RPC_EXECUTION_COMPLETED)[0]
    assert (rpc.method, rpc.payload["rpc"], rpc.payload["output"]) == ("rpc", "reopen", True)
    assert rpc.payload["writes"] == [{"attribute": "reopened", "value": 1, "deleted": False}]
    assert [n["execution_id"] for n in rpc.payload["next"]] == ["EnterContractEdit-4"]
    published = [e for e in history.of_kind(EventKind.MESSAGE_PUBLISHED)
                 if e.payload["publisher"] == "rpc:reopen"]
    assert [e.payload["message_id"] for e in published] == [
        "0195a0c4-0000-7000-8000-00000000000a"]
    created = history.of_kind(EventKind.STEP_EXECUTION_CREATED)[-1]
    assert (created.execution_id, created.payload["from_execution_id"],
            created.payload["reason"], created.time_ns) == (
        "EnterContractEdit-4", "__rpc/reopen", "rpc", rpc.time_ns)
    assert "reopen" in history.flow_spec["rpcs"]


def test_a_loaded_dex_history_saves_as_a_dexviz_history(tmp_path: Path,
                                                        reference: DexHistory) -> None:
    saved = reference.save(tmp_path / "run.jsonl")
    assert dexviz.History.load(saved).events == reference.events


def test_a_method_that_never_started_has_no_attempt() -> None:
    run = contract_edit_run(until=5.7)
    run.add("StepExecutePending", 5.75, {
        "input": {"stepInput": dex_value({"reviewer": "reviewer-1"})}, "phase": 1,
        "context": run.context("EnterContractEdit-1", "StartContractEdits-1", 5.75, 6.0)})
    run.closed(6.0, 5)
    history = dexviz.from_dex(run.page())
    starts = [e for e in history.for_execution("EnterContractEdit-1")
              if e.kind == EventKind.ATTEMPT_STARTED]
    assert [e.method for e in starts] == ["wait_for"]
    pending = history.of_kind(EventKind.STEP_EXECUTE_PENDING)[0]
    assert pending.payload["phase"] == "scheduled"
    assert history.of_kind(EventKind.FLOW_CLOSED)[0].payload["status"] == "TERMINATED"


def test_a_failed_flow_names_its_error_as_dexviz_does() -> None:
    run = contract_edit_run(until=5.7)
    run.closed(5.8, 3, errorType=3, errorMessage="contract handoff failed")
    close = dexviz.from_dex(run.page()).of_kind(EventKind.FLOW_CLOSED)[0].payload
    assert (close["status"], close["error_type"], close["error_message"]) == (
        "FAILED", dexviz.FlowErrorType.WORKER_API_FAILED.name, "contract handoff failed")


@pytest.mark.parametrize(("value", "expected"), [
    ({"events": [{"type": "FlowClosed", "payload": {}}]}, True),
    ({"events": [], "nextPageToken": ""}, True),
    ([{"events": []}, {"events": []}], False),
    ([{"eventId": 1, "type": "FlowClosed", "payload": {}}], True),
    ({"history": {"events": [], "flowId": "f"}}, True),
    ({"format": "dexviz-history", "version": 1}, False),
    ({"events": [1, 2]}, False),
    ([], False),
])
def test_looks_like_dex(value: Any, expected: bool) -> None:
    from dexviz.history.dex_json import looks_like_dex

    assert looks_like_dex(value) is expected
