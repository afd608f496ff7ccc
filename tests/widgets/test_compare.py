"""The Debugger's compare mode: run b follows run a's cursor to the aligned event."""

from __future__ import annotations

import html
import re

import pytest

import dexviz
from dexviz.history import History
from dexviz.widgets import Debugger
from tests.compare.variants import shift_execution_numbers
from tests.widgets.helpers import history, runs_differing_in_one_decision, started_engine


@pytest.fixture(scope="module")
def decision_runs(tmp_path_factory) -> tuple[History, History]:
    """The seed Flow recorded, and a variant whose EditContract decides differently once."""
    return runs_differing_in_one_decision(tmp_path_factory.mktemp("variants"))


def _verdict(snapshot: str) -> str:
    found = re.search(r'<div class="dx-(?:diff-now|same)">(.*?)</div>', snapshot)
    assert found is not None
    return html.unescape(found.group(1))


def test_cursor_on_a_at_each_event_puts_b_at_the_aligned_event():
    a, b = history(4, seed=0), history(4, seed=1)
    dbg = Debugger(a, compare=b)
    other, run_diff = dbg.compared, dbg.run_diff
    assert other is not None and run_diff is not None
    assert run_diff.aligned  # the two seeds share executions
    for index in range(len(a)):
        dbg.seek(index)
        expected = run_diff.aligned_event(index)
        assert other.index == (expected if expected is not None else 0)
        event = a[index]
        mapped = run_diff.event_map[index]
        if mapped is not None and event.execution_id is not None:
            shown = other.event
            assert shown.execution_id == run_diff.aligned[event.execution_id]
            assert (shown.kind, shown.method, shown.attempt) == (event.kind, event.method,
                                                                 event.attempt)
    dbg.prev()  # every move follows, not only seek
    assert other.index == run_diff.aligned_event(len(a) - 2)


def test_a_run_differing_in_one_decision_shows_the_difference_at_that_execution(
        decision_runs):
    a, b = decision_runs
    dbg = Debugger(a, compare=b)
    first = dbg.run_diff.first if dbg.run_diff else None
    assert first is not None and first.execution_a is not None
    at = next(i for i, e in enumerate(a) if e.seq == first.seq_a)
    dbg.seek(at)
    assert dbg.compared is not None and dbg.compared.event.execution_id == first.execution_b
    verdict = _verdict(dbg.snapshot())
    assert "decision: go_to(SaveContractEdit) vs dead_end()" in verdict
    assert first.execution_a in verdict
    # The differing execution is marked in the list of differing executions.
    here = re.search(r'<span class="dx-here">(.*?)</span>', dbg.snapshot())
    assert here is not None and first.execution_a in here.group(1)
    dbg.seek(0)
    assert "no difference at this execution" in _verdict(dbg.snapshot())
    assert 'class="dx-here"' not in dbg.snapshot()


def test_identical_runs_show_no_difference():
    a = history(3)
    dbg = Debugger(a, compare=shift_execution_numbers(a))
    assert dbg.run_diff is not None and not dbg.run_diff
    for index in (0, len(a) // 2, len(a) - 1):
        dbg.seek(index)
        assert dbg.compared is not None and dbg.compared.index == index
        snapshot = dbg.snapshot()
        assert _verdict(snapshot).startswith("no difference: the runs are the same")
        assert "differing executions" not in snapshot


def test_snapshot_and_repr_html_show_both_columns(decision_runs):
    a, b = decision_runs
    dbg = Debugger(a, compare=b)
    for page in (dbg.snapshot(), dbg._repr_mimebundle_()["text/html"]):
        sides = re.findall(r'<div class="dx-side-title">(.*?)</div>', page)
        assert sides == ["run a", "run b"]
        assert page.count('class="dx-heading"') >= 3  # the debugger's and both columns'
    assert 'class="dx-compare"' not in Debugger(a).snapshot()


def test_the_widget_shows_both_columns_and_follows_the_cursor(decision_runs):
    pytest.importorskip("ipywidgets")
    a, b = decision_runs
    dbg = Debugger(a, compare=b)
    view = dbg.view
    assert "run b" in view.compare.value
    dbg.last()
    assert dbg.compared is not None
    assert dbg.compared.index == dbg.run_diff.aligned_event(len(a) - 1)  # type: ignore[union-attr]
    assert html.escape(dbg.compared.event.describe()) in view.compare.value
    assert Debugger(a).view.compare.value == ""


def test_an_unloadable_compare_run_is_named(tmp_path):
    a = history(2)
    with pytest.raises(ValueError, match=r"Debugger\(compare=\.\.\.\).*int 42"):
        Debugger(a, compare=42)
    missing = tmp_path / "missing.jsonl"
    with pytest.raises(ValueError, match=r"compare=.*missing\.jsonl"):
        Debugger(a, compare=missing)


def test_compare_accepts_what_diff_accepts(tmp_path):
    run = dexviz.simulate(dexviz.examples.contract_edit.ContractEditFlow(),
                          dexviz.examples.contract_edit.sample_edits(2), seed=0)
    path = tmp_path / "run.jsonl"
    run.history.save(path)
    for other in (run, path, str(path)):
        dbg = Debugger(run.history, compare=other)
        assert dbg.run_diff is not None and not dbg.run_diff


def test_a_live_run_is_diffed_again_as_it_grows_so_b_keeps_following():
    b = history(3)
    dbg = Debugger(started_engine(3), compare=b)
    for _ in range(10):
        dbg.step()
    other, run_diff = dbg.compared, dbg.run_diff
    assert other is not None and run_diff is not None
    assert len(run_diff.event_map) == len(dbg)  # the diff covers the grown run
    expected = run_diff.aligned_event(dbg.index)
    assert expected is not None and other.index == expected > 1
    assert other.event.execution_id == run_diff.aligned.get(str(dbg.event.execution_id))
