"""Damaged databases are refused on open, naming the file, the Flow and the row.

The store checks on open what ``History.load`` checks in a history file (contiguous seq, time
never going backwards, well-formed bodies, every run's rows), so a damaged file is never served
as a history the reader would refuse, nor resumed by an engine.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

import dexviz
from dexviz.engine import StoreError
from dexviz.examples.contract_edit import ContractEditFlow
from tests.engine.damaged_stores import damage, open_run_store


def _refused_by_readers_and_writers(folder: Path, name: str) -> None:
    path = open_run_store(folder / "runs.db")
    message = damage(path, name)
    with pytest.raises(StoreError, match=re.escape(str(path)) + ": " + message) as read:
        dexviz.SQLiteStore(path, readonly=True)
    assert "the database is damaged, so it is not loaded" in str(read.value)
    with pytest.raises(StoreError, match=message):
        dexviz.Engine([ContractEditFlow()], store=dexviz.SQLiteStore(path))
    with pytest.raises(StoreError, match=message):  # not "already open": no lock is kept
        dexviz.SQLiteStore(path)


def test_an_event_row_that_is_not_utf8_is_refused_naming_its_row(tmp_path: Path) -> None:
    _refused_by_readers_and_writers(tmp_path, "not utf-8")


def test_a_deeply_nested_body_is_refused_naming_its_row(tmp_path: Path) -> None:
    _refused_by_readers_and_writers(tmp_path, "deeply nested")


def test_a_flow_spec_that_is_not_json_is_refused_naming_the_start_row(tmp_path: Path) -> None:
    _refused_by_readers_and_writers(tmp_path, "spec not json")


def test_a_seq_that_is_text_is_refused_naming_its_row(tmp_path: Path) -> None:
    _refused_by_readers_and_writers(tmp_path, "text seq")


def test_a_deleted_row_is_refused_not_resumed_with_a_seq_gap(tmp_path: Path) -> None:
    _refused_by_readers_and_writers(tmp_path, "deleted row")


def test_a_duplicated_row_is_refused_naming_the_copy(tmp_path: Path) -> None:
    _refused_by_readers_and_writers(tmp_path, "duplicated row")


def test_a_time_that_goes_backwards_is_refused_naming_its_row(tmp_path: Path) -> None:
    _refused_by_readers_and_writers(tmp_path, "time backwards")


def test_an_emptied_runs_table_is_refused_rather_than_losing_the_run(tmp_path: Path) -> None:
    _refused_by_readers_and_writers(tmp_path, "emptied runs")


def test_a_run_whose_events_were_all_deleted_is_refused(tmp_path: Path) -> None:
    path = open_run_store(tmp_path / "runs.db")
    with sqlite3.connect(path, isolation_level=None) as db:
        db.execute("DELETE FROM events")
    with pytest.raises(StoreError, match=r"Flow 'edits', runs row 1 \(run [0-9a-f-]+\): it has no"):
        dexviz.SQLiteStore(path, readonly=True)


def test_an_intact_open_run_still_opens_and_resumes(tmp_path: Path) -> None:
    path = open_run_store(tmp_path / "runs.db")
    engine = dexviz.Engine([ContractEditFlow()], store=dexviz.SQLiteStore(path))
    engine.run_until_idle()
    history = engine.history("edits")
    assert [e.seq for e in history] == list(range(1, len(history) + 1))
    assert dexviz.History.from_jsonl(history.to_jsonl()) == history
    engine.close()


def test_a_flow_whose_first_row_was_deleted_is_refused(tmp_path: Path) -> None:
    path = open_run_store(tmp_path / "runs.db")
    with sqlite3.connect(path, isolation_level=None) as db:
        db.execute("DELETE FROM events WHERE id = 1")
    with pytest.raises(StoreError, match=r"events row 2: seq 2 does not follow the start of its"):
        dexviz.SQLiteStore(path, readonly=True)
