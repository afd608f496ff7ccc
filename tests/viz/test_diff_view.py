"""RunDiff's views: the side-by-side timeline, the table, the text summary and frames()."""

from __future__ import annotations

import dexviz
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits


def _pair() -> tuple[dexviz.SimulationRun, dexviz.SimulationRun]:
    flow = ContractEditFlow()
    return (dexviz.simulate(flow, sample_edits(4), seed=1),
            dexviz.simulate(flow, sample_edits(4), seed=2))


def test_html_draws_both_runs_on_one_axis_and_highlights_differing_executions():
    a, b = _pair()
    result = dexviz.diff(a, b)
    page = result._repr_html_()
    assert page.count("<svg") == 1 and "run a" in page and "run b" in page
    differing = {d.execution_a for d in result.differences if d.execution_a}
    assert differing and all(execution in page for execution in differing)
    assert 'stroke="#d62728"' in page
    assert "<table" in page and "consumed" in page
    assert page == dexviz.diff(a, b)._repr_html_()  # deterministic


def test_equal_runs_say_so_everywhere():
    a, _ = _pair()
    result = dexviz.diff(a, a)
    assert not result and result.first is None and len(result) == 0
    assert "no differences" in result.summary()
    assert "No differences." in result._repr_html_()
    assert result.frames().empty
    assert repr(result) == "RunDiff(differences=0)"


def test_frames_has_one_row_per_difference_with_both_sides():
    result = dexviz.diff(*_pair())
    frame = result.frames()
    assert len(frame) == len(result.differences)
    assert list(frame.columns) == ["aspect", "execution_a", "execution_b", "step_type",
                                   "method", "seq_a", "seq_b", "a", "b"]
    assert frame["aspect"].iloc[0] == str(result.first.aspect)


def test_summary_starts_with_the_first_divergence():
    result = dexviz.diff(*_pair())
    lines = result.summary(limit=2).splitlines()
    assert lines[2].startswith("first divergence: ")
    assert result.first.describe() in lines[2]
    assert lines[-1].startswith("  ... and ")


def test_to_html_writes_a_whole_page(tmp_path):
    result = dexviz.diff(*_pair())
    path = result.to_html(tmp_path / "diff.html")
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "dexviz-diff" in text
