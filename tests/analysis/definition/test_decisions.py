"""Execute decisions: go_to, fan-outs (×N, ×2), close markers, cancellations, dynamic targets."""

from __future__ import annotations

from dexviz.analysis.definition import analyze_flow
from tests.analysis.definition.helpers import FIXTURES, codes, decisions, transitions

STEPS = """
class A(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        {body}

class B(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()

class C(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()

class DecisionFlow(Flow[int]):
    def get_steps(self) -> StepList[int]:
        return StepList.start_step(A()).other_steps(B(), C())
"""


def _flow(body: str) -> str:
    lines = body.strip().splitlines()
    return STEPS.replace("{body}", "\n        ".join(lines))


def test_go_to_many_gets_one_fan_out_edge_per_target(analyze):
    graph = analyze(_flow("return go_to_many(StepMovement.of(B, 1), StepMovement(C, 2))"))
    assert transitions(graph) == {("A", "B", None, None), ("A", "C", None, None)}
    assert {e.label for e in graph.edges_of("transition")} == {"fan-out"}


def test_fan_outs_built_in_loops_and_comprehensions_draw_once_with_many(analyze):
    graph = analyze(_flow("""
moves = [StepMovement.of(B, i) for i in range(n)]
for i in range(n):
    moves.append(StepMovement.of(C, i))
moves.append(StepMovement.of(A, 0))
return go_to_many(*moves, *(StepMovement.of(B, -i) for i in range(3)))
"""))
    assert transitions(graph) == {
        ("A", "B", None, "×N"), ("A", "C", None, "×N"), ("A", "A", None, None),
    }
    assert len(graph.edges_of("transition")) == 3


def test_a_target_listed_twice_is_marked_times_two(analyze):
    graph = analyze(_flow("return go_to_many(StepMovement.of(B, 1), StepMovement.of(B, 2))"))
    assert transitions(graph) == {("A", "B", None, "×2")}


def test_close_markers(analyze):
    graph = analyze(_flow("""
if n == 1:
    return graceful_complete(n)
if n == 2:
    return force_complete()
if n == 3:
    return force_fail("three")
return dead_end()
"""))
    assert [d[0] for d in decisions(graph, "A")] == [
        "gracefulComplete", "forceComplete", "forceFail", "deadEnd",
    ]
    assert all(n.decision and n.decision.is_close for n in graph.nodes_of("decision")
               if n.parent_id == "step:A")


def test_cancellations_all_and_siblings_are_kept_on_the_decision(analyze):
    graph = analyze(_flow(
        "return go_to(B, n).with_canceling_steps(C).with_canceling_sibling_steps(A)"
    ))
    decision = next(n for n in graph.nodes_of("decision") if n.parent_id == "step:A")
    assert decision.decision is not None
    assert [(c.step_id, c.scope) for c in decision.decision.cancellations] == [
        ("step:C", "all"), ("step:A", "siblings"),
    ]
    assert transitions(graph) == {("A", "B", None, None)}


def test_force_complete_if_channels_empty_checks_channels_and_falls_back(analyze):
    graph = analyze("X = Channel('leftovers', int)\n" + _flow(
        "return force_complete_if_channels_empty(n, StepMovement.of(A, n + 1), X)"
    ))
    decision = next(n for n in graph.nodes_of("decision") if n.parent_id == "step:A")
    assert decision.decision is not None
    assert decision.decision.checked_channels == ("channel:leftovers",)
    edge = graph.edges_of("transition")[0]
    assert (edge.label, graph.node(edge.target).name) == ("fallback", "A")


def test_go_to_accepts_classes_instances_type_of_self_and_flow_attributes(analyze):
    graph = analyze("""
class A(Step[int]):
    def __init__(self, flow: "InstanceFlow") -> None:
        self.flow = flow

    def execute(self, context: Context, n: int) -> StepDecision:
        if n == 0:
            return go_to(type(self), 1)
        if n == 1:
            return go_to(self.__class__, 2)
        if n == 2:
            return go_to(self.flow.b, 3)
        return go_to(C(), 4)

class B(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()

class C(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()

class InstanceFlow(Flow[int]):
    def __init__(self) -> None:
        self.a = A(self)
        self.b = B()
        self.c = C()

    def get_steps(self) -> StepList[int]:
        return StepList.start_step(self.a).other_steps(self.b, self.c)
""")
    assert {(t[0], t[1]) for t in transitions(graph)} == {("A", "A"), ("A", "B"), ("A", "C")}
    assert graph.valid


def test_a_run_time_target_becomes_an_unknown_node_with_a_diagnostic(analyze):
    graph = analyze(_flow("return go_to(pick_step(n), n)"))
    unknown = graph.nodes_of("unknown")
    assert [(n.name, n.parent_id) for n in unknown] == [("pick_step(n)", "step:A")]
    edge = next(e for e in graph.edges_of("transition") if e.target == unknown[0].id)
    assert edge.label == "dynamic"
    assert "dynamic_step_target" in codes(graph)
    diagnostic = next(d for d in graph.diagnostics if d.code == "dynamic_step_target")
    assert diagnostic.severity == "error" and diagnostic.line == 12
    assert diagnostic.path.endswith("flow_under_test.py")
    assert "pick_step(n)" in diagnostic.message
    assert not graph.valid


def test_a_spread_of_unknown_movements_is_an_unknown_fan_out(analyze):
    graph = analyze(_flow("return go_to_many(*self.plan(n))"))
    unknown = graph.nodes_of("unknown")
    assert [n.name for n in unknown] == ["self.plan(n)"]
    assert graph.edges_of("transition")[0].multiplicity == "×N"


def test_a_return_that_is_no_decision_is_an_unknown_decision(analyze):
    graph = analyze(_flow("return self.decide(n)"))
    assert decisions(graph, "A") == [("unknown", None)]
    assert codes(graph)[:1] == ["hidden_dex_decision"]


def test_an_unregistered_target_is_reported(analyze):
    graph = analyze(_flow("return go_to(Extra, n)") + """
class Extra(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()
""")
    assert ("A", "Extra", None, None) in transitions(graph)
    assert "unknown_step_target" in codes(graph)


def test_rpc_results_with_next_steps_and_cancellations():
    graph = analyze_flow(FIXTURES / "rpc_driven.py")
    assert [n.name for n in graph.nodes_of("rpc")] == [
        "assign", "post_update", "closeTicket", "describe",
    ]
    assert decisions(graph, "assign") == [("rpcResult", None)]
    assert decisions(graph, "describe") == []  # a plain RPCResult moves nothing
    assert ("assign", "WorkOnTicket", None, None) in transitions(graph)
    close = next(n for n in graph.nodes_of("decision") if n.parent_id == "rpc:closeTicket")
    assert close.decision is not None
    assert [c.step_id for c in close.decision.cancellations] == ["step:WorkOnTicket"]


def test_self_loops_are_transitions_to_the_same_step():
    graph = analyze_flow(FIXTURES / "self_loop.py")
    loops = {(t[0], t[2]) for t in transitions(graph) if t[0] == t[1]}
    assert loops == {("PollJob", "status == 'running'"), ("FetchPage", "token")}
