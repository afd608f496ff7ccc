"""Test support: a database holding an open run, and the ways such a file gets damaged.

Each damage is an SQL change made behind the store's back, and the error message the store
must refuse the file with (naming the Flow and the row).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import dexviz
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits

_DEEP = '{"a":' * 5000 + "1" + "}" * 5000
DAMAGE: dict[str, tuple[str, str]] = {
    "not utf-8": (
        "UPDATE events SET body = CAST(X'7b2278223a22ff227d' AS TEXT) WHERE id = 6",
        r"Flow 'edits', events row 6: Could not decode to UTF-8 column 'body' \(not UTF-8\)",
    ),
    "deeply nested": (
        f"UPDATE events SET body = '{_DEEP}' WHERE id = 6",
        r"Flow 'edits', events row 6: body is not JSON: JSON nested too deeply",
    ),
    "spec not json": (
        "UPDATE specs SET body = '{not json'",
        r"Flow 'edits', events row 1: the Flow spec it names \(specs row 1\) is not JSON",
    ),
    "text seq": (
        "UPDATE events SET seq = 'five' WHERE id = 6",
        r"Flow 'edits', events row 6: seq 'five' and time 0 are not integers",
    ),
    "deleted row": (
        "DELETE FROM events WHERE id = 10",
        r"Flow 'edits', events row 11: seq 11 does not follow seq 9 \(expected 10\)",
    ),
    "duplicated row": (
        "INSERT INTO events (run, seq, t, kind, ex, step, method, attempt, body) "
        "SELECT run, seq, t, kind, ex, step, method, attempt, body FROM events WHERE id = 4",
        r"Flow 'edits', events row 22: seq 4 does not follow seq 21 \(expected 22\)",
    ),
    "time backwards": (
        "UPDATE events SET t = -5 WHERE id = 10",
        r"Flow 'edits', events row 10: time goes backwards \(time_ns \d+ after \d+\)",
    ),
    "emptied runs": (
        "DELETE FROM runs",
        r"events row 1: names run row 1, which the runs table does not hold",
    ),
}
"""Damage name -> (the SQL that does it, the StoreError message that names it)."""


def open_run_store(path: Path) -> Path:
    """A database at ``path`` holding Flow ``edits`` part-way (21 events, one run, open)."""
    flow = ContractEditFlow()
    engine = dexviz.Engine([flow], seed=4, store=dexviz.SQLiteStore(path, durability="normal"))
    engine.client().start_flow(flow, "edits", sample_edits(3))
    for _ in range(6):
        engine.step()
    engine.close()
    return path


def damage(path: Path, name: str) -> str:
    """Apply the damage ``name`` to the database at ``path``; return its expected message."""
    change, message = DAMAGE[name]
    with sqlite3.connect(path, isolation_level=None) as db:
        db.execute(change)
    return message
