"""The lineage graph model: Dex Web's status rules plus message edges, Flow end and collapse."""

from __future__ import annotations

import pytest

from dexviz.analysis.lineage import group_status, lineage_graph, step_type_stats
from dexviz.history import EventKind
from tests.analysis.factory import (
    HistoryBuilder,
    canceled_holder_history,
    contract_edit_history,
)


def test_siblings_of_one_step_type_collapse_into_one_node():
    graph = lineage_graph(contract_edit_history())
    enter = graph.node_of("EnterContractEdit-5")
    assert (enter.kind, enter.label, enter.count) == ("group", "EnterContractEdit ×8", 8)
    assert enter.statuses == (("Failed", 1), ("Completed", 7))
    assert enter.status == "Failed"
    # Children of a collapsed group collapse too when they are siblings again.
    assert graph.node_of("EditContract-3").label == "EditContract ×7"
    assert graph.node_of("ReleaseContractEditToken-2").kind == "step"
    assert graph.status_counts() == {"Completed": 23, "Failed": 2}


def test_without_collapse_every_execution_is_a_node_with_its_parent_edge():
    graph = lineage_graph(contract_edit_history(), collapse_at=None, messages=False)
    steps = [n for n in graph.nodes if n.kind == "step"]
    assert len(steps) == 25
    lineage = {(e.source, e.target) for e in graph.edges_of("lineage")}
    assert ("__start__", "StartContractEdits-1") in lineage
    assert ("EditContract-3", "SaveContractEdit-3") in lineage
    (recovery, *_) = graph.edges_of("recovery")
    assert (recovery.source, recovery.label) == ("EnterContractEdit-2", "Execute failure")


def test_message_edges_run_from_publisher_to_consumer():
    graph = lineage_graph(contract_edit_history(), collapse_at=None)
    token = {(e.source, e.target) for e in graph.edges_of("message")
             if e.label == "contractEditToken"}
    assert ("StartContractEdits-1", "EnterContractEdit-1") in token
    assert ("SaveContractEdit-1", "EnterContractEdit-2") in token
    assert ("ReleaseContractEditToken-1", "EnterContractEdit-3") in token
    assert len(token) == 8


def test_the_flow_end_node_shows_the_closing_decision():
    graph = lineage_graph(contract_edit_history())
    end = graph.node("__end__")
    assert (end.kind, end.status) == ("end", "COMPLETED")
    (close,) = graph.edges_of("close")
    assert (close.source, close.label) == ("FinishContractEdits-1", "graceful_complete")


def test_canceled_is_sticky_and_force_complete_closes():
    graph = lineage_graph(canceled_holder_history(), collapse_at=None)
    assert graph.node("EnterContractEdit-1").status == "Canceled"
    assert graph.node("Late-1").status == "Canceled"
    (close,) = graph.edges_of("close")
    assert (close.source, close.label) == ("EnterContractEdit-2", "force_complete")


def test_dex_web_rules_pending_waiting_and_parent_fallback():
    b = HistoryBuilder()
    b.start({"flow_type": "F", "start_step": "A"}, None)
    b.create("Orphan", None, "Gone-7")  # parent not in this run: falls back to the Flow start
    b.create("R", None, "__rpc/poke")
    b.wait_for("R-1", "ch", "ch.for 1")
    b.emit(EventKind.STEP_EXECUTE_PENDING, "A-1", method="execute", attempt=1, phase="scheduled")
    graph = lineage_graph(b.history(), collapse_at=None)
    assert graph.node("A-1").status == "Pending"
    assert graph.node("R-1").status == "Waiting"
    assert graph.node("__rpc/poke").label == "RPC · poke"
    parents = {e.target: e.source for e in graph.edges_of("lineage")}
    assert parents["Orphan-1"] == "__start__" and parents["R-1"] == "__rpc/poke"
    assert graph.close_status is None and "__end__" not in {n.node_id for n in graph.nodes}


def test_a_failed_flow_links_the_failure_to_the_end_node():
    b = HistoryBuilder()
    b.start({"flow_type": "F", "start_step": "A"}, None)
    b.start_attempt("A-1")
    b.fail_attempt("A-1")
    b.fail_execute("A-1", started=b.now, attempts=1, recovery=None)
    b.close("FAILED", error_type="WORKER_API_FAIL", error_message="boom")
    graph = lineage_graph(b.history())
    (close,) = graph.edges_of("close")
    assert (close.source, close.label) == ("A-1", "Execute failed")
    assert "WORKER_API_FAIL: boom" in graph.node("__end__").detail


def test_group_status_precedence_and_collapse_validation():
    assert group_status(["Completed", "Waiting", "Failed"]) == "Waiting"
    assert group_status([]) == "Completed"
    with pytest.raises(ValueError, match="collapse_at must be at least 2"):
        lineage_graph(contract_edit_history(), collapse_at=1)


def test_step_type_stats_count_statuses_attempts_and_execute_time():
    stats = step_type_stats(contract_edit_history())
    save = stats["SaveContractEdit"]
    assert (save.count, save.status, save.attempts, save.failed_attempts) == (6, "Failed", 7, 2)
    assert save.execute_s == pytest.approx(14.0)
