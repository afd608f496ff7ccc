"""Guards rebuilt from if/elif/else, early returns, match, try, conditional expressions."""

from __future__ import annotations

from tests.analysis.definition.helpers import decisions, transitions

FLOW = """
class Done(Step[int]):
    def execute(self, context: Context, value: int) -> StepDecision:
        return dead_end()

class GuardFlow(Flow[int]):
    def get_steps(self) -> StepList[int]:
        return StepList.start_step(Under()).other_steps(Done())
"""


def _under(body: str) -> str:
    lines = "\n".join("        " + line for line in body.strip().splitlines())
    return (
        "class Under(Step[int]):\n"
        "    def execute(self, context: Context, x: int) -> StepDecision:\n"
        f"{lines}\n" + FLOW
    )


def test_early_return_negates_the_test_for_the_code_after_it(analyze):
    graph = analyze(_under("""
if x > 3:
    return dead_end()
return go_to(Done, x)
"""))
    assert decisions(graph, "Under") == [("deadEnd", "x > 3"), ("goTo", "not (x > 3)")]


def test_a_branch_that_only_raises_adds_no_guard(analyze):
    graph = analyze(_under("""
if x < 0:
    raise ValueError("negative")
return go_to(Done, x)
"""))
    assert decisions(graph, "Under") == [("goTo", None)]


def test_elif_chains_and_else_branches(analyze):
    graph = analyze(_under("""
if x == 1:
    return go_to(Done, x)
elif x == 2 or x == 3:
    return force_fail("two or three")
else:
    return graceful_complete(x)
"""))
    assert decisions(graph, "Under") == [
        ("goTo", "x == 1"),
        ("forceFail", "not (x == 1) and (x == 2 or x == 3)"),
        ("gracefulComplete", "not (x == 1) and not (x == 2 or x == 3)"),
    ]


def test_negating_not_drops_the_not_and_nested_ifs_combine(analyze):
    graph = analyze(_under("""
if not x:
    return dead_end()
if x > 10:
    if x > 100:
        return force_fail("huge")
    return go_to(Done, x)
return graceful_complete(x)
"""))
    assert decisions(graph, "Under") == [
        ("deadEnd", "not x"),
        ("forceFail", "x and x > 10 and x > 100"),
        ("goTo", "x and x > 10 and not (x > 100)"),
        ("gracefulComplete", "x and not (x > 10)"),
    ]


def test_conditional_expression_and_local_variable_branches(analyze):
    graph = analyze(_under("""
if x > 0:
    decision = go_to(Done, x)
else:
    decision = dead_end()
return decision if x != 7 else force_complete(x)
"""))
    assert decisions(graph, "Under") == [
        ("goTo", "x != 7 and x > 0"),
        ("deadEnd", "x != 7 and not (x > 0)"),
        ("forceComplete", "not (x != 7)"),
    ]


def test_match_cases_and_except_handlers(analyze):
    graph = analyze(_under("""
match x:
    case 1:
        return go_to(Done, x)
    case _:
        pass
try:
    y = 10 // x
except ZeroDivisionError:
    return force_fail("zero")
return graceful_complete(y)
"""))
    assert decisions(graph, "Under") == [
        ("goTo", "x == 1"),
        ("forceFail", "except ZeroDivisionError"),
        ("gracefulComplete", None),
    ]


def test_decisions_returned_by_a_helper_function_or_method_keep_their_guards(analyze):
    graph = analyze("""
def route(x: int) -> StepDecision:
    if x > 5:
        return go_to(Done, x)
    return dead_end()

class Under(Step[int]):
    def execute(self, context: Context, x: int) -> StepDecision:
        if x < 0:
            return self._negative(x)
        return route(x)

    def _negative(self, x: int) -> StepDecision:
        return force_fail("negative")
""" + FLOW)
    assert decisions(graph, "Under") == [
        ("forceFail", "x < 0"),
        ("goTo", "not (x < 0) and x > 5"),
        ("deadEnd", "not (x < 0) and not (x > 5)"),
    ]
    assert transitions(graph) == {("Under", "Done", "not (x < 0) and x > 5", None)}
