"""The lineage picture explains itself: group counts, distinct legend colours, labelled edges."""

from __future__ import annotations

import math
import re

import pytest

from dexviz.viz._lineage_dot import lineage_dot, status_text
from dexviz.viz.execution_view import execution_graph
from dexviz.viz.palette import SOURCE_COLORS, STATUS_COLORS
from tests.analysis.runs import contract_edit_run


def test_a_group_with_mixed_outcomes_is_headed_with_its_counts():
    view = execution_graph(contract_edit_run(0, 8), collapse_at=3)
    group = next(n for n in view.model.nodes if n.label == "EnterContractEdit ×8")
    assert status_text(group) == "7 Completed · 1 Failed"
    assert "7 Completed · 1 Failed" in view.to_dot()
    assert "EnterContractEdit ×8                 7 Completed · 1 Failed" in view.summary()


def test_a_group_with_one_outcome_keeps_its_status():
    view = execution_graph(contract_edit_run(0, 8), collapse_at=3)
    group = next(n for n in view.model.nodes if n.label == "EditContract ×7")
    assert status_text(group) == "Completed"


def test_every_legend_colour_is_distinct():
    borders = [SOURCE_COLORS[0], *(border for border, _ in STATUS_COLORS.values())]
    fills = [SOURCE_COLORS[1], *(fill for _, fill in STATUS_COLORS.values())]
    assert len(set(borders)) == len(borders) and len(set(fills)) == len(fills)


def test_message_edges_carry_their_label_at_the_edge_not_in_the_layout():
    dot = lineage_dot(execution_graph(contract_edit_run(0, 4)).model)
    messages = [line for line in dot.splitlines() if 'class="message"' in line]
    assert messages and all("taillabel=" in line and " label=" not in line for line in messages)


@pytest.mark.requires_dot
@pytest.mark.parametrize("rankdir", ["TB", "LR"])
def test_message_labels_are_drawn_next_to_their_edges(rankdir):
    svg = execution_graph(contract_edit_run(0, 8), rankdir=rankdir).render("svg").decode()
    for body in re.findall(r'<g id="edge[^"]*" class="edge message">(.*?)</g>', svg, re.S):
        path = re.search(r' d="([^"]+)"', body)
        assert path is not None
        points = [tuple(map(float, p.split(","))) for p in
                  re.findall(r"-?[\d.]+,-?[\d.]+", path.group(1))]
        for x, y in re.findall(r'<text[^>]* x="(-?[\d.]+)" y="(-?[\d.]+)"', body):
            nearest = min(math.hypot(px - float(x), py - float(y)) for px, py in points)
            assert nearest < 60, f"a message label is {nearest:.0f}pt from its edge"


def test_attempt_counts_are_pluralised():
    view = execution_graph(contract_edit_run(0, 8), collapse_at=None)
    lines = [line for node in view.model.nodes for line in node.detail]
    assert "failed after 2 attempts → ReleaseContractEditToken-2" in lines
    assert not any("(s)" in line for line in lines)
