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


def test_violating_states_are_red_and_start_states_boxed() -> None:
    graph = StateGraph()
    graph.add_path("a", [("b", "RUNNING", "step one"), ("c", "COMPLETED", 'say "hi"')])
    graph.violating.add("c")
    dot = graph.to_dot()
    assert 's0 [fillcolor="#9aa5b1", tooltip="a RUNNING", shape=box];' in dot
    assert 's2 [fillcolor="#d64545", tooltip="c COMPLETED"];' in dot
    assert 's1 -> s2 [tooltip="say \\"hi\\""];' in dot
    assert len(graph) == 3


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
        assert bar.text == "3 schedules, 7 states, 1 violation, 2 pruned"
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
