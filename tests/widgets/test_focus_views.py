"""Focus applies to every view: the lineage graph, the timeline's lanes, the definition graph."""

from __future__ import annotations

import re

import pytest

from dexviz.analysis.definition.model import Edge, FlowDefinitionGraph, Node
from dexviz.replay.focus import Focus, definition_focus_classes
from dexviz.widgets import Debugger
from dexviz.widgets.snapshot import graph_html, snapshot_html, timeline_html
from tests.widgets.helpers import TOKEN, history, svg_classes, token_consumption
from tests.widgets.test_timeline_text import smallest_text_px

_LANE = re.compile(r'<g id="lane:([^:"]+):')


def _at_token_consumption() -> Debugger:
    events = history(reviewers=8)
    debugger = Debugger(events, token_channel=TOKEN)
    debugger.seek(token_consumption(events))
    return debugger


def _lanes(html: str) -> set[str]:
    return set(_LANE.findall(html))


def test_the_focus_is_the_selected_execution_its_family_and_message_partners():
    debugger = _at_token_consumption()
    focus = debugger.focus()
    assert focus is not None
    consumer = debugger.event.execution_id
    assert focus.centre == consumer and focus.executions[0] == consumer
    assert "StartContractEdits-1" in focus.executions  # its parent
    assert focus.channels == {TOKEN}  # it took the token from whoever released it
    step_of = debugger.index_.executions
    assert focus.step_types == {step_of[e] for e in focus.executions}
    assert len(focus.executions) < len(debugger.index_.executions)


def test_a_flow_start_or_end_event_focuses_on_its_source_or_end_node():
    debugger = Debugger(history(reviewers=2))
    start = debugger.focus()
    assert start is not None and start.centre == "__start__"
    assert start.executions == ("StartContractEdits-1",)
    debugger.seek(-1)
    end = debugger.focus()
    assert end is not None and end.centre == "__end__" and end.executions


def test_the_focused_timeline_draws_only_the_neighbourhood_on_the_whole_time_axis():
    pytest.importorskip("matplotlib")
    debugger = _at_token_consumption()
    focus = debugger.focus()
    assert focus is not None
    whole, focused = timeline_html(debugger), timeline_html(debugger, zoom="focus")
    assert _lanes(focused) == set(focus.executions)
    assert _lanes(whole) >= set(focus.executions) and len(_lanes(whole)) > len(_lanes(focused))
    assert f"{len(focus.executions)} of 25 executions shown" in focused
    assert 'id="holding:' in focused  # the token's lanes stay: who held it when
    # The cursor sits at the same time on either picture (each measured on its own axis).
    for picture in (debugger.timeline(), debugger.timeline(focus=True)):
        assert picture.start_ns == debugger.timeline().start_ns
    assert debugger.timeline_cursor(focus=True) == debugger.timeline(focus=True).cursor_css(
        debugger.event.time_ns)
    assert smallest_text_px(focused, 320) >= 9.0
    assert debugger.timeline(focus=True) is debugger.timeline(focus=True)  # drawn once


def test_the_focused_timeline_follows_the_cursor():
    pytest.importorskip("matplotlib")
    debugger = _at_token_consumption()
    before = _lanes(timeline_html(debugger, zoom="focus"))
    debugger.seek(0)
    assert _lanes(timeline_html(debugger, zoom="focus")) == {"StartContractEdits-1"}
    assert before != {"StartContractEdits-1"}


def _model() -> FlowDefinitionGraph:
    nodes = (Node("step:A", "step", "A"), Node("step:B", "step", "B"),
             Node("step:C", "step", "C"),
             Node("decision:A:1", "decision", "go_to", parent_id="step:A"),
             Node("channel:t", "channel", "t"), Node("channel:u", "channel", "u"))
    edges = (Edge("edge:0001", "transition", "decision:A:1", "step:B"),
             Edge("edge:0002", "transition", "decision:A:1", "step:C"),
             Edge("edge:0003", "resource_publish", "step:B", "channel:t"),
             Edge("edge:0004", "resource_publish", "step:B", "channel:u"))
    return FlowDefinitionGraph("F", "f.py", "step:A", nodes, edges)


def test_the_definition_graph_dims_what_lies_outside_the_focus():
    focus = Focus("B-1", ("B-1", "A-1"), frozenset({"A", "B"}), frozenset({"t"}))
    ids = ["step:A", "step:B", "step:C", "channel:t", "channel:u", "edge:0001", "edge:0002",
           "edge:0003", "edge:0004", "stub:channel:t@step:B", "stub:channel:u@step:B"]
    dimmed = set(definition_focus_classes(_model(), ids, focus))
    # A's decision belongs to A: A -> B is kept, A -> C is not.
    assert dimmed == {"step:C", "channel:u", "edge:0002", "edge:0004", "stub:channel:u@step:B"}


@pytest.mark.requires_dot
def test_focus_on_the_definition_graph_fits_it_and_dims_the_other_steps():
    debugger = _at_token_consumption()
    debugger.graph = "definition"
    focus = debugger.focus()
    assert focus is not None
    html = graph_html(debugger, zoom="focus")
    assert 'class="dx-graph dx-zoom-fit dx-focus"' in html
    assert "min-width" not in html and 'class="dx-small-text' in html  # fitted whole
    classes = svg_classes(html)
    steps = {i for i in classes if i.startswith("step:")}
    dimmed = {i for i, c in classes.items() if "dx-unfocused" in c}
    assert steps - dimmed == {f"step:{s}" for s in focus.step_types}
    assert "dx-selected" in classes[f"step:{debugger.event.step_type}"]
    assert any(i.startswith("stub:") for i in dimmed)  # publish stubs of dimmed Channels
    assert dimmed == {i for i, c in debugger.graph_classes(focus=True).items()
                      if "dx-unfocused" in c} | {i for i in dimmed if i.startswith("stub:")}
    assert "dx-unfocused" not in graph_html(debugger, zoom="fit")


@pytest.mark.requires_dot
def test_the_snapshot_can_show_the_focus_in_every_view():
    debugger = _at_token_consumption()
    page = snapshot_html(debugger, zoom="focus")
    focus = debugger.focus()
    assert focus is not None
    assert _lanes(page) == set(focus.executions)
    assert {i for i in svg_classes(page) if i.startswith("exec:")} == {
        f"exec:{e}" for e in focus.executions}
    assert _lanes(snapshot_html(debugger)) > set(focus.executions)
    with pytest.raises(ValueError, match="zoom must be one of"):
        snapshot_html(debugger, zoom="close")


def test_the_widget_focus_button_refocuses_the_timeline():
    pytest.importorskip("ipywidgets")
    pytest.importorskip("matplotlib")
    debugger = _at_token_consumption()
    view = debugger.view
    focus = debugger.focus()
    assert focus is not None
    assert len(_lanes(view.timeline.value)) > len(focus.executions)
    view.zoom.value = "focus"
    assert _lanes(view.timeline.value) == set(focus.executions)
    debugger.seek(0)
    assert _lanes(view.timeline.value) == {"StartContractEdits-1"}
    view.zoom.value = "fit"
    assert len(_lanes(view.timeline.value)) > 1


def test_the_selected_executions_bars_are_outlined_in_the_timeline():
    pytest.importorskip("matplotlib")
    debugger = _at_token_consumption()
    consumer = debugger.event.execution_id
    html = timeline_html(debugger)
    scope = re.search(r'<div class="dx-timeline (dx-tl-[0-9a-f]{12})">', html)
    assert scope is not None
    rule = f'.dexviz-debugger .{scope.group(1)} g[id^="lane:{consumer}:"]'
    assert f"<style>{rule}, " in html and "drop-shadow" in html
    assert f'g[id^="instant:{consumer}:"]' in html
    assert timeline_html(debugger) == html  # deterministic: the scope depends on the event only
    debugger.seek(0)  # FlowStartedOrContinued: about no execution, nothing outlined
    assert "<style>" not in timeline_html(debugger)


def test_the_widget_outlines_the_selected_execution_as_the_cursor_moves():
    pytest.importorskip("ipywidgets")
    pytest.importorskip("matplotlib")
    debugger = _at_token_consumption()
    view = debugger.view
    consumer = debugger.event.execution_id
    assert f'g[id^="lane:{consumer}:"]' in view.timeline_cursor.value
    debugger.next()
    now = debugger.event.execution_id
    assert now is None or f'g[id^="lane:{now}:"]' in view.timeline_cursor.value
