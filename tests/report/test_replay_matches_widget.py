"""The HTML replay and the Debugger widget show the same thing at every event.

The page's data island is decoded as its script decodes it, and each event's heading, panels,
graph highlights and timeline cursor are compared with what the ipywidgets view of a Debugger
over the same history shows at that event (one source of truth: both come from the Debugger).
"""

from __future__ import annotations

import pytest

from dexviz.report import report_html
from dexviz.widgets import Debugger
from tests.report.pages import frame, island
from tests.widgets.helpers import TOKEN, history

pytestmark = [pytest.mark.requires_dot]


@pytest.fixture(scope="module")
def replay() -> tuple[Debugger, dict]:
    pytest.importorskip("ipywidgets")
    debugger = Debugger(history(8), token_channel=TOKEN)
    return debugger, island(report_html(debugger))


def test_every_event_of_the_page_matches_the_widget(replay):
    debugger, data = replay
    view = debugger.view
    assert len(data["events"]) == len(debugger) > 100
    for index in range(len(debugger)):
        debugger.seek(index)
        shown = frame(data, index)
        widget = [view.detail.value, view.channels.value, view.attributes.value,
                  view.active.value]
        assert shown["heading"] == view.heading.value, index
        assert shown["panels"] == widget, index
        assert shown["lineage"] == {k: v for k, v in debugger.graph_classes("lineage").items()
                                    if v}, index
        assert shown["definition"] == {
            k: v for k, v in debugger.graph_classes("definition").items() if v}, index
        assert shown["cursor"] == debugger.timeline_cursor(), index
        assert shown["kind"] == str(debugger.event.kind), index


def test_the_page_does_not_move_the_debuggers_cursor():
    debugger = Debugger(history(3), token_channel=TOKEN)
    debugger.seek(5)
    report_html(debugger)
    assert debugger.index == 5


def test_highlighted_node_follows_the_selected_event(replay):
    debugger, data = replay
    for index in (0, 3, len(debugger) // 2, len(debugger) - 1):
        debugger.seek(index)
        selected = {k for k, v in frame(data, index)["lineage"].items()
                    if "dx-selected" in v.split()}
        assert selected == set(debugger.highlighted("lineage")), index


def _time_traveled():
    import dexviz
    from dexviz import TimeTravelOptions, TimeTravelType
    from dexviz.examples.contract_edit import ContractEditFlow, sample_edits

    flow = ContractEditFlow()
    engine = dexviz.Engine([flow], seed=0)
    engine.client().start_flow(flow, "edit-1", sample_edits(2))
    engine.run_until_idle()
    engine.client().time_travel("edit-1", TimeTravelOptions(TimeTravelType.BEGINNING))
    engine.run_until_idle()
    return engine.history("edit-1")


def test_a_time_traveled_flow_shows_each_runs_graph_and_timeline():
    history = _time_traveled()
    assert len(history.run_ids) == 2
    debugger = Debugger(history, token_channel=TOKEN)
    page = report_html(debugger)
    data = island(page)
    assert {"l0", "l1"} <= set(data["graphs"])
    assert page.count('class="dx-timeline-section"') == 2
    for index in range(len(debugger)):
        debugger.seek(index)
        shown = frame(data, index)
        assert shown["run"] == history.run_ids.index(debugger.event.run_id), index
        assert shown["lineage"] == {k: v for k, v in debugger.graph_classes("lineage").items()
                                    if v}, index
        assert shown["cursor"] == debugger.timeline_cursor(), index
