"""Readable Debugger pictures: fit never below 9 px, focus, zoom levels, expandable groups."""

from __future__ import annotations

import re

import pytest

from dexviz.analysis.executions import build_executions
from dexviz.analysis.lineage import lineage_graph
from dexviz.replay.focus import neighbourhood, readable_width, scaled, with_min_width
from dexviz.replay.theme import CSS
from dexviz.widgets import Debugger
from dexviz.widgets.snapshot import graph_html
from tests.widgets.helpers import history, svg_classes, token_consumption

SVG = ('<svg width="800pt" height="100pt" viewBox="0.00 0.00 800.00 100.00">'
       '<text font-size="10.00">a</text><text font-size="8.50">b</text></svg>')


def test_readable_width_keeps_the_smallest_text_at_nine_pixels():
    assert readable_width(SVG) == 849  # 9 px * 800 units / 8.5 units, plus one for rounding
    assert 'style="min-width:849px"' in with_min_width(SVG)
    assert readable_width("<svg><text>x</text></svg>") is None
    assert with_min_width("<p>no svg</p>") == "<p>no svg</p>"


def test_readable_width_reads_matplotlib_font_sizes_from_the_style():
    svg = ('<svg width="792pt" height="90pt" viewBox="0 0 792 90">'
           '<text style="font-size: 8px; font-family: \'DejaVu Sans\'" x="1">a</text>'
           "<text style=\"font: 7.5px 'DejaVu Sans'; text-anchor: end\">b</text></svg>")
    assert readable_width(svg) == 952  # 9 px * 792 units / 7.5 units, plus one for rounding


def test_scaled_doubles_the_natural_size_and_keeps_the_view_box():
    doubled = scaled(SVG, 2)
    assert 'width="1600pt" height="200pt" viewBox="0.00 0.00 800.00 100.00"' in doubled


def test_the_neighbourhood_is_the_execution_its_parent_children_and_message_partners():
    graph = lineage_graph(build_executions(history(reviewers=4)), collapse_at=None)
    part = neighbourhood(graph, "EditContract-1")
    ids = {n.node_id for n in part.nodes}
    assert "EditContract-1" in ids and len(ids) < len(graph.nodes)
    parent = next(e.source for e in graph.edges if e.target == "EditContract-1"
                  and e.kind == "lineage")
    assert parent in ids
    assert all(e.source in ids and e.target in ids for e in part.edges)
    assert {n.node_id for n in neighbourhood(graph, "__start__").nodes} >= {"__start__"}
    with pytest.raises(KeyError):
        neighbourhood(graph, "Nope-1")


@pytest.mark.requires_dot
def test_fit_focus_full_and_double_draw_the_graph_differently():
    events = history(reviewers=8)
    dbg = Debugger(events)
    dbg.seek(token_consumption(events))
    fit = graph_html(dbg, zoom="fit")
    # Fit draws the whole graph and says (by a container query) when its text is too small.
    assert "min-width" not in fit
    assert re.search(r"@container \(max-width: \d+px\).*dx-small-text", fit)
    focus = graph_html(dbg, zoom="focus")
    selected = {i for i, c in svg_classes(focus).items() if "dx-selected" in c}
    assert selected == {f"exec:{events[token_consumption(events)].payload['consumer']}"}
    assert len(svg_classes(focus)) < len(svg_classes(graph_html(dbg, zoom="full")))
    assert "min-width" not in graph_html(dbg, zoom="full")
    with pytest.raises(ValueError, match="zoom must be one of"):
        graph_html(dbg, zoom="huge")


@pytest.mark.requires_dot
def test_focus_on_an_event_about_no_execution_says_so():
    dbg = Debugger(history(reviewers=2))
    dbg.seek(-1)  # FlowClosed: the end node is focused
    assert "exec:__end__" in graph_html(dbg, zoom="focus")


def test_fan_out_groups_collapse_above_twenty_executions_and_expand_on_request():
    dbg = Debugger(history(reviewers=8))  # 25 executions
    labels = {n.label for n in dbg.pictures.lineage(dbg.event.run_id).graph.nodes}
    assert "EnterContractEdit ×8" in labels
    seen = []
    dbg.observe(lambda d: seen.append(d.index))
    dbg.collapse_at = None
    labels = {n.label for n in dbg.pictures.lineage(dbg.event.run_id).graph.nodes}
    assert "EnterContractEdit ×8" not in labels and "EnterContractEdit" in labels
    assert seen == [0]
    with pytest.raises(ValueError, match="collapse_at must be"):
        dbg.collapse_at = "sometimes"
    small = Debugger(history(reviewers=4))
    assert all("×" not in n.label for n in small.pictures.lineage(
        small.event.run_id).graph.nodes)


def test_the_widget_has_focus_zoom_and_group_toggles():
    pytest.importorskip("ipywidgets")
    dbg = Debugger(history(reviewers=8))
    view = dbg.view
    assert [v for _, v in view.zoom.options] == ["fit", "focus", "full", "double"]
    view.groups.value = "none"
    assert dbg.collapse_at is None
    view.groups.value = "auto"
    assert dbg.collapse_at == "auto"


def test_panels_never_break_inside_a_word():
    assert "break-word" not in CSS and "break-all" not in CSS and "anywhere" not in CSS
