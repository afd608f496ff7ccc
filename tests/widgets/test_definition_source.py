"""The Debugger's Definition tab finds the recorded Flow source wherever the kernel runs."""

from __future__ import annotations

import json
import linecache
import sys
import textwrap
import types
from pathlib import Path

import pytest

import dexviz
from dexviz.widgets import Debugger, GraphUnavailable
from tests.widgets.helpers import history

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("imported", [True, False])
def test_notebook_05_shows_the_definition_from_the_notebooks_folder(monkeypatch, imported):
    monkeypatch.chdir(REPO / "notebooks")
    if not imported:  # found through the import machinery's finders, without importing it
        monkeypatch.delitem(sys.modules, "dexviz.examples.contract_edit")
    debugger = Debugger(history(reviewers=4), token_channel="contractEditToken",
                        graph="definition")
    assert "EnterContractEdit" in debugger.pictures.definition_dot()


def test_a_history_file_finds_the_source_beside_it(tmp_path, monkeypatch):
    folder = tmp_path / "shared"
    folder.mkdir()
    source = (REPO / "dexviz" / "examples" / "contract_edit.py").read_text()
    (folder / "handoff_flow.py").write_text(source)
    _write_history(folder / "history.jsonl", module="handoff_flow",
                   source_file="handoff_flow.py")
    monkeypatch.chdir(tmp_path)
    debugger = Debugger(folder / "history.jsonl")
    assert "EnterContractEdit" in debugger.pictures.definition_dot()


def _write_history(path: Path, **spec: str) -> None:
    lines = [json.loads(line) for line in history(reviewers=2).to_jsonl().splitlines()]
    start = next(e for e in lines if e.get("kind") == "FlowStartedOrContinued")
    start["payload"]["flow"].update(spec)
    # An edited history no longer matches its header's count and digest: drop them.
    lines[0].pop("events", None)
    lines[0].pop("sha256", None)
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))


def test_when_nothing_is_found_the_message_lists_the_paths_and_flow_source(tmp_path, monkeypatch):
    path = tmp_path / "h" / "history.jsonl"
    path.parent.mkdir()
    _write_history(path, module="gone_module", source_file="../gone/flow.py")
    monkeypatch.chdir(tmp_path)
    debugger = Debugger(str(path), graph="definition")
    with pytest.raises(GraphUnavailable) as caught:
        debugger.graph_svg()
    message = str(caught.value)
    assert "'../gone/flow.py' was not found" in message
    assert str(tmp_path / "gone" / "flow.py") in message
    assert "pass flow_source=" in message


def test_a_flow_typed_into_cells_is_drawn_by_the_debugger(monkeypatch):
    cells = {
        "/tmp/ipykernel_0/dbg-1.py": "from dexviz import Context, Flow, Step, StepList, dead_end\n",
        "/tmp/ipykernel_0/dbg-2.py": textwrap.dedent("""
            class Only(Step[int]):
                def execute(self, context: Context, n: int):
                    return dead_end()

            class TypedFlow(Flow[int]):
                def get_steps(self):
                    return StepList.start_step(Only())
            """),
    }
    main = types.ModuleType("__main__")
    for name, text in cells.items():
        linecache.cache[name] = (len(text), None, text.splitlines(True), name)
        exec(compile(text, name, "exec"), main.__dict__)  # noqa: S102 - cells under test
    monkeypatch.setitem(sys.modules, "__main__", main)
    try:
        run = dexviz.simulate(main.TypedFlow(), 1)
        assert run.history.flow_spec["module"] == "__main__"
        dot = Debugger(run, graph="definition").pictures.definition_dot()
        assert "Only" in dot
    finally:
        for name in cells:
            linecache.cache.pop(name, None)
