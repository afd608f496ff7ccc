"""SQLiteStore: commits to a SQLite file, one transaction per commit, for durable histories.

Every commit of the engine (one method result, one timer, one client request) becomes one
SQLite transaction holding all of its events, so a history on disk never holds half a commit.
The store keeps the history; rebuilding a running engine from it after a crash is not built
yet.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dexviz.history.event import Event
from dexviz.history.history import History
from dexviz.history.kinds import kind_of

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    flow_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    time_ns INTEGER NOT NULL,
    kind TEXT NOT NULL,
    run_id TEXT NOT NULL,
    execution_id TEXT,
    step_type TEXT,
    method TEXT,
    attempt INTEGER,
    payload TEXT NOT NULL,
    PRIMARY KEY (flow_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS flows (
    flow_id TEXT PRIMARY KEY,
    position INTEGER NOT NULL
);
"""
_INSERT = "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
_SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")

_dumps = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode


class SQLiteStore:
    """A Store that writes each commit to SQLite (WAL) in one transaction.

    Args:
        path: the database file (created if missing), or ``":memory:"``.
        synchronous: SQLite's ``synchronous`` setting: ``"FULL"`` (default: an fsync per
            commit, durable across power loss) or ``"NORMAL"`` (durable across a crash of the
            process, faster).
    """

    def __init__(self, path: str | Path = ":memory:", *, synchronous: str = "FULL") -> None:
        if synchronous.upper() not in _SYNCHRONOUS:
            raise ValueError(
                f"synchronous must be one of {list(_SYNCHRONOUS)}, got {synchronous!r}"
            )
        self.path = str(path)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(f"PRAGMA synchronous={synchronous.upper()}")
        self._db.executescript(_SCHEMA)
        self._known = set(self.flow_ids_unlocked())
        self.commits = 0

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r}, commits={self.commits})"

    def commit(self, flow_id: str, events: Sequence[Event]) -> None:
        """Write ``events`` of ``flow_id`` in one transaction: all of them or none."""
        rows = [
            (
                flow_id,
                e.seq,
                e.time_ns,
                str(e.kind),
                e.run_id,
                e.execution_id,
                e.step_type,
                e.method,
                e.attempt,
                _dumps(dict(e.payload)),
            )
            for e in events
        ]
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            new_flow = flow_id not in self._known
            try:
                if new_flow:
                    db.execute("INSERT INTO flows VALUES (?, ?)", (flow_id, len(self._known)))
                db.executemany(_INSERT, rows)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            self._known.add(flow_id)
            self.commits += 1

    def history(self, flow_id: str) -> History:
        """Every committed event of ``flow_id``, in order."""
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, time_ns, kind, flow_id, run_id, execution_id, step_type, method, "
                "attempt, payload FROM events WHERE flow_id = ? ORDER BY seq",
                (flow_id,),
            ).fetchall()
        return History(_event(row) for row in rows)

    def flow_ids(self) -> tuple[str, ...]:
        """The Flow ids with committed events, in first-commit order."""
        with self._lock:
            return self.flow_ids_unlocked()

    def flow_ids_unlocked(self) -> tuple[str, ...]:
        """``flow_ids`` for a caller that holds the store's lock (or owns the store alone)."""
        rows = self._db.execute("SELECT flow_id FROM flows ORDER BY position").fetchall()
        return tuple(row[0] for row in rows)

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()


def _event(row: tuple[Any, ...]) -> Event:
    seq, time_ns, kind, flow_id, run_id, execution_id, step_type, method, attempt, payload = row
    return Event(
        seq,
        time_ns,
        kind_of(kind),
        flow_id,
        run_id,
        execution_id,
        step_type,
        method,
        attempt,
        json.loads(payload),
    )
