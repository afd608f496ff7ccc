"""The SQLite store's schema, checks on open, one writer, readers, and damaged rows."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import dexviz
from dexviz.engine import StoreError
from dexviz.engine.sqlite.sqlite_schema import SCHEMA_VERSION
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits
from dexviz.history import EventKind


def _stored(path: Path, durability: str = "normal") -> dexviz.Engine:
    flow = ContractEditFlow()
    engine = dexviz.Engine([flow], seed=4, store=dexviz.SQLiteStore(path, durability=durability))
    engine.client().start_flow(flow, "edits", sample_edits(3))
    engine.run_until_idle()
    return engine


def _raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def test_a_new_database_carries_the_schema_version(tmp_path: Path) -> None:
    _stored(tmp_path / "h.db").close()
    with _raw(tmp_path / "h.db") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        kinds = {row[0] for row in db.execute("SELECT DISTINCT kind FROM events")}
    assert all(isinstance(k, int) for k in kinds)


@pytest.mark.parametrize("durability", ["full", "normal", "group"])
def test_every_durability_mode_reads_back_the_memory_history(
    tmp_path: Path, durability: str
) -> None:
    engine = _stored(tmp_path / "h.db", durability)
    flow = ContractEditFlow()
    memory = dexviz.Engine([flow], seed=4)
    memory.client().start_flow(flow, "edits", sample_edits(3))
    memory.run_until_idle()
    engine.close()
    reread = dexviz.SQLiteStore(tmp_path / "h.db", readonly=True).history("edits")
    assert reread.to_jsonl() == memory.history("edits").to_jsonl()


def test_an_unknown_durability_is_rejected() -> None:
    with pytest.raises(ValueError, match="durability must be one of"):
        dexviz.SQLiteStore(durability="sometimes")


def test_an_unknown_schema_version_is_a_clear_error(tmp_path: Path) -> None:
    _stored(tmp_path / "h.db").close()
    with _raw(tmp_path / "h.db") as db:
        db.execute("PRAGMA user_version=99")
    with pytest.raises(StoreError, match=r"h\.db: schema version 99 is not one this dexviz reads"):
        dexviz.SQLiteStore(tmp_path / "h.db")


def test_a_database_of_another_program_is_refused(tmp_path: Path) -> None:
    with _raw(tmp_path / "other.db") as db:
        db.execute("CREATE TABLE events (a, b)")
    with pytest.raises(StoreError, match="schema version 0"):
        dexviz.SQLiteStore(tmp_path / "other.db")


def test_unexpected_columns_or_triggers_are_refused(tmp_path: Path) -> None:
    _stored(tmp_path / "h.db").close()
    with _raw(tmp_path / "h.db") as db:
        db.execute("CREATE TRIGGER t AFTER INSERT ON events BEGIN SELECT 1; END")
    with pytest.raises(StoreError, match=r"unexpected triggers \['t'\]"):
        dexviz.SQLiteStore(tmp_path / "h.db")
    with _raw(tmp_path / "h.db") as db:
        db.execute("DROP TRIGGER t")
        db.execute("ALTER TABLE runs ADD COLUMN extra TEXT")
    with pytest.raises(StoreError, match="table 'runs' has columns"):
        dexviz.SQLiteStore(tmp_path / "h.db")


def test_a_file_that_is_not_sqlite_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(StoreError, match=r"junk\.db"):
        dexviz.SQLiteStore(path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("UPDATE events SET body = '{not json' WHERE id = 3", "row 3: body is not JSON"),
        ("UPDATE events SET body = '[1, 2]' WHERE id = 3", "row 3: body is not a JSON object"),
        ("UPDATE events SET kind = 999 WHERE id = 4", "row 4: unknown event kind 999"),
    ],
)
def test_a_damaged_row_is_named(tmp_path: Path, change: str, message: str) -> None:
    _stored(tmp_path / "h.db").close()
    with _raw(tmp_path / "h.db") as db:
        db.execute(change)
    with pytest.raises(StoreError, match=message):
        dexviz.SQLiteStore(tmp_path / "h.db", readonly=True)
    with pytest.raises(StoreError, match=message):
        dexviz.Engine([ContractEditFlow()], store=dexviz.SQLiteStore(tmp_path / "h.db"))


def test_a_second_writer_in_this_process_is_refused_naming_the_holder(tmp_path: Path) -> None:
    engine = _stored(tmp_path / "h.db")
    with pytest.raises(StoreError, match=r"h\.db is already open for writing by process \d+"):
        dexviz.SQLiteStore(tmp_path / "h.db")
    engine.close()
    dexviz.SQLiteStore(tmp_path / "h.db").close()  # free again once the writer closed


def test_a_writer_in_another_process_is_refused_and_readers_still_work(tmp_path: Path) -> None:
    engine = _stored(tmp_path / "h.db")
    code = (
        "import sys, dexviz\n"
        "from dexviz.engine import StoreError\n"
        "try:\n"
        "    dexviz.SQLiteStore(sys.argv[1])\n"
        "except StoreError as error:\n"
        "    print(error); sys.exit(3)\n"
        "print(len(dexviz.SQLiteStore(sys.argv[1], readonly=True).history('edits')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "h.db")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 3, done.stderr
    assert "already open for writing by process" in done.stdout
    reader = dexviz.SQLiteStore(tmp_path / "h.db", readonly=True)
    before = len(reader.history("edits"))
    engine.client().start_flow(engine.registry.definitions[0].flow, "more", sample_edits(2))
    engine.run_until_idle()
    assert len(reader.history("edits")) == before
    assert reader.history("more")[-1].kind == EventKind.FLOW_CLOSED  # sees the writer's commits
    engine.close()


def test_a_readonly_store_takes_no_commits(tmp_path: Path) -> None:
    _stored(tmp_path / "h.db").close()
    store = dexviz.SQLiteStore(tmp_path / "h.db", readonly=True)
    with pytest.raises(StoreError, match="readonly"):
        store.commit("x", [])
    with pytest.raises(StoreError, match="no such database"):
        dexviz.SQLiteStore(tmp_path / "missing.db", readonly=True)


def test_empty_payload_members_are_left_out_and_restored(tmp_path: Path) -> None:
    _stored(tmp_path / "h.db").close()
    with _raw(tmp_path / "h.db") as db:
        bodies = [row[0] for row in db.execute("SELECT body FROM events WHERE body IS NOT NULL")]
    assert not any('"locals":{}' in b or '"writes":[]' in b for b in bodies)
    history = dexviz.SQLiteStore(tmp_path / "h.db", readonly=True).history("edits")
    completed = [e for e in history if e.kind == EventKind.STEP_EXECUTE_COMPLETED]
    assert all(e.payload["writes"] == [] and e.payload["locals"] == {} for e in completed)


def test_a_history_that_cannot_be_folded_is_named(tmp_path: Path) -> None:
    from dexviz.engine import RecoveryError

    engine = _stored(tmp_path / "h.db")
    engine.client().start_flow(engine.registry.definitions[0].flow, "open", sample_edits(2))
    engine.close()
    with _raw(tmp_path / "h.db") as db:
        db.execute(
            "UPDATE events SET body = '{\"x\": 1}' WHERE kind = 1 AND run = "
            "(SELECT runs.id FROM runs JOIN flows ON flows.id = runs.flow WHERE flow_id = 'open')"
        )
    with pytest.raises(RecoveryError, match=r"h\.db: Flow 'open' cannot be rebuilt"):
        dexviz.Engine([ContractEditFlow()], store=dexviz.SQLiteStore(tmp_path / "h.db"))
