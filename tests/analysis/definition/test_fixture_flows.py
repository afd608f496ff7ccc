"""The six fixture Flows: what each one is there to exercise shows up in its graph."""

from __future__ import annotations

from dexviz.analysis.definition import analyze_flow
from tests.analysis.definition.helpers import FIXTURES, codes, connections, transitions, waits


def test_timers_and_any_of():
    graph = analyze_flow(FIXTURES / "timers_any_of.py")
    assert graph.flow_name == "UserSignup"
    assert waits(graph, "AwaitVerification") == [
        ("anyOf", ["24 hours timer", "emailVerified.for 1"], None),
    ]
    assert waits(graph, "SendReminder") == [("until", ["5 minutes 30 seconds timer"], None)]
    assert codes(graph) == ["unreachable_step"]  # ConfirmConsents: nothing goes there
    assert "ConfirmConsents" in graph.diagnostics[0].message


def test_rpc_driven_flow():
    graph = analyze_flow(FIXTURES / "rpc_driven.py")
    assert {n.id for n in graph.nodes_of("rpc")} == {
        "rpc:assign", "rpc:post_update", "rpc:closeTicket", "rpc:describe",
    }
    assert graph.valid and codes(graph) == []
    # WorkOnTicket is only reachable through the assign RPC.
    assert ("assign", "WorkOnTicket", None, None) in transitions(graph)


def test_loops_with_go_to_self():
    graph = analyze_flow(FIXTURES / "self_loop.py")
    assert ("PollJob", "PollJob", "status == 'running'", None) in transitions(graph)
    assert ("FetchPage", "FetchPage", "token", None) in transitions(graph)
    assert graph.valid and codes(graph) == []


def test_failure_routing():
    graph = analyze_flow(FIXTURES / "failure_routing.py")
    routes = {(c[1], c[2]) for c in connections(graph) if c[0] == "failure_transition"}
    assert routes == {("Debit", "FailTransfer"), ("Credit", "UndoDebit"), ("Notify", "LogNotice")}
    assert {e.label for e in graph.edges_of("failure_transition")} == {"Execute failure"}


def test_cancellation_decisions():
    graph = analyze_flow(FIXTURES / "cancellation.py")
    scopes = {
        (graph.node(n.parent_id or "").name, c.step_id, c.scope)
        for n in graph.nodes_of("decision") if n.decision
        for c in n.decision.cancellations
    }
    assert scopes == {
        ("AwaitQuote", "step:AwaitQuote", "siblings"),
        ("Deadline", "step:AwaitQuote", "all"),
        ("stop_quotes", "step:AwaitQuote", "all"),
        ("stop_quotes", "step:Deadline", "all"),
    }
    assert ("RequestQuotes", "AwaitQuote", None, "×N") in transitions(graph)
    assert ("RequestQuotes", "Deadline", None, None) in transitions(graph)
    assert graph.node("timeout_handler:QuoteFlow").name == "handle_timeout"


def test_several_flows_in_one_file():
    batch = analyze_flow(FIXTURES / "several_flows.py", "BatchFlow")
    check = analyze_flow(FIXTURES / "several_flows.py", "CheckFlow")
    assert [s.name for s in batch.steps] == ["Split", "RunCheck", "Summary"]
    assert [s.name for s in check.steps] == ["CheckItem"]
    assert waits(batch, "RunCheck") == [("until", ["CheckFlow"], None)]
    assert ("Split", "RunCheck", None, "×2") in transitions(batch)
    assert check.nodes_of("channel")[0].name == "childResults"
    assert not batch.nodes_of("channel")
