"""WaitFor returns: factories, channel condition labels, humanised timers, SubFlows."""

from __future__ import annotations

import pytest

from dexviz.analysis.definition import analyze_flow
from tests.analysis.definition.helpers import FIXTURES, codes, connections, waits

FLOW = """
A = Channel("alpha", str)
B = ChannelMap("beta", int)
DAILY = timedelta(days=1)

class Waiter(Step[int]):
    def wait_for(self, context: Context, n: int) -> Wait:
        return {wait}

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()

class Child(Flow[int]):
    def get_steps(self) -> StepList[int]:
        return StepList.start_step(Waiter())

class WaitFlow(Flow[int]):
    def get_steps(self) -> StepList[int]:
        return StepList.start_step(Waiter())

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(A, B)
"""


@pytest.mark.parametrize(
    ("wait", "expected"),
    [
        ("Wait.until(A.for_one())", ("until", ["alpha.for 1"])),
        ("Wait.until(A.for_n(n))", ("until", ["alpha.for n"])),
        ("Wait.all_of(A.at_least(2), A.at_most(n + 1))",
         ("allOf", ["alpha.at least 2", "alpha.at most n + 1"])),
        ("Wait.any_of(A.for_range(at_least=1, at_most=5), A.for_range(at_most=3))",
         ("anyOf", ["alpha.for 1..5", "alpha.at most 3"])),
        ("Wait.until(A.for_range(at_least=2))", ("until", ["alpha.at least 2"])),
        ("Wait.until(B.for_one(str(n)))", ("until", ["beta[str(n)].for 1"])),
        ("Wait.until(B.for_n('k', 3))", ("until", ["beta['k'].for 3"])),
        ("Wait.skip_immediately()", ("skipWaitImmediately", [])),
    ],
)
def test_channel_condition_labels(analyze, wait, expected):
    graph = analyze(FLOW.replace("{wait}", wait), "WaitFlow")
    assert waits(graph, "Waiter") == [(*expected, None)]
    assert graph.valid


@pytest.mark.parametrize(
    ("duration", "label"),
    [
        ("timedelta(hours=24)", "24 hours timer"),
        ("timedelta(days=1)", "1 day timer"),
        ("DAILY", "1 day timer"),
        ("timedelta(minutes=1, seconds=30)", "1 minute 30 seconds timer"),
        ("timedelta(1, 5)", "1 day 5 seconds timer"),
        ("timedelta(weeks=2)", "2 weeks timer"),
        ("timedelta(seconds=0)", "0 seconds timer"),
        ("timedelta(hours=1.5)", "1.5 hours timer"),
        ("timedelta(seconds=n)", "timedelta(seconds=n) timer"),
    ],
)
def test_timers_are_humanised(analyze, duration, label):
    graph = analyze(FLOW.replace("{wait}", f"Wait.until(Timer.by_duration({duration}))"),
                    "WaitFlow")
    assert waits(graph, "Waiter") == [("until", [label], None)]


def test_wait_condition_edges_go_from_each_channel_to_the_wait(analyze):
    graph = analyze(FLOW.replace(
        "{wait}", "Wait.any_of(A.for_one(), B.for_one('x'), Timer.by_duration(DAILY))"
    ), "WaitFlow")
    assert [c for c in connections(graph) if c[0] == "wait_condition"] == [
        ("wait_condition", "alpha", "anyOf", "alpha.for 1"),
        ("wait_condition", "beta", "anyOf", "beta['x'].for 1"),
    ]


def test_any_combination_of_keeps_its_groups():
    graph = analyze_flow(FIXTURES / "timers_any_of.py")
    combo = next(n for n in graph.nodes_of("wait") if n.name == "anyComboOf")
    assert combo.wait is not None
    assert [(c.label, c.group) for c in combo.wait.conditions] == [
        ("profileFields.at least 2", 0), ("consents.for 1..3", 0), ("7 days timer", 1),
    ]
    assert combo.condition == "not (email.endswith('@example.com'))"


def test_conditions_held_in_local_variables_and_subflows(analyze):
    graph = analyze(FLOW.replace("{wait}", "Wait.all_of(first, SubFlow.run(Child(), n))")
                    .replace("        return Wait.all_of",
                             "        first = A.for_one(condition_id='a')\n"
                             "        return Wait.all_of"), "WaitFlow")
    assert waits(graph, "Waiter") == [("allOf", ["alpha.for 1", "Child"], None)]
    kinds = [c.kind for n in graph.nodes_of("wait") for c in (n.wait.conditions if n.wait else ())]
    assert kinds == ["channel", "subflow"]


def test_an_unreadable_condition_is_an_error_diagnostic(analyze):
    graph = analyze(FLOW.replace("{wait}", "Wait.until(self.pick_condition(n))"), "WaitFlow")
    assert waits(graph, "Waiter") == [("until", ["self.pick_condition(n)"], None)]
    errors = [d for d in graph.diagnostics if d.severity == "error"]
    assert [d.code for d in errors] == ["hidden_dex_wait"]
    assert not graph.valid
    assert "Waiter.wait_for" in errors[0].message
    assert "unused_resource" in codes(graph)  # neither alpha nor beta is waited on now


def test_a_wait_for_returning_no_wait_is_an_unknown_wait(analyze):
    graph = analyze(FLOW.replace("{wait}", "self.compute()"), "WaitFlow")
    assert waits(graph, "Waiter") == [("unknown", ["self.compute()"], None)]
    assert [d.code for d in graph.diagnostics if d.severity == "error"] == ["hidden_dex_wait"]


def test_guarded_wait_returns_are_separate_waits():
    graph = analyze_flow(FIXTURES / "timers_any_of.py")
    assert [(w[0], w[2]) for w in waits(graph, "CompleteProfile")] == [
        ("skipWaitImmediately", "email.endswith('@example.com')"),
        ("anyComboOf", "not (email.endswith('@example.com'))"),
    ]
