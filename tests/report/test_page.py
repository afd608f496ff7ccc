"""The one-file HTML replay: self-contained, static at its shown event, small, deterministic."""

from __future__ import annotations

import json
import re

import pytest

from dexviz.report import report_html, write_report
from dexviz.report.encode import script_json
from dexviz.widgets import Debugger
from tests.report.pages import edited, frame, island
from tests.widgets.helpers import TOKEN, history


@pytest.fixture(scope="module")
def page() -> str:
    return report_html(history(8), token_channel=TOKEN)


def _outside_svg(page: str) -> str:
    """The page without its inline SVGs (their xmlns URIs are names, never fetched)."""
    return re.sub(r"<svg\b.*?</svg>", "", page, flags=re.S)


@pytest.mark.requires_dot
def test_the_contract_edit_page_is_one_small_self_contained_file(page):
    assert len(page.encode("utf-8")) < 2 * 1024 * 1024
    rest = _outside_svg(page)
    assert not re.search(r"https?://", rest), "the page names a network address"
    assert "<link" not in rest and "@import" not in rest
    assert not re.search(r"<(script|img|iframe)[^>]*\bsrc=", rest)
    assert page.count("<svg") == 3  # lineage and definition graphs, the timeline


@pytest.mark.requires_dot
def test_without_javascript_the_page_shows_the_last_event(page):
    data = island(page)
    last = len(data["events"]) - 1
    assert f'data-index="{last}"' in page
    shown = frame(data, last)
    assert shown["heading"] in page
    for panel in shown["panels"]:
        assert panel in page
    assert 'class="node source completed dx-done' in page or "exec:__end__" in page
    end_group = re.search(r'<g id="exec:__end__" class="([^"]*)"', page)
    assert end_group and "dx-selected" in end_group.group(1).split()


@pytest.mark.requires_dot
def test_the_page_lists_failed_attempts_with_their_errors(page):
    assert "Failed attempts (4)" in page
    assert "ContractEditError: contract handoff failed" in page
    assert "(final)" in page and "(retry in 1.000 s)" in page
    # The engine records each failed attempt's stack trace; the page shows it, collapsed.
    assert page.count('<details class="dx-trace"><summary>stack trace</summary>') == 4
    assert "Traceback (most recent call last):" in page


def test_a_recorded_stack_trace_is_shown_in_a_collapsible_block(empty_path):
    trace = 'Traceback (most recent call last):\n  File "flow.py", line 3\nValueError: <x>'
    text = report_html(edited(history(8), "AttemptFailed", stack_trace=trace))
    assert text.count('<details class="dx-trace"><summary>stack trace</summary>') == 4
    assert "ValueError: &lt;x&gt;" in text


@pytest.mark.requires_dot
def test_the_page_is_deterministic():
    one = report_html(history(3), token_channel=TOKEN)
    two = report_html(history(3), token_channel=TOKEN)
    assert one == two


@pytest.mark.requires_dot
def test_start_chooses_the_event_shown_without_javascript():
    text = report_html(history(3), start=4)
    data = island(text)
    assert 'data-index="4"' in text
    assert frame(data, 4)["heading"] in text


def test_the_data_island_cannot_close_its_script_element():
    data = {"frags": ["</script><script>alert(1)</script>", "<!-- x -->"]}
    text = script_json(data)
    assert "</" not in text and "<!--" not in text
    assert json.loads(text) == data


@pytest.mark.parametrize(("options", "message"), [
    ({"graph": "sideways"}, "graph must be one of"),
    ({"start": 10_000}, "outside the history"),
    ({"start": -10_000}, "outside the history"),
])
def test_bad_options_are_rejected_with_a_clear_error(options, message):
    with pytest.raises(ValueError, match=message):
        report_html(history(2), **options)


def test_a_source_that_is_not_a_run_is_rejected():
    with pytest.raises(TypeError, match="History, a SimulationRun or a Debugger"):
        report_html("history.jsonl")  # type: ignore[arg-type]


def test_a_missing_flow_source_leaves_a_hint_instead_of_the_definition_graph(empty_path):
    text = report_html(history(2))
    assert 'data-graph-key="d"' in text and "dx-hint" in text
    assert island(text)["graphs"] == {}


@pytest.mark.requires_dot
def test_debugger_to_html_writes_the_page_with_its_settings(tmp_path):
    debugger = Debugger(history(3), token_channel=TOKEN, graph="definition")
    debugger.seek(2)
    path = debugger.to_html(tmp_path / "run.html")
    text = path.read_text(encoding="utf-8")
    assert text == report_html(debugger)
    assert 'data-graph="definition"' in text
    assert debugger.index == 2


@pytest.mark.requires_dot
def test_write_report_writes_utf8_and_returns_the_path(tmp_path):
    path = write_report(history(2), tmp_path / "r.html")
    assert path == tmp_path / "r.html"
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


@pytest.mark.requires_dot
def test_a_live_debuggers_page_replays_the_events_so_far(tmp_path):
    from tests.widgets.helpers import started_engine

    debugger = Debugger(started_engine(2), token_channel=TOKEN)
    for _ in range(3):
        debugger.step()
    index, size = debugger.index, len(debugger)
    data = island(debugger.to_html(tmp_path / "live.html").read_text(encoding="utf-8"))
    assert len(data["events"]) == size
    assert (debugger.index, len(debugger), debugger.live) == (index, size, True)
