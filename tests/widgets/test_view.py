"""The widget driven as a user drives it: set the slider, click buttons, pick from dropdowns."""

from __future__ import annotations

import pytest

from dexviz._optional import MissingExtraError
from dexviz.history import EventKind
from dexviz.widgets import Debugger
from tests.widgets.helpers import TOKEN, history, marked, token_consumption

pytest.importorskip("ipywidgets")

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@pytest.mark.requires_dot
def test_sliding_to_the_token_consumption_shows_the_holder_in_the_panel_and_the_graph():
    events = history()
    at = token_consumption(events)
    consumer = events[at].payload["consumer"]
    dbg = Debugger(events, token_channel=TOKEN, collapse_at=None)
    view = dbg.view
    view.slider.value = at
    assert dbg.index == at
    assert f"reserved by {consumer}" in view.channels.value
    assert marked(view.graph.value, "dx-selected") == {f"exec:{consumer}"}
    assert f"exec:{consumer}" in marked(view.graph.value, "dx-holder")
    assert "MessageConsumed" in view.heading.value and consumer in view.detail.value
    view.prev.click()
    assert "queued #1" in view.channels.value
    assert f"exec:{consumer}" not in marked(view.graph.value, "dx-holder")


def test_next_and_prev_buttons_move_the_cursor_and_disable_at_the_ends():
    dbg = Debugger(history())
    view = dbg.view
    assert view.prev.disabled and view.first.disabled and not view.next.disabled
    for _ in range(3):
        view.next.click()
    assert dbg.index == 3 and view.slider.value == 3 and view.events.value == 3
    assert "event 4 / " in view.heading.value
    view.last.click()
    assert view.next.disabled and dbg.at_end
    view.prev.click()
    assert dbg.index == len(dbg) - 2 and not view.next.disabled
    view.first.click()
    assert dbg.index == 0


def test_the_event_list_and_the_model_api_keep_the_controls_in_step():
    dbg = Debugger(history())
    view = dbg.view
    view.events.value = 12
    assert dbg.index == 12 and view.slider.value == 12
    dbg.seek(30)  # a notebook cell moving the model redraws the widget
    assert view.slider.value == 30 and view.play.value == 30 and "event 31 / " in view.heading.value
    assert view.play.max == view.slider.max == len(dbg) - 1


def test_jump_to_an_event_kind_or_an_execution_from_the_dropdowns():
    events = history()
    dbg = Debugger(events)
    view = dbg.view
    assert "MessageConsumed" in [value for _, value in view.find_kind.options]
    view.find_kind.value = "MessageConsumed"
    view.find_next.click()
    assert dbg.index == token_consumption(events)
    view.find_kind.value = ""
    view.find_execution.value = "EditContract-2"
    view.find_next.click()
    assert dbg.event.execution_id == "EditContract-2"
    view.find_execution.value = "StartContractEdits-1"
    view.find_next.click()
    assert "no StartContractEdits-1 after here" in view.message.value
    view.find_prev.click()
    assert dbg.event.execution_id == "StartContractEdits-1"


def test_run_to_a_breakpoint_from_the_dropdown_and_continue_to_the_end():
    dbg = Debugger(history())
    view = dbg.view
    view.breakpoint.value = "SaveContractEdit"
    view.run_to.click()
    assert dbg.event.step_type == "SaveContractEdit"
    assert "stopped at SaveContractEdit" in view.message.value
    view.breakpoint.value = "AttemptFailed"
    view.run_to.click()
    assert dbg.event.kind == EventKind.ATTEMPT_FAILED
    view.continue_.click()
    assert dbg.at_end and "at the end of the history" in view.message.value


def test_speed_sets_the_play_interval_and_zoom_the_graph_size():
    view = Debugger(history()).view
    view.speed.value = 60
    assert view.play.interval == 60
    assert 'class="dx-graph dx-zoom-fit"' in view.graph.value
    view.zoom.value = "full"
    assert 'class="dx-graph dx-zoom-full"' in view.graph.value


def test_dropdowns_start_on_their_neutral_choice():
    view = Debugger(history()).view
    assert view.find_kind.value == "" and view.find_execution.value == ""
    assert view.breakpoint.value == "" and view.fail_step.value == "StartContractEdits"


@pytest.mark.requires_dot
def test_the_graph_toggle_switches_to_the_definition_graph_with_the_step_marked():
    events = history()
    dbg = Debugger(events)
    view = dbg.view
    view.slider.value = token_consumption(events)
    view.graph_choice.value = "definition"
    assert dbg.graph == "definition"
    assert marked(view.graph.value, "dx-selected") == {"step:EnterContractEdit"}
    assert marked(view.graph.value, "dx-held") == {f"channel:{TOKEN}"}


def test_the_timeline_is_sent_once_and_only_its_cursor_rule_changes():
    pytest.importorskip("matplotlib")
    dbg = Debugger(history(), token_channel=TOKEN)
    view = dbg.view
    picture, cursor = view.timeline.value, view.timeline_cursor.value
    assert "<svg" in picture and ".dx-cursor {left:" in cursor
    view.last.click()
    assert view.timeline.value == picture and view.timeline_cursor.value != cursor
    view.timeline_box.selected_index = None
    view.first.click()
    assert view.timeline_cursor.value != cursor  # closed: not redrawn
    view.timeline_box.selected_index = 0
    assert view.timeline_cursor.value == cursor


def test_displaying_shows_the_widget_or_the_snapshot_without_ipywidgets(monkeypatch):
    dbg = Debugger(history())
    bundle = dbg._repr_mimebundle_()
    assert WIDGET_MIME in bundle and bundle["text/plain"] == repr(dbg)
    fresh = Debugger(history())

    def missing(name, extra):
        raise MissingExtraError(name, extra, "it is not installed")

    monkeypatch.setattr("dexviz.widgets.view.require", missing)
    bundle = fresh._repr_mimebundle_()
    assert WIDGET_MIME not in bundle
    assert bundle["text/html"].startswith("<style>") and "Channels" in bundle["text/html"]
