"""The report's state graph (DOT, golden), its HTML, and the progress displays."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dexviz.explore import checks, explore
from dexviz.explore.progress import Progress
from dexviz.explore.report import StateGraph
from tests.explore.flows import RaceFlow

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "explore" / "race-1-states.dot"


def test_the_state_graph_dot_matches_its_golden_file(update_golden: bool) -> None:
    report = explore(RaceFlow(), 1, check=[checks.terminates()], progress=False)
    assert report.graph is not None
    dot = report.graph.to_dot()
    if update_golden or os.environ.get("DEXVIZ_UPDATE_GOLDEN") == "1":
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(dot, encoding="utf-8")
    assert dot == GOLDEN.read_text(encoding="utf-8")
    assert dot == explore(RaceFlow(), 1, check=[], progress=False).graph.to_dot()  # type: ignore[union-attr]


def test_violating_states_are_red_and_start_states_ringed() -> None:
    graph = StateGraph()
    graph.add_path("a", [("b", "RUNNING", "step one"), ("c", "COMPLETED", 'say "hi"')])
    graph.violating.add("c")
    dot = graph.to_dot()
    start = 's0 [fillcolor="#9aa5b1", tooltip="a RUNNING", peripheries=2, label="start\\nRUNNING"];'
    assert start in dot
    end = 's2 [fillcolor="#d64545", tooltip="c COMPLETED", label="COMPLETED\\nsay \\"hi\\""];'
    assert end in dot
    assert 's1 -> s2 [tooltip="say \\"hi\\""];' in dot
    assert len(graph) == 3


def test_the_state_graph_labels_every_node_with_its_status_and_step() -> None:
    graph = StateGraph()
    graph.add_path("a", [("b", "RUNNING", "Take-1 completes (go_to Give)")])
    dot = graph.to_dot()
    assert 'label=""' not in dot
    assert 'label="RUNNING\\nTake-1 completes"' in dot


def test_a_graph_above_the_limit_is_drawn_collapsed_by_depth_and_status() -> None:
    from dexviz.explore.report import GRAPH_LIMIT, _graph_block

    graph = StateGraph()
    for i in range(GRAPH_LIMIT + 5):
        graph.add_path("s", [(f"a{i}", "RUNNING", "step")])
    graph.add_path("s", [("end", "COMPLETED", "done")])
    dot = graph.to_dot()
    assert dot.count("->") == 2 and f"depth 1: RUNNING ({GRAPH_LIMIT + 5} states)" in dot
    assert "depth 1: COMPLETED (1 state)" in dot
    block = _graph_block("<svg/>", graph)
    assert block.startswith("<details><summary>") and "collapsed" in block
    assert _graph_block("<svg/>", StateGraph()).startswith("<details open>")


def test_every_output_says_states_pruned_for_states_pruned() -> None:
    import re

    for strategy in ("dpor", "stateful"):
        report = explore(RaceFlow(), 1, check=[], strategy=strategy, progress=False, workers=1)
        bar = Progress(None, False)
        bar.update(3, 7, 0, pruned=2)
        bar.update_states(7, 9, 2, 1, 0)
        for text in (repr(report), str(report), report._repr_html_(), report.counts(), bar.text):
            for found in re.finditer("pruned", text):
                before = text[max(0, found.start() - 7) : found.start()]
                assert before.endswith(("states ", "states_", " state ")), (strategy, text)


def test_html_lists_the_counts_and_draws_small_graphs() -> None:
    report = explore(RaceFlow(), 1, check=[], progress=False)
    html = report._repr_html_()
    assert "<table>" in html and "distinct_states" in html and "PROVEN" in html


def test_progress_is_silent_when_disabled_or_not_interactive(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for enabled in (False, True):
        bar = Progress(10, enabled)
        bar.update(3, 7, 1, pruned=2)
        bar.close()
        assert bar.count == 3
        assert bar.text == "3 schedules, 7 states, 1 violation, 2 states pruned"
    assert capsys.readouterr() == ("", "")


def test_the_notebook_progress_bar_grows_past_its_total() -> None:
    pytest.importorskip("ipywidgets")
    from dexviz.widgets.progress import ProgressBar

    bar = ProgressBar(None)
    bar.update(5, "5 schedules")
    assert bar._bar.value == 5 and bar._bar.max == 10
    assert bar._label.value == "5 schedules"
    bar.close(5)
    assert bar._bar.max == 5


def test_a_finished_notebook_bar_leaves_its_final_counts_not_the_widget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("ipywidgets")
    import IPython.display

    from dexviz.widgets.progress import ProgressBar

    shown: list[object] = []

    class Handle:
        def update(self, value: object) -> None:
            shown.append(value)

    def display(value: object, display_id: bool = False) -> Handle:
        shown.append(value)
        return Handle()

    monkeypatch.setattr(IPython.display, "display", display)
    bar = ProgressBar(None)
    bar.update(5, "5 schedules, 2 states")
    bar.close(5, "explored: 5 schedules, 2 states")
    final = shown[-1]
    assert "IntProgress" not in repr(final) and repr(final) == "explored: 5 schedules, 2 states"
    assert "5 schedules" in final._repr_html_()  # type: ignore[attr-defined]
