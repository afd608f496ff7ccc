"""Flows typed into notebook cells: their source is gathered from linecache, as IPython keeps it."""

from __future__ import annotations

import linecache
import textwrap
import types
from collections.abc import Callable, Iterator

import pytest

from dexviz.analysis.definition import analyze_flow
from dexviz.analysis.definition.cells import cell_source, notebook_cells
from tests.analysis.definition.helpers import transitions

Cells = Callable[..., types.ModuleType]


@pytest.fixture
def run_cells() -> Iterator[Cells]:
    """Run cells the way IPython does: each registered in linecache (no mtime), then executed."""
    registered: list[str] = []

    def run(*cells: str) -> types.ModuleType:
        module = types.ModuleType("__cells_under_test__")
        for number, body in enumerate(cells, start=len(registered) + 1):
            text = textwrap.dedent(body)
            filename = f"/tmp/ipykernel_0/cell-{id(module)}-{number}.py"
            linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
            registered.append(filename)
            exec(compile(text, filename, "exec"), module.__dict__)  # noqa: S102 - test cells
        return module

    yield run
    for filename in registered:
        linecache.cache.pop(filename, None)


IMPORTS = "from dexviz import Channel, Context, Flow, Step, StepList, Wait, go_to, dead_end\n"
CHANNEL = 'DONE = Channel("done", int)\n'
STEPS = """
class Publish(Step[int]):
    def execute(self, context: Context, n: int):
        DONE.publish(context, n)
        return go_to(Collect, n)

class Collect(Step[int]):
    def wait_for(self, context: Context, n: int):
        return Wait.until(DONE.for_one())

    def execute(self, context: Context, n: int):
        return dead_end()
"""
FLOW = """
class CellFlow(Flow[int]):
    def get_steps(self):
        return StepList.start_step(Publish()).other_steps(Collect())
"""


def test_a_flow_defined_across_cells_is_drawn_from_them(run_cells: Cells) -> None:
    module = run_cells(IMPORTS, CHANNEL, STEPS, FLOW, "print('unrelated cell')\n")
    graph = analyze_flow(module.CellFlow)
    assert graph.flow_name == "CellFlow"
    assert [s.name for s in graph.steps] == ["Publish", "Collect"]
    assert {(a, b) for a, b, *_ in transitions(graph)} == {("Publish", "Collect")}
    kinds = {(e.kind, e.source, e.target) for e in graph.edges}
    assert ("resource_publish", "step:Publish", "channel:done") in kinds
    assert ("wait_condition", "channel:done") in {(k, s) for k, s, _ in kinds}
    assert graph.source_path == "<cells of CellFlow>"


def test_an_instance_works_like_its_class(run_cells: Cells) -> None:
    module = run_cells(IMPORTS, CHANNEL, STEPS, FLOW)
    assert analyze_flow(module.CellFlow()).steps == analyze_flow(module.CellFlow).steps


def test_only_the_cells_the_flow_needs_are_read(run_cells: Cells) -> None:
    module = run_cells(IMPORTS, "x = 1/0 if False else 2\n", CHANNEL, STEPS, FLOW)
    found = cell_source(module.CellFlow)
    assert found is not None
    assert len(found.cells) == 4
    assert "x = 1/0" not in found.text


def test_the_latest_definition_of_a_redefined_step_wins(run_cells: Cells) -> None:
    changed = STEPS.replace("return dead_end()", "return go_to(Publish, n)")
    module = run_cells(IMPORTS, CHANNEL, STEPS, changed, FLOW)
    moves = transitions(analyze_flow(module.CellFlow))
    assert ("Collect", "Publish") in {(a, b) for a, b, *_ in moves}


def test_cells_are_read_not_run(run_cells: Cells) -> None:
    module = run_cells(IMPORTS, CHANNEL, STEPS, FLOW)
    marker = "/tmp/ipykernel_0/side-effect.py"
    text = "raise SystemExit('executed')\nclass Publish: pass\n"
    linecache.cache[marker] = (len(text), None, text.splitlines(True), marker)
    try:
        analyze_flow(module.CellFlow)  # the later cell redefines Publish; it is only parsed
    finally:
        linecache.cache.pop(marker)


def test_cells_that_do_not_parse_are_skipped(run_cells: Cells) -> None:
    broken = "/tmp/ipykernel_0/broken.py"
    linecache.cache[broken] = (3, None, ["def (:\n"], broken)
    try:
        assert broken not in {c.filename for c in notebook_cells()}
    finally:
        linecache.cache.pop(broken)


def test_a_class_with_a_file_is_not_read_from_cells() -> None:
    from dexviz.examples.contract_edit import ContractEditFlow

    assert analyze_flow(ContractEditFlow).source_path.endswith("contract_edit.py")


def test_a_class_from_nowhere_still_says_to_pass_a_path() -> None:
    namespace: dict[str, object] = {"__name__": "scratch"}
    exec(compile(IMPORTS + FLOW.replace("Publish()", "None"), "<string>", "exec"), namespace)  # noqa: S102
    with pytest.raises(TypeError, match="pass the path"):
        analyze_flow(namespace["CellFlow"])
