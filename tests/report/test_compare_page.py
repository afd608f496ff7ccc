"""The HTML replay in compare mode: a second run stepped with the first, as the Debugger does.

Every event's compare block in the page's data island is what ``Debugger(a, compare=b)``
shows at that event (one source of truth: both come from ``dexviz.replay.paired``).
"""

from __future__ import annotations

import pytest

from dexviz.cli import main
from dexviz.replay.paired import COMPARE_CSS
from dexviz.report import report_html, write_report
from tests.report.pages import island
from tests.widgets.helpers import history, runs_differing_in_one_decision

pytestmark = [pytest.mark.requires_dot]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return runs_differing_in_one_decision(tmp_path_factory.mktemp("variants"))


@pytest.fixture(scope="module")
def page(runs):
    recorded, changed = runs
    return report_html(recorded, compare=changed)


def _block(data, index):
    return data["frags"][data["events"][index]["c"]]


def test_every_event_of_the_page_shows_what_the_compare_debugger_shows(runs, page):
    pytest.importorskip("ipywidgets")
    from dexviz.widgets import Debugger
    from dexviz.widgets.snapshot import compare_block

    recorded, changed = runs
    debugger = Debugger(recorded, compare=changed)
    data = island(page)
    assert len(data["events"]) == len(recorded)
    for index in range(len(recorded)):
        debugger.seek(index)
        expected = compare_block(debugger).replace(f"<style>{COMPARE_CSS}</style>", "", 1)
        assert _block(data, index) == expected, index


def test_the_page_marks_the_divergence_and_says_what_it_compares(runs, page):
    recorded, changed = runs
    data = island(page)
    blocks = [_block(data, i) for i in range(len(recorded))]
    assert "no difference at this execution" in blocks[0]
    decided = [
        i
        for i, block in enumerate(blocks)
        if "decision: go_to(SaveContractEdit) vs dead_end()" in block
    ]
    assert decided and all("dx-diff-now" in blocks[i] for i in decided)
    assert {recorded[i].execution_id for i in decided} == {"EditContract-3"}
    assert "<title>dexviz compare · flow-1</title>" in page
    assert "ContractEditFlow · compare" in page
    assert "compared with Flow id flow-1 (run b," in page
    assert page.count('id="dx-compare"') == 1 and page.count(".dx-compare .dx-sides") == 1
    assert 'class="dx-side-title">run b</div>' in blocks[-1]


def test_a_compare_debugger_writes_its_compared_run_into_its_page(runs, tmp_path):
    pytest.importorskip("ipywidgets")
    from dexviz.widgets import Debugger

    recorded, changed = runs
    written = Debugger(recorded, compare=changed).to_html(tmp_path / "d.html")
    text = written.read_text(encoding="utf-8")
    assert "ContractEditFlow · compare" in text and "dx-diff-now" in text


def test_a_run_compared_with_itself_says_there_is_no_difference(tmp_path):
    run = history(3)
    data = island(report_html(run, compare=run))
    assert all("no difference: the runs are the same" in _block(data, i) for i in range(len(run)))


def test_a_page_without_compare_has_no_compare_block():
    page = report_html(history(3))
    assert 'id="dx-compare"' not in page and '"c":' not in page
    assert "ContractEditFlow · replay" in page


def test_compare_refuses_what_is_not_a_run(tmp_path):
    with pytest.raises(TypeError, match="compare= takes a History or a SimulationRun, got int"):
        report_html(history(3), compare=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="holds no event"):
        write_report(history(3), tmp_path / "x.html", compare=history(3)[0:0])


def test_the_report_command_compares_with_a_second_history(runs, tmp_path, capsys):
    recorded, changed = runs
    a, b = recorded.save(tmp_path / "a.jsonl"), changed.save(tmp_path / "b.jsonl")
    assert main(["report", str(a), "--compare", str(b), "-o", str(tmp_path / "c.html")]) == 0
    written = (tmp_path / "c.html").read_text(encoding="utf-8")
    assert "dx-diff-now" in written and "ContractEditFlow · compare" in written
    assert main(["report", str(a), "--compare-flow", "flow-1"]) == 2
    assert "--compare-flow picks the Flow of a --compare store" in capsys.readouterr().err


def test_the_diff_command_writes_the_stepped_replay_beside_the_side_by_side_view(runs, tmp_path):
    recorded, changed = runs
    a, b = recorded.save(tmp_path / "a.jsonl"), changed.save(tmp_path / "b.jsonl")
    assert main(["diff", str(a), str(b), "--out", str(tmp_path / "out")]) == 1
    replay = (tmp_path / "out" / "replay.html").read_text(encoding="utf-8")
    assert "dx-diff-now" in replay and 'id="dx-compare"' in replay
