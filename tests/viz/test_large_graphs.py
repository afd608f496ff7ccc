"""Large runs still render: labels stay under Graphviz's 16,384-character limit, and a lineage
graph too big to lay out is collapsed with a note saying so."""

from __future__ import annotations

import re
import shutil
from typing import Any

import pytest

from dexviz import Context, Flow, Step, StepDecision, StepList, dead_end, go_to, simulate
from dexviz.analysis.executions import build_executions
from dexviz.analysis.lineage import lineage_graph
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits
from dexviz.viz._lineage_dot import lineage_dot
from dexviz.viz._lineage_trim import MAX_DRAWN_NODES, MORE_NODE_ID, trim_lineage
from dexviz.viz.dot import (
    MAX_DOT_STRING,
    MAX_LABEL_CHARS,
    DotGraph,
    HtmlLabel,
    cell,
    font,
    plain_text,
    row,
    shorten,
    table,
)
from dexviz.viz.execution_view import execution_graph

GRAPHVIZ_LIMIT = 16_384
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|<(?:[^<>]|<[^<>]*>)*>', re.S)


def _longest_token(dot: str) -> int:
    """The longest quoted string or HTML label in DOT text (roughly what Graphviz scans)."""
    return max((len(m.group(0)) for m in _TOKEN.finditer(dot)), default=0)


def test_shorten_keeps_short_text_and_cuts_long_text_with_a_note() -> None:
    assert shorten("abc") == "abc"
    cut = shorten("x" * 50_000)
    assert len(cut) <= MAX_LABEL_CHARS + 40
    assert cut.endswith("more characters)") and cut.startswith("x" * 100)


def test_plain_text_of_markup() -> None:
    markup = table([row(cell(font("a < b & c", bold=True))), row(cell("line<BR/>two"))]).markup
    assert plain_text(markup) == "a < b & c line\ntwo"


@pytest.mark.parametrize("size", [16_000, 16_385, 100_000, 1_000_000])
def test_a_huge_tooltip_or_label_stays_under_the_limit(size: int) -> None:
    dot = DotGraph("g")
    dot.node("a", {"tooltip": "t" * size, "label": "l" * size})
    dot.edge("a", "a", {"label": "e" * size})
    assert _longest_token(dot.source()) < GRAPHVIZ_LIMIT


@pytest.mark.parametrize("cells", [10, 2_000, 20_000])
def test_an_oversized_html_label_falls_back_to_plain_text(cells: int) -> None:
    label = table([row(cell(font(f"cell {i}"))) for i in range(cells)])
    dot = DotGraph("g")
    dot.node("a", {"label": label})
    source = dot.source()
    assert _longest_token(source) < GRAPHVIZ_LIMIT
    fits = len(label.markup) <= MAX_DOT_STRING
    assert ("<TABLE" in source) is fits
    assert "cell 0" in source


def test_a_html_label_exactly_at_the_limit_is_kept() -> None:
    markup = "x" * MAX_DOT_STRING
    dot = DotGraph("g")
    dot.node("a", {"label": HtmlLabel(markup)})
    assert f"<{markup}>" in dot.source()


@pytest.fixture(scope="module")
def demo_900() -> Any:
    return simulate(ContractEditFlow(), sample_edits(900), seed=0).history


def test_the_900_reviewer_demo_lineage_stays_under_the_limit(demo_900: Any) -> None:
    dot = execution_graph(demo_900).to_dot()
    assert _longest_token(dot) < GRAPHVIZ_LIMIT
    assert "more characters)" in dot  # the group's tooltip of 900 execution ids was cut


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_the_900_reviewer_demo_lineage_renders(demo_900: Any) -> None:
    svg = execution_graph(demo_900).render("svg")
    assert b"<svg" in svg[:1000]


class Loop(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to(Loop, n - 1) if n > 0 else dead_end()


class LoopFlow(Flow[int]):
    def get_steps(self) -> StepList[int]:
        return StepList.start_step(Loop())


@pytest.fixture(scope="module")
def long_loop() -> Any:
    return lineage_graph(build_executions(simulate(LoopFlow(), 2_500).history))


def test_a_lineage_graph_above_the_threshold_is_collapsed_with_a_note(long_loop: Any) -> None:
    drawn, left_out = trim_lineage(long_loop)
    assert len(long_loop.nodes) > MAX_DRAWN_NODES
    assert len(drawn.nodes) <= MAX_DRAWN_NODES + 1
    assert left_out == len(long_loop.nodes) - len(drawn.nodes) + 1
    ids = {n.node_id for n in drawn.nodes}
    assert MORE_NODE_ID in ids and "__start__" in ids
    assert all(e.source in ids and e.target in ids for e in drawn.edges)
    dot = lineage_dot(long_loop)
    assert f"Collapsed: {left_out:,} of 2,501 executions are not drawn" in dot
    assert f"⋯ {left_out:,} more executions" in dot


def test_a_graph_within_the_threshold_is_drawn_whole() -> None:
    graph = lineage_graph(build_executions(simulate(LoopFlow(), 20).history))
    drawn, left_out = trim_lineage(graph)
    assert (drawn, left_out) == (graph, 0)
    assert "Collapsed" not in lineage_dot(graph)


def test_the_cut_keeps_one_crossing_edge_per_endpoint(long_loop: Any) -> None:
    drawn, _ = trim_lineage(long_loop, limit=10)
    crossing = [e for e in drawn.edges if MORE_NODE_ID in (e.source, e.target)]
    assert len(crossing) == len({(e.source, e.target, e.kind) for e in crossing})
    assert [(e.source, e.target) for e in crossing] == [(drawn.nodes[-2].node_id, MORE_NODE_ID)]


def test_an_uncollapsed_900_reviewer_run_keeps_sources_and_end(demo_900: Any) -> None:
    graph = lineage_graph(build_executions(demo_900), collapse_at=None)
    assert len(graph.nodes) > MAX_DRAWN_NODES
    drawn, left_out = trim_lineage(graph, limit=400)
    ids = [n.node_id for n in drawn.nodes]
    assert len(ids) == 400
    assert "__start__" in ids and "__end__" in ids and ids[-1] == MORE_NODE_ID
    assert left_out == sum(1 for n in graph.nodes if n.node_id not in ids)
    assert (MORE_NODE_ID, "__end__") in {(e.source, e.target) for e in drawn.edges}
    assert _longest_token(lineage_dot(graph)) < GRAPHVIZ_LIMIT
