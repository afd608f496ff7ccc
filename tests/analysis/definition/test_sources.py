"""Where the source comes from (path, module, class, instance) and how the SDK is spelled."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from dexviz.analysis.definition import analyze_flow
from tests.analysis.definition.helpers import FIXTURES, transitions

SPELLINGS = {
    "from dex import": """
from dex import Flow, Step, StepList, go_to, dead_end, Wait, Channel
T = Channel("t", int)
class A(Step[int]):
    def wait_for(self, context, n): return Wait.until(T.for_one())
    def execute(self, context, n): return go_to(B, n)
class B(Step[int]):
    def execute(self, context, n): return dead_end()
class F(Flow[int]):
    def get_steps(self): return StepList.start_step(A()).other_steps(B())
""",
    "import dex": """
import dex
T = dex.Channel("t", int)
class A(dex.Step[int]):
    def wait_for(self, context, n): return dex.Wait.until(T.for_one())
    def execute(self, context, n): return dex.go_to(B, n)
class B(dex.Step[int]):
    def execute(self, context, n): return dex.dead_end()
class F(dex.Flow[int]):
    def get_steps(self): return dex.StepList.start_step(A()).other_steps(B())
""",
    "aliases and submodules": """
import dexviz as dx
from dex.step import Step as BaseStep
from dex import go_to as move, Wait as W
from dexviz.sdk.channel import Channel
T = Channel("t", int)
class A(BaseStep[int]):
    def wait_for(self, context, n): return W.until(T.for_one())
    def execute(self, context, n): return move(B, n)
class B(BaseStep[int]):
    def execute(self, context, n): return dx.dead_end()
class F(dx.Flow[int]):
    def get_steps(self): return dx.StepList.start_step(A()).other_steps(B())
""",
    "star import": """
from dex import *
T = Channel("t", int)
class A(Step[int]):
    def wait_for(self, context, n): return Wait.until(T.for_one())
    def execute(self, context, n): return go_to(B, n)
class B(Step[int]):
    def execute(self, context, n): return dead_end()
class F(Flow[int]):
    def get_steps(self): return StepList.start_step(A()).other_steps(B())
""",
}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_every_sdk_spelling_resolves_the_same(analyze, spelling):
    graph = analyze(SPELLINGS[spelling], header=False)
    assert graph.flow_name == "F"
    assert transitions(graph) == {("A", "B", None, None)}
    assert [e.label for e in graph.edges_of("wait_condition")] == ["t.for 1"]


def test_a_look_alike_flow_from_elsewhere_is_not_a_flow(analyze):
    with pytest.raises(ValueError, match="no Flow class found"):
        analyze("""
from somewhere import Flow
class F(Flow):
    pass
""", header=False)


def _import(path: Path, name: str, monkeypatch: pytest.MonkeyPatch):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


def test_a_module_a_flow_class_or_a_flow_instance_reads_the_same_file(monkeypatch):
    module = _import(FIXTURES / "several_flows.py", "dexviz_test_several_flows", monkeypatch)
    by_path = analyze_flow(FIXTURES / "several_flows.py", "CheckFlow")
    by_module = analyze_flow(module, "CheckFlow")
    by_class = analyze_flow(module.CheckFlow)
    by_instance = analyze_flow(module.BatchFlow())
    assert by_module.edges == by_path.edges == by_class.edges
    assert by_class.flow_name == "CheckFlow"
    assert by_instance.flow_name == "BatchFlow"


def test_a_class_without_a_source_file_is_a_clear_type_error():
    namespace: dict[str, object] = {"__name__": "notebook_cell"}
    exec("class Typed:\n    pass\n", namespace)  # a class with no file, as in a notebook cell
    with pytest.raises(TypeError, match="cannot find the source file of Typed"):
        analyze_flow(namespace["Typed"])
    with pytest.raises(TypeError, match="needs a path to a .py file"):
        analyze_flow(42)


def test_a_path_may_name_its_flow_after_a_colon():
    graph = analyze_flow(f"{FIXTURES / 'several_flows.py'}:BatchFlow")
    assert graph.flow_name == "BatchFlow"
    assert graph.source_path.endswith("several_flows.py")


def test_a_flow_may_be_chosen_by_its_flow_type():
    assert analyze_flow(FIXTURES / "timers_any_of.py", "UserSignup").flow_name == "UserSignup"
    assert analyze_flow(FIXTURES / "timers_any_of.py", "SignupFlow").flow_name == "UserSignup"


def test_step_type_overrides_name_the_step(analyze):
    graph = analyze("""
class A(Step[int]):
    def get_step_type(self) -> str:
        return "Init"

    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to(A, n)

class Renamed(Flow[int]):
    def get_steps(self) -> StepList[int]:
        return StepList.start_step(A())
""")
    assert graph.start_step_id == "step:Init"
    assert transitions(graph) == {("Init", "Init", None, None)}
