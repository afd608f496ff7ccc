"""``dexviz history runs.db --flow ID``: a stored run renders like a saved .jsonl history."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import dexviz
from dexviz import cli
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits
from tests.engine.damaged_stores import DAMAGE, damage, open_run_store


@pytest.fixture
def runs_db(tmp_path: Path) -> Path:
    flow = ContractEditFlow()
    path = tmp_path / "runs.db"
    engine = dexviz.Engine([flow], seed=4, store=dexviz.SQLiteStore(path, durability="normal"))
    for flow_id in ("first", "second"):
        engine.client().start_flow(flow, flow_id, sample_edits(3))
    engine.run_until_idle()
    engine.history("first").save(tmp_path / "first.jsonl")
    engine.close()
    return path


def test_a_stored_run_prints_the_summary_of_its_jsonl(runs_db: Path, capsys) -> None:
    args = ["--channel", "contractEditToken"]
    assert cli.main(["history", str(runs_db.parent / "first.jsonl"), *args]) == 0
    from_jsonl = capsys.readouterr().out
    assert cli.main(["history", str(runs_db), "--flow", "first", *args]) == 0
    assert capsys.readouterr().out == from_jsonl
    assert "3 holdings, OK" in from_jsonl


def test_views_of_a_stored_run_are_written(runs_db: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "views"
    assert cli.main(["history", str(runs_db), "--flow", "second", "--out", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out


def test_a_database_with_several_flows_needs_flow(runs_db: Path, capsys) -> None:
    assert cli.main(["history", str(runs_db)]) == 2
    assert "holds 2 Flows; pick one with --flow (first, second)" in capsys.readouterr().err


def test_an_unknown_flow_id_is_named(runs_db: Path, capsys) -> None:
    assert cli.main(["history", str(runs_db), "--flow", "third"]) == 2
    assert "has no Flow 'third' (it holds: first, second)" in capsys.readouterr().err


def test_flow_on_a_jsonl_file_is_a_usage_error(runs_db: Path, capsys) -> None:
    assert cli.main(["history", str(runs_db.parent / "first.jsonl"), "--flow", "first"]) == 2
    assert "--flow reads a SQLite store" in capsys.readouterr().err


def test_a_stored_run_is_read_while_a_writer_holds_the_database(runs_db: Path, capsys) -> None:
    writer = dexviz.SQLiteStore(runs_db)
    assert cli.main(["history", str(runs_db), "--flow", "first"]) == 0
    writer.close()


@pytest.mark.parametrize("damaged", sorted(DAMAGE))
def test_a_damaged_store_is_refused_naming_the_file_the_flow_and_the_row(
    tmp_path: Path, capsys, damaged: str
) -> None:
    path = open_run_store(tmp_path / "runs.db")
    message = damage(path, damaged)
    assert cli.main(["history", str(path), "--flow", "edits"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"dexviz history: error: {path}: "), err
    assert re.search(message, err), err
    assert "Traceback" not in err and err.count("\n") == 1
