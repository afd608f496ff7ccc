"""CheckedFlows: every Flow of a store read in the pass that checks its rows, as the store reads it.

Each history equals ``SQLiteStore.history`` of that Flow; a damaged row raises the StoreError
opening the store raises, once the pass reaches it, after the Flows wholly before it.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

import dexviz
from dexviz import FlowConfig, StartFlowOptions
from dexviz.engine import StoreError
from dexviz.engine.sqlite.sqlite_runs import CheckedFlows
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits
from tests.engine.damaged_stores import DAMAGE, damage, open_run_store


def _stored(path: Path) -> dict[str, dexviz.History]:
    store = dexviz.SQLiteStore(path, readonly=True)
    try:
        return {flow_id: store.history(flow_id) for flow_id in store.flow_ids()}
    finally:
        store.close()


def _read(path: Path) -> tuple[tuple[str, ...], list[tuple[str, dexviz.History]]]:
    with CheckedFlows(path) as flows:
        return flows.flow_ids, list(flows)


def _shared_engine_store(path: Path) -> Path:
    """Three Flows run by one engine at once (their rows interleave), one continued as new."""
    flow = ContractEditFlow()
    continued = StartFlowOptions(config_override=FlowConfig(continue_as_new_threshold=20))
    with dexviz.Engine(flow, seed=3, store=dexviz.SQLiteStore(path)) as engine:
        client = engine.client()
        client.start_flow(flow, "first", sample_edits(2))
        client.start_flow(flow, "continued", sample_edits(3), continued)
        client.start_flow(flow, "third", sample_edits(1))
        engine.run_until_idle()
    return path


def test_every_flow_reads_as_the_store_reads_it(tmp_path: Path) -> None:
    path = _shared_engine_store(tmp_path / "runs.db")
    flow_ids, read = _read(path)
    stored = _stored(path)
    assert flow_ids == tuple(stored) == ("first", "continued", "third")
    assert sorted(flow_id for flow_id, _ in read) == sorted(stored)
    for flow_id, history in read:
        assert history == stored[flow_id]
        assert history.to_jsonl() == stored[flow_id].to_jsonl()
    assert len(stored["continued"].run_ids) > 1


def test_flows_come_as_the_pass_completes_them(tmp_path: Path) -> None:
    """A Flow is handed out once the pass is past its last row, not in first-commit order."""
    path = _shared_engine_store(tmp_path / "runs.db")
    with sqlite3.connect(path) as db:
        last = dict(db.execute(
            "SELECT flow_id, MAX(events.id) FROM events JOIN runs ON events.run = runs.id "
            "JOIN flows ON runs.flow = flows.id GROUP BY flow_id"
        ).fetchall())  # fmt: skip
    _, read = _read(path)
    assert [flow_id for flow_id, _ in read] == sorted(last, key=last.__getitem__)


def test_a_flow_with_no_run_reads_as_an_empty_history(tmp_path: Path) -> None:
    path = open_run_store(tmp_path / "runs.db")
    with sqlite3.connect(path, isolation_level=None) as db:
        db.execute("INSERT INTO flows (flow_id) VALUES ('never-started')")
    flow_ids, read = _read(path)
    assert flow_ids == ("edits", "never-started")
    assert [(flow_id, len(history)) for flow_id, history in read][1] == ("never-started", 0)


@pytest.mark.parametrize("name", sorted(DAMAGE))
def test_a_damaged_row_raises_what_opening_the_store_raises(tmp_path: Path, name: str) -> None:
    path = open_run_store(tmp_path / "runs.db")
    message = damage(path, name)
    with pytest.raises(StoreError, match=re.escape(str(path)) + ": " + message) as read:
        _read(path)
    assert "the database is damaged, so it is not loaded" in str(read.value)


def test_a_run_whose_rows_were_all_deleted_raises_naming_it(tmp_path: Path) -> None:
    path = open_run_store(tmp_path / "runs.db")
    with sqlite3.connect(path, isolation_level=None) as db:
        db.execute("DELETE FROM events")
    with pytest.raises(StoreError, match=r"Flow 'edits', runs row 1 \(run [0-9a-f-]+\): it has no"):
        _read(path)


def test_the_flows_before_a_damaged_row_are_read_whole_before_it_raises(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    store = dexviz.SQLiteStore(path)
    for number in range(3):
        flow_id = f"e{number}"
        run = dexviz.simulate(ContractEditFlow(), sample_edits(1), seed=number, flow_id=flow_id)
        store.commit(flow_id, run.history.events)
    store.close()
    stored = _stored(path)
    with sqlite3.connect(path, isolation_level=None) as db:
        (row,) = db.execute("SELECT MIN(events.id) FROM events JOIN runs ON run = runs.id "
                            "JOIN flows ON flow = flows.id WHERE flow_id = 'e2'").fetchone()
        db.execute("UPDATE events SET body = '{not json' WHERE id = ?", (row + 3,))
    read = []
    with CheckedFlows(path) as flows, pytest.raises(
        StoreError, match=f"Flow 'e2', events row {row + 3}: body is not JSON"
    ):
        for flow_id, history in flows:
            read.append((flow_id, history))
    assert read == [("e0", stored["e0"]), ("e1", stored["e1"])]


def test_a_file_that_is_not_a_dexviz_database_is_refused_as_the_store_refuses_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE t (x)")
    with pytest.raises(StoreError, match="schema version 0 is not one this dexviz reads"):
        _read(path)
    with pytest.raises(StoreError, match="no such database"):
        _read(tmp_path / "missing.db")


def test_reading_outside_the_with_block_is_refused(tmp_path: Path) -> None:
    path = open_run_store(tmp_path / "runs.db")
    flows = CheckedFlows(path)
    with pytest.raises(StoreError, match="inside its with block"):
        list(flows)
