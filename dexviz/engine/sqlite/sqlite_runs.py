"""Every Flow's history of a SQLite store, read in the one pass that checks its rows.

Opening a ``SQLiteStore`` checks every row, which parses every body; reading a Flow then
parses its bodies again. A reader of every Flow (the replay check of a store) goes through
:class:`CheckedFlows` instead: its events come from the check's own streaming pass
(:meth:`~dexviz.engine.sqlite.sqlite_check.EventScan.rows`), each body parsed once for both, and
each Flow's history is handed out as soon as the pass is past that Flow's last row. The checks are
the open-time ones, on one snapshot of the file. A damaged row raises the StoreError opening
the store would (naming the file, the Flow and the row), when the pass reaches it: every Flow
handed out before then lies wholly before that row, so it was read whole and checked.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dexviz.engine.sqlite.sqlite_check import EventScan, Tables, checked_tables
from dexviz.engine.sqlite.sqlite_schema import (
    KINDS,
    StoreError,
    check_integrity,
    check_schema,
    decoded,
)
from dexviz.engine.sqlite.sqlite_store import connect_readonly
from dexviz.history.event import Event
from dexviz.history.history import History
from dexviz.history.jsonl import load_json
from dexviz.history.kinds import EventKind

__all__ = ["CheckedFlows"]

_START = EventKind.FLOW_STARTED_OR_CONTINUED
_LAST_ROWS = "SELECT run, MAX(id) FROM events GROUP BY run"


class CheckedFlows:
    """The Flows of the SQLite database at ``path``, each read whole in the checking pass.

    A context manager: once entered, ``flow_ids`` lists the Flows in first-commit order (as
    ``SQLiteStore.flow_ids``); iterating gives ``(flow_id, History)`` for every Flow once, in
    the order the pass completes them (first-commit order for Flows that ran one after
    another), each history equal to what ``SQLiteStore.history`` reads.

    Raises:
        StoreError: What ``SQLiteStore(path, readonly=True)`` raises: no such file, not a
            dexviz database of this version, damaged (on entering, or for an events row when
            the iteration reaches it).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self.flow_ids: tuple[str, ...] = ()
        self._db: sqlite3.Connection | None = None
        self._tables: Tables | None = None

    def __enter__(self) -> CheckedFlows:
        """Open the file and check all but its events rows (those are checked as read)."""
        where = self.path
        db = connect_readonly(where)
        try:
            db.execute("BEGIN")  # one snapshot for the whole pass: a writer may be committing
            check_integrity(db, where)
            check_schema(db, where)
            self._tables = checked_tables(db, where)
        except sqlite3.DatabaseError as error:
            db.close()
            raise StoreError(f"{where}: not a usable dexviz database ({error})") from None
        except BaseException:
            db.close()
            raise
        self._db = db
        self.flow_ids = tuple(self._tables.flows[rowid] for rowid in sorted(self._tables.flows))
        return self

    def __exit__(self, *exc: object) -> None:
        """End the snapshot and close the file."""
        db, self._db = self._db, None
        if db is not None:
            if db.in_transaction:
                db.execute("COMMIT")
            db.close()

    def __iter__(self) -> Iterator[tuple[str, History]]:
        """Each Flow's history, as soon as the checking pass is past its last row."""
        db, tables = self._db, self._tables
        if db is None or tables is None:
            raise StoreError(f"{self.path}: CheckedFlows is read inside its with block")
        last_rows = _last_rows(db, tables)
        runs = {rowid: (run_id, t0) for rowid, (_, run_id, t0) in tables.runs.items()}
        pending: dict[str, list[Event]] = {}
        try:
            for row, flow_id, _, payload in EventScan(tables).rows(db):
                # Decoded as SQLiteStore.history decodes it; the body was parsed by the check.
                code = row[4]
                kind = KINDS.get(code) if isinstance(code, int) else code
                if payload is None:
                    payload = {}
                elif kind is _START and isinstance(payload.get("flow"), int):
                    payload["flow"] = self._spec(payload["flow"])
                events = pending.get(flow_id)
                if events is None:
                    events = pending[flow_id] = []
                events.append(decoded((row[0], *row[2:]), kind, flow_id, runs[row[1]], payload))
                if row[0] == last_rows.get(flow_id):
                    yield flow_id, History(pending.pop(flow_id))
        except sqlite3.DatabaseError as error:
            raise StoreError(f"{self.path}: not a usable dexviz database ({error})") from None
        for flow_id in self.flow_ids:  # Flows with no run hold no rows: empty histories
            if flow_id not in last_rows:
                yield flow_id, History()

    def _spec(self, spec_id: Any) -> Any:
        """The Flow spec a start names (stored once; each start gets its own copy).

        Each copy is parsed from the stored text again: for a spec of JSON values that is
        several times cheaper than ``copy.deepcopy`` of one parsed copy.
        """
        assert self._tables is not None
        row = self._tables.specs.get(spec_id)
        if row is None:
            raise StoreError(f"{self.path}: a Flow start names spec {spec_id!r}, which is missing")
        return load_json(row[0])

    def __repr__(self) -> str:
        return f"CheckedFlows({self.path!r}, flows={len(self.flow_ids)})"


def _last_rows(db: sqlite3.Connection, tables: Tables) -> dict[str, int]:
    """Each Flow's last events row (Flows with no rows are missing)."""
    last: dict[str, int] = {}
    for run, rowid in db.execute(_LAST_ROWS):
        found = tables.runs.get(run)
        if found is None:
            continue  # a row naming no run: the pass raises StoreError when it reaches it
        flow_id = tables.flows[found[0]]
        if rowid > last.get(flow_id, -1):
            last[flow_id] = rowid
    return last
