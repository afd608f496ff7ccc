"""The timeline Figure, checked through its artists (positions, not just a file)."""

from __future__ import annotations

import pytest

from dexviz.analysis.exclusive import exclusive_sections
from dexviz.viz.timeline import save_timeline, timeline, timeline_svg
from tests.analysis.factory import (
    TOKEN,
    canceled_holder_history,
    contract_edit_history,
    early_release_history,
    overlapping_token_history,
)
from tests.analysis.runs import broken_counterexample, contract_edit_run

pytest.importorskip("matplotlib")


def _boxes(figure, prefix):
    """``gid -> [(x0, x1, y0, y1)]`` for every collection whose gid starts with ``prefix``."""
    found = {}
    for collection in figure.axes[0].collections:
        gid = collection.get_gid() or ""
        if gid.startswith(prefix):
            found[gid] = [
                (p.vertices[:, 0].min(), p.vertices[:, 0].max(),
                 p.vertices[:, 1].min(), p.vertices[:, 1].max())
                for p in collection.get_paths()
            ]
    return found


def _assert_one_bar_per_reviewer_without_overlap(history):
    figure = timeline(history, channel=TOKEN)
    bars = _boxes(figure, f"holding:{TOKEN}:")
    assert sorted(bars) == [f"holding:{TOKEN}:EnterContractEdit-{n}" for n in range(1, 9)]
    assert all(len(boxes) == 1 for boxes in bars.values())
    spans = sorted(boxes[0] for boxes in bars.values())
    for (_, end, _, _), (start, _, _, _) in zip(spans, spans[1:], strict=False):
        assert start >= end - 1e-9, f"holding bars overlap: {spans}"
    assert len({(y0, y1) for _, _, y0, y1 in spans}) == 1  # all fit in one lane
    report = exclusive_sections(history, TOKEN)
    expected = sorted(((h.start_ns - report.start_ns) / 1e9, (h.end_ns - report.start_ns) / 1e9)
                      for h in report.intervals)
    assert [x for x0, x1, _, _ in spans for x in (x0, x1)] == pytest.approx(
        [x for span in expected for x in span])
    assert not _boxes(figure, "overlap:")


def test_hand_made_run_has_one_holding_bar_per_reviewer_none_overlapping():
    _assert_one_bar_per_reviewer_without_overlap(contract_edit_history(order=[3, 1, 8, 2, 7, 4,
                                                                              6, 5]))


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_simulated_run_has_one_holding_bar_per_reviewer_none_overlapping(seed):
    _assert_one_bar_per_reviewer_without_overlap(contract_edit_run(seed))


def test_overlapping_holders_get_a_second_lane_and_a_red_overlap():
    figure = timeline(overlapping_token_history(), channel=TOKEN)
    bars = _boxes(figure, f"holding:{TOKEN}:")
    rows = {gid.rsplit(":", 1)[1]: boxes[0][2] for gid, boxes in bars.items()}
    assert rows["EnterContractEdit-1"] != rows["EnterContractEdit-2"]
    ((x0, x1, _, _),) = _boxes(figure, "overlap:")[
        "overlap:EnterContractEdit-1:EnterContractEdit-2"]
    assert (x0, x1) == pytest.approx((0.0, 4.0))
    assert "2 holders overlap at t=0.000 s" in figure.axes[0].get_title(loc="left")


def test_a_token_handed_back_early_shows_the_section_the_check_measures_and_its_overlap():
    figure = timeline(early_release_history(), channel=TOKEN)
    title = figure.axes[0].get_title(loc="left")
    assert "no two holders overlap" not in title
    assert "2 holders overlap at t=2.000 s" in title
    sections = _boxes(figure, f"section:{TOKEN}:")
    ((x0, x1, _, _),) = sections[f"section:{TOKEN}:EnterContractEdit-1"]
    assert (x0, x1) == pytest.approx((0.0, 4.0))  # until SaveContractEdit-1 finished
    ((h0, h1, _, _),) = _boxes(figure, f"holding:{TOKEN}:")[f"holding:{TOKEN}:EnterContractEdit-1"]
    assert (h0, h1) == pytest.approx((0.0, 2.0))  # the holding ended at the early release
    ((o0, o1, _, _),) = _boxes(figure, "overlap:")[
        "overlap:EnterContractEdit-1:EnterContractEdit-2"]
    assert (o0, o1) == pytest.approx((2.0, 4.0))


def test_a_counterexample_timeline_marks_an_overlap_at_one_instant_and_who_is_still_inside():
    run = broken_counterexample()
    figure = timeline(run.history, channel=TOKEN)
    title = figure.axes[0].get_title(loc="left")
    assert "2 holders overlap at t=2.000 s" in title and "no two holders" not in title
    assert "instant:overlap:EnterContractEdit-1:EnterContractEdit-2" in _boxes(figure, "instant:")
    inside = {c.get_gid() for c in figure.axes[0].collections
              if (c.get_gid() or "").startswith("inside:")}
    assert inside == {f"inside:{TOKEN}:EnterContractEdit-{n}" for n in (1, 2)}


def test_holders_that_never_overlap_say_so_and_sections_ending_at_the_release_get_no_box():
    figure = timeline(contract_edit_history(), channel=TOKEN)
    assert "no two holders overlap" in figure.axes[0].get_title(loc="left")
    assert not _boxes(figure, "section:")  # each section is its holding: the bar shows it


def test_failed_attempts_backoff_and_waits_are_drawn_where_they_happened():
    figure = timeline(contract_edit_history())
    failed = _boxes(figure, "lane:SaveContractEdit-3:failed")["lane:SaveContractEdit-3:failed"]
    assert [x for x0, x1, _, _ in failed for x in (x0, x1)] == pytest.approx([11, 13, 14, 16])
    backoff = _boxes(figure, "lane:SaveContractEdit-3:backoff")
    assert [(b[0], b[1]) for b in backoff["lane:SaveContractEdit-3:backoff"]] == [(13.0, 14.0)]
    waiting = _boxes(figure, "lane:EnterContractEdit-5:waiting")
    assert waiting["lane:EnterContractEdit-5:waiting"][0][:2] == pytest.approx((0.0, 16.0))
    labels = [t.get_text() for t in figure.axes[0].get_yticklabels()]
    assert labels[0] == "StartContractEdits-1" and len(labels) == 25


def test_cancellations_are_marked_on_their_lane():
    figure = timeline(canceled_holder_history(), channel=TOKEN)
    marks = [c for c in figure.axes[0].collections
             if c.get_gid() == "canceled:EnterContractEdit-1"]
    (offsets,) = [m.get_offsets() for m in marks]
    assert offsets[0][0] == pytest.approx(1.0)
    canceled = _boxes(figure, "lane:EnterContractEdit-1:canceled")
    assert canceled["lane:EnterContractEdit-1:canceled"][0][:2] == pytest.approx((0.0, 1.0))


def test_lanes_collapse_above_the_threshold_and_group_by_branch():
    figure = timeline(contract_edit_history(), collapse_above=10)
    labels = [t.get_text() for t in figure.axes[0].get_yticklabels()]
    assert "EnterContractEdit ×8" in labels and len(labels) == 6
    branches = timeline(contract_edit_history(), group_by="branch", collapse_above=10)
    labels = [t.get_text() for t in branches.axes[0].get_yticklabels()]
    assert "EnterContractEdit-4 +3" in labels


def test_only_the_chosen_executions_get_lanes_on_the_whole_time_axis():
    whole = timeline(contract_edit_history(), channel=TOKEN)
    chosen = ["EnterContractEdit-2", "EditContract-2", "StartContractEdits-1"]
    part = timeline(contract_edit_history(), channel=TOKEN, executions=chosen)
    labels = [t.get_text() for t in part.axes[0].get_yticklabels()]
    assert [label for label in labels if "holder" not in label] == [
        "StartContractEdits-1", "EnterContractEdit-2", "EditContract-2"]  # in group order
    assert part.axes[0].get_xlim() == whole.axes[0].get_xlim()
    assert "3 of 25 executions shown" in part.axes[0].get_title(loc="left")
    assert set(_boxes(part, "holding:")) == set(_boxes(whole, "holding:"))
    few = timeline(contract_edit_history(), executions=chosen, collapse_above=2)
    assert "EnterContractEdit ×1" in [t.get_text() for t in few.axes[0].get_yticklabels()]


def test_svg_export_is_deterministic(tmp_path):
    first = timeline_svg(timeline(contract_edit_history(), channel=TOKEN))
    second = timeline_svg(timeline(contract_edit_history(), channel=TOKEN))
    assert first == second
    assert "<dc:date>" not in first and 'id="dexviz-timeline"' in first
    path = save_timeline(timeline(contract_edit_history(), channel=TOKEN), tmp_path / "t.svg")
    assert path.read_text(encoding="utf-8") == first


def test_bad_options_are_named(tmp_path):
    with pytest.raises(ValueError, match="no Channel 'nope'"):
        timeline(contract_edit_history(), channel="nope")
    with pytest.raises(ValueError, match="unknown group_by: 'x'"):
        timeline(contract_edit_history(), group_by="x")
    with pytest.raises(ValueError, match="use a .svg, .png or .pdf suffix"):
        save_timeline(timeline(contract_edit_history()), tmp_path / "t.gif")
    with pytest.raises(ValueError, match="no execution 'EditContract-99'.*did you mean"):
        timeline(contract_edit_history(), executions=["EditContract-1", "EditContract-99"])
    with pytest.raises(ValueError, match="executions= is empty"):
        timeline(contract_edit_history(), executions=[])


def test_the_figure_shows_itself_in_a_notebook_without_pyplot():
    figure = timeline(contract_edit_history())
    assert figure._repr_png_().startswith(b"\x89PNG")


def test_failed_attempts_carry_their_stack_trace_as_svg_hover_text():
    history = contract_edit_run(reviewers=3, seed=1)
    failed = [e for e in history if e.kind == "AttemptFailed"]
    assert failed
    svg = timeline_svg(timeline(history))
    execution = failed[0].execution_id
    start = svg.index(f'<g id="lane:{execution}:failed">')
    title = svg[svg.index("<title>", start): svg.index("</title>", start)]
    assert f"{execution} execute attempt 1 failed" in title
    assert "Traceback (most recent call last):" in title
    assert failed[0].payload["error_message"] in title
