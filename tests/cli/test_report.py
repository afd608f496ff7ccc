"""``dexviz report``: a saved history becomes one HTML replay file; bad input exits 2."""

from __future__ import annotations

import pytest

import dexviz
from dexviz import cli
from tests.report.pages import island
from tests.widgets.helpers import TOKEN, history


@pytest.fixture
def saved(tmp_path):
    return history(3).save(tmp_path / "run.jsonl")


@pytest.mark.requires_dot
def test_report_writes_the_replay_next_to_the_history(saved, capsys):
    assert cli.main(["report", str(saved), "--channel", TOKEN]) == 0
    out = saved.with_suffix(".html")
    text = out.read_text(encoding="utf-8")
    assert len(island(text)["events"]) == len(history(3))
    assert f"wrote {out}" in capsys.readouterr().out


@pytest.mark.requires_dot
def test_report_writes_to_dash_o_and_checks_the_flow(saved, tmp_path):
    out = tmp_path / "deep" / "replay.html"
    out.parent.mkdir()
    assert cli.main(["report", str(saved), "-o", str(out), "--flow", "flow-1",
                     "--graph", "definition"]) == 0
    assert 'data-graph="definition"' in out.read_text(encoding="utf-8")


def _error(capsys) -> str:
    return capsys.readouterr().err.strip()


def test_missing_history_exits_1(tmp_path, capsys):
    assert cli.main(["report", str(tmp_path / "none.jsonl")]) == 1
    assert "no such file" in _error(capsys)


def test_a_file_that_is_not_a_history_exits_1_naming_the_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n", encoding="utf-8")
    assert cli.main(["report", str(bad)]) == 1
    assert "dexviz report: error:" in (err := _error(capsys)) and "line 1" in err
    assert not bad.with_suffix(".html").exists()


def test_an_empty_file_exits_1(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    assert cli.main(["report", str(empty)]) == 1
    assert "empty.jsonl" in (err := _error(capsys)) and "empty" in err


def test_a_history_without_events_exits_1(tmp_path, capsys):
    header = tmp_path / "header.jsonl"
    header.write_text('{"format": "dexviz-history", "version": 1, "flow_id": "flow-1"}\n',
                      encoding="utf-8")
    assert cli.main(["report", str(header)]) == 1
    assert "nothing to replay" in _error(capsys)


def test_another_flow_id_exits_2(saved, capsys):
    assert cli.main(["report", str(saved), "--flow", "flow-9"]) == 2
    assert "holds Flow 'flow-1', not 'flow-9'" in _error(capsys)


def test_an_output_that_is_not_html_exits_2(saved, tmp_path, capsys):
    assert cli.main(["report", str(saved), "-o", str(tmp_path / "run.svg")]) == 2
    assert "name it *.html" in _error(capsys)


def test_an_unwritable_output_exits_1(saved, tmp_path, capsys):
    assert cli.main(["report", str(saved), "-o", str(tmp_path / "no" / "dir" / "r.html")]) == 1
    assert "cannot write" in _error(capsys)


def test_a_missing_flow_source_exits_1(saved, tmp_path, capsys):
    assert cli.main(["report", str(saved), "--source", str(tmp_path / "flow.py")]) == 1
    assert "no such file" in _error(capsys)


def _store(path, *flow_ids):
    from dexviz.examples.contract_edit import ContractEditFlow, sample_edits

    flow = ContractEditFlow()
    store = dexviz.SQLiteStore(path)
    engine = dexviz.Engine([flow], store=store)
    for flow_id in flow_ids:
        engine.client().start_flow(flow, flow_id, sample_edits(2))
    engine.run_until_idle()
    histories = {flow_id: engine.history(flow_id) for flow_id in flow_ids}
    store.close()
    return histories


@pytest.mark.requires_dot
def test_report_reads_one_flow_of_a_sqlite_store(tmp_path, capsys):
    histories = _store(tmp_path / "runs.db", "edit-1", "edit-2")
    out = tmp_path / "edit-2.html"
    assert cli.main(["report", str(tmp_path / "runs.db"), "--flow", "edit-2",
                     "-o", str(out)]) == 0
    data = island(out.read_text(encoding="utf-8"))
    assert len(data["events"]) == len(histories["edit-2"])
    assert "Flow id edit-2" in out.read_text(encoding="utf-8")


def test_a_store_of_several_flows_needs_dash_dash_flow(tmp_path, capsys):
    _store(tmp_path / "runs.db", "edit-1", "edit-2")
    assert cli.main(["report", str(tmp_path / "runs.db")]) == 2
    assert "store of 2 Flows (edit-1, edit-2); choose one with --flow ID" in _error(capsys)
    assert cli.main(["report", str(tmp_path / "runs.db"), "--flow", "edit-9"]) == 2
    assert "it has no Flow 'edit-9'" in _error(capsys)
    assert not (tmp_path / "runs.html").exists()


def test_a_damaged_store_exits_1_naming_the_file(tmp_path, capsys):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)
    assert cli.main(["report", str(bad), "--flow", "x"]) == 1
    assert "bad.db" in _error(capsys)
