"""The SQLite store's schema (version 1): compact append-only rows, and checks on open.

One row per event in a rowid table, so appends go to the end of the B-tree. The event kind
and method are small integers; the run and Flow ids live once in their own tables. The payload
is compact JSON in the engine's own key order (no sorting), and empty members (``writes: []``,
``locals: {}``, ...) are left out and restored on read, so a stored event reads back equal.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from dexviz.engine.sqlite.sqlite_compact import compact_payload, expand
from dexviz.history.event import Event
from dexviz.history.jsonl import load_json
from dexviz.history.kinds import EventKind

SCHEMA_VERSION = 1
"""``PRAGMA user_version`` of a dexviz database."""

SCHEMA = """
CREATE TABLE flows (id INTEGER PRIMARY KEY, flow_id TEXT NOT NULL UNIQUE);
CREATE TABLE specs (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY, flow INTEGER NOT NULL, run_id TEXT NOT NULL, t0 INTEGER NOT NULL
);
CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    run INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    t INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    ex TEXT,
    step TEXT,
    method INTEGER,
    attempt INTEGER,
    body TEXT
);
CREATE INDEX events_by_run ON events (run);
"""

EXPECTED_COLUMNS = {
    "flows": ("id", "flow_id"),
    "specs": ("id", "body"),
    "runs": ("id", "flow", "run_id", "t0"),
    "events": ("id", "run", "seq", "t", "kind", "ex", "step", "method", "attempt", "body"),
}

KIND_CODES = {kind: code for code, kind in enumerate(EventKind, start=1)}
"""Event kind -> its stored integer (append new kinds at the end of EventKind only)."""
KINDS = {code: kind for kind, code in KIND_CODES.items()}
METHOD_CODES = {"wait_for": 1, "execute": 2, "rpc": 3, "timeout_handler": 4}
METHODS = {code: method for method, code in METHOD_CODES.items()}

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


class StoreError(RuntimeError):
    """A database the SQLite store cannot use: wrong schema, damaged rows, held by a writer."""


def encode(event: Event, run: int, t0: int = 0) -> tuple[Any, ...]:
    """The row of one event (``run`` is the rowid of its run; times are stored after ``t0``)."""
    kind = event.kind
    kept = compact_payload(kind, event.payload, event.time_ns)
    body = _dumps(kept) if kept else None
    ex = event.execution_id
    step = event.step_type
    if step is not None and ex is not None and ex.rpartition("-")[0] == step:
        step = None  # "Type-N" names its Step type already
    method = event.method
    return (
        run,
        event.seq,
        event.time_ns - t0,
        KIND_CODES.get(kind, kind) if isinstance(kind, EventKind) else str(kind),
        ex,
        step,
        METHOD_CODES.get(method, method) if method is not None else None,
        event.attempt,
        body,
    )


def decode(row: tuple[Any, ...], flow_id: str, run: tuple[str, int], where: str) -> Event:
    """The event of one stored row (``run``: its run id and start time); damage is named."""
    rowid, seq, _, kind_code, _, _, _, _, body = row
    kind: EventKind | str | None = KINDS.get(kind_code) if isinstance(kind_code, int) else kind_code
    if kind is None or not isinstance(kind, str):
        raise StoreError(f"{where}: events row {rowid} has an unknown event kind {kind_code!r}")
    payload: dict[str, Any] = {}
    if body is not None:
        try:
            payload = load_json(body)
        except (TypeError, ValueError) as error:
            raise StoreError(
                f"{where}: events row {rowid} (Flow {flow_id!r}, seq {seq}) holds a payload "
                f"that is not JSON: {error}"
            ) from None
        if not isinstance(payload, dict):
            raise StoreError(
                f"{where}: events row {rowid} (Flow {flow_id!r}, seq {seq}) holds a payload "
                "that is not a JSON object"
            )
    return decoded(row, kind, flow_id, run, payload)


def decoded(
    row: tuple[Any, ...], kind: Any, flow_id: str, run: tuple[str, int], payload: dict[str, Any]
) -> Event:
    """The event of a stored row whose kind and body are read already.

    ``payload`` is the body's JSON object; the members the store left out are put back in it.
    """
    _, seq, offset, _, ex, step, method, attempt, _ = row
    run_id, t0 = run
    time_ns = t0 + offset
    expand(kind, payload, time_ns)
    if step is None and ex is not None:
        step = ex.rpartition("-")[0]
    return Event(
        seq,
        time_ns,
        kind,
        flow_id,
        run_id,
        ex,
        step,
        METHODS.get(method, method) if method is not None else None,
        attempt,
        payload,
    )


def check_schema(db: sqlite3.Connection, where: str) -> None:
    """Check an existing database: our version, our tables and columns, no triggers."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    tables = {
        name: kind
        for name, kind in db.execute(
            "SELECT name, type FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
        )
    }
    if version != SCHEMA_VERSION:
        raise StoreError(
            f"{where}: schema version {version} is not one this dexviz reads (it reads version "
            f"{SCHEMA_VERSION}); "
            + (
                "it looks like a history written by an older dexviz"
                if "events" in tables and version == 0
                else "was it written by another program or a newer dexviz?"
            )
        )
    triggers = [name for name, kind in tables.items() if kind == "trigger"]
    if triggers:
        raise StoreError(f"{where}: unexpected triggers {sorted(triggers)}; not a dexviz database")
    for table, columns in EXPECTED_COLUMNS.items():
        found = tuple(row[1] for row in db.execute(f"PRAGMA table_info({table})"))
        if found != columns:
            raise StoreError(
                f"{where}: table {table!r} has columns {list(found)}, expected {list(columns)}"
            )


def check_integrity(db: sqlite3.Connection, where: str) -> None:
    """Run ``PRAGMA integrity_check``; a damaged file raises StoreError with its findings."""
    try:
        problems = [row[0] for row in db.execute("PRAGMA integrity_check")]
    except sqlite3.DatabaseError as error:
        raise StoreError(f"{where}: the database file is damaged or not SQLite ({error})") from None
    if problems != ["ok"]:
        raise StoreError(f"{where}: integrity check failed: {'; '.join(problems[:5])}")


def dumps(value: Any) -> str:
    """Compact JSON, keys in the order given."""
    return _dumps(value)
