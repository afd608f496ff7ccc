"""Bad input: each case gives a clear error or diagnostic naming the file and the line."""

from __future__ import annotations

import pytest

from dexviz.analysis.definition import DefinitionSourceError, analyze_flow
from tests.analysis.definition.helpers import FIXTURES


def test_a_file_without_a_flow(write_flow):
    path = write_flow("""
class NotAFlow:
    pass
""")
    with pytest.raises(DefinitionSourceError) as caught:
        analyze_flow(path)
    assert caught.value.code == "flow_not_found"
    assert str(caught.value).startswith(f"{path}: no Flow class found")


def test_two_flows_and_no_choice_lists_both_with_their_lines(write_flow):
    path = write_flow("""
class One(Flow[int]):
    pass

class Two(Flow[int]):
    pass
""")
    with pytest.raises(DefinitionSourceError) as caught:
        analyze_flow(path)
    message = str(caught.value)
    assert caught.value.code == "multiple_flows"
    assert message.startswith(f"{path}:13:1: 2 Flows found: One (line 10), Two (line 13)")
    assert "flow='One'" in message and f"{path}:One" in message
    assert caught.value.line == 13


def test_a_flow_name_that_is_not_there_lists_the_flows():
    with pytest.raises(DefinitionSourceError, match=r"no Flow named 'Nope'; Flows in this "
                       r"file: CheckFlow \(line 38\), BatchFlow \(line 79\)"):
        analyze_flow(FIXTURES / "several_flows.py", "Nope")


def test_a_syntax_error_names_file_line_and_column(write_flow):
    path = write_flow("class Broken(Flow[int]:\n    pass\n", header=False)
    with pytest.raises(DefinitionSourceError) as caught:
        analyze_flow(path)
    assert caught.value.code == "syntax_error"
    assert caught.value.line == 1
    assert str(caught.value).startswith(f"{path}:1:")
    assert "syntax error" in str(caught.value)


def test_a_run_time_go_to_target_is_a_diagnostic_with_file_and_line(write_flow):
    path = write_flow("""
import random

class A(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to(random.choice([A, B]), n)

class B(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()

class RandomFlow(Flow[int]):
    def get_steps(self) -> StepList[int]:
        return StepList.start_step(A()).other_steps(B())
""")
    graph = analyze_flow(path)
    diagnostic = next(d for d in graph.diagnostics if d.code == "dynamic_step_target")
    assert diagnostic.format().startswith(f"{path}:14:22: error dynamic_step_target:")
    assert "random.choice([A, B])" in diagnostic.message
    assert [n.id for n in graph.nodes_of("unknown")] == ["unknown:A:14:21"]


def test_a_dynamic_step_registration_is_a_diagnostic(write_flow):
    path = write_flow("""
class A(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()

class Dyn(Flow[int]):
    def get_steps(self) -> StepList[int]:
        return StepList.start_step(A()).other_steps(*make_steps())
""")
    graph = analyze_flow(path)
    assert [(d.code, d.line) for d in graph.diagnostics] == [("dynamic_step_registration", 16)]


def test_a_missing_file_and_a_directory_are_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no_such_flow.py: no such Flow source file"):
        analyze_flow(tmp_path / "no_such_flow.py")
    with pytest.raises(DefinitionSourceError, match="is a directory"):
        analyze_flow(tmp_path)


def test_a_registered_step_defined_elsewhere_is_reported(write_flow):
    path = write_flow("""
from elsewhere import Imported

class Local(Flow[int]):
    def get_steps(self) -> StepList[int]:
        return StepList.start_step(Imported())
""")
    graph = analyze_flow(path)
    assert graph.start_step_id == "step:Imported"
    assert [(d.code, d.line) for d in graph.diagnostics] == [("step_handler_not_in_file", 14)]
