"""Channels and Attributes: Dex names, publishes/reads/writes, helpers, schema checks."""

from __future__ import annotations

from dexviz.analysis.definition import analyze_flow
from tests.analysis.definition.helpers import FIXTURES, codes, connections


def test_resources_are_named_by_their_dex_name_not_the_variable():
    graph = analyze_flow(FIXTURES / "failure_routing.py")
    assert {n.id for n in graph.nodes_of("channel")} == {"channel:ledger"}
    assert {n.id for n in graph.nodes_of("attribute")} == {"attribute:transferState"}
    ledger = graph.node("channel:ledger")
    assert ledger.resource is not None and ledger.resource.variable == "LEDGER"


def test_publishes_and_writes_made_through_a_helper_belong_to_the_calling_step():
    graph = analyze_flow(FIXTURES / "failure_routing.py")
    publishers = {c[1] for c in connections(graph) if c[0] == "resource_publish"}
    assert publishers == {"Debit", "Credit", "FailTransfer", "UndoDebit", "LogNotice"}
    writers = {c[1] for c in connections(graph) if c[0] == "resource_write"}
    assert writers == {"Debit", "Credit", "FailTransfer", "UndoDebit"}
    assert graph.valid and graph.diagnostics == ()


def test_class_attribute_resources_and_attribute_reads_and_writes():
    graph = analyze_flow(FIXTURES / "rpc_driven.py")
    edges = connections(graph)
    assert ("resource_write", "OpenTicket", "status", "set") in edges
    assert ("resource_write", "assign", "assignee", "set") in edges
    assert ("resource_read", "status", "describe", "get") in edges
    assert ("resource_publish", "post_update", "ticketUpdates", "publish") in edges
    assert ("resource_read", "ticketUpdates", "WorkOnTicket", "results") in edges


def test_resource_names_may_come_from_constants_or_be_dynamic(analyze):
    graph = analyze("""
NAME = "fromConstant"
FIRST = Channel(NAME, str)
SECOND = Attribute(name="keyword", value_type=int)
THIRD = Channel(f"dyn{1}", str)

class Only(Step[str]):
    def execute(self, context: Context, value: str) -> StepDecision:
        FIRST.publish(context, value)
        SECOND.set(context, 1)
        THIRD.publish(context, value)
        return dead_end()

class ResourceFlow(Flow[str]):
    def get_steps(self) -> StepList[str]:
        return StepList.start_step(Only())

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(FIRST, SECOND, THIRD)
""")
    assert {n.name for n in graph.nodes if n.kind in ("channel", "attribute")} == {
        "fromConstant", "keyword", "THIRD",
    }
    assert codes(graph) == ["dynamic_resource_name"]
    assert graph.valid  # a warning only


def test_unused_and_undeclared_resources_are_warned_about(analyze):
    graph = analyze("""
USED = Channel("used", str)
IDLE = Channel("idle", str)

class Only(Step[str]):
    def execute(self, context: Context, value: str) -> StepDecision:
        USED.publish(context, value)
        return dead_end()

class SchemaFlow(Flow[str]):
    def get_steps(self) -> StepList[str]:
        return StepList.start_step(Only())

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema(channels=(IDLE,))
""")
    assert sorted(codes(graph)) == ["undeclared_resource", "unused_resource"]
    assert graph.node("channel:idle").kind == "channel"


def test_an_unresolvable_publish_is_reported_not_dropped_silently(analyze):
    graph = analyze("""
class Only(Step[str]):
    def execute(self, context: Context, value: str) -> StepDecision:
        channel = pick_channel(value)
        channel.publish(context, value)
        return dead_end()

class UnresolvedFlow(Flow[str]):
    def get_steps(self) -> StepList[str]:
        return StepList.start_step(Only())
""")
    assert codes(graph) == ["unresolved_resource"]
    assert graph.diagnostics[0].line == 13
