"""The open-time check of a SQLite store: each Flow's rows are a history the reader accepts.

A database is opened only if every Flow's rows make a history that ``History.load`` would load
from its JSON-lines form: ``seq`` contiguous from 1, time never going backwards, well-formed
columns and bodies (UTF-8, strict JSON objects, not nested too deeply), every event naming a
stored run of a stored Flow, every run holding rows and every Flow start naming a stored spec
that is a JSON object.
The checks are the history reader's own (:func:`dexviz.history.jsonl.load_json` and
:func:`~dexviz.history.jsonl.order_problem`), applied in one streaming pass over the events, so
a damaged file is refused naming the file, the Flow and the row, never loaded inconsistent.
A reader of every Flow may take each row from that same pass (:meth:`EventScan.rows`), its
body parsed once for both (:mod:`dexviz.engine.sqlite.sqlite_runs`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from dexviz.engine.sqlite.sqlite_schema import KIND_CODES, KINDS, METHODS, StoreError
from dexviz.history.jsonl import INT64_MAX, load_json, order_problem
from dexviz.history.kinds import EventKind

_EVENTS = "SELECT id, run, seq, t, kind, ex, step, method, attempt, body FROM events ORDER BY id"
_START = KIND_CODES[EventKind.FLOW_STARTED_OR_CONTINUED]
_DAMAGED = "the database is damaged, so it is not loaded"


@dataclass(frozen=True)
class StoredIds:
    """What a writer keeps of a checked database: row ids by name, each Flow's last ``seq``."""

    flows: dict[str, int]
    """Flow id -> its ``flows`` row."""
    runs: dict[tuple[int, str], tuple[int, int]]
    """(``flows`` row, run id) -> its ``runs`` row and start time."""
    spec_ids: dict[str, int]
    """Spec body -> its ``specs`` row."""
    last_seq: dict[str, int]
    """Flow id -> the ``seq`` of its last stored event."""


def checked_ids(db: sqlite3.Connection, where: str) -> StoredIds:
    """Check every row of the database at ``where`` and return its ids.

    Raises:
        StoreError: A row is damaged; the message names the file, the Flow and the row.
    """
    tables = checked_tables(db, where)
    scan = EventScan(tables)
    for _ in scan.rows(db):
        pass
    return StoredIds(
        flows={flow_id: rowid for rowid, flow_id in tables.flows.items()},
        runs={(f, run_id): (rowid, t0) for rowid, (f, run_id, t0) in tables.runs.items()},
        spec_ids={body: rowid for rowid, (body,) in tables.specs.items()},
        last_seq={flow_id: seq for flow_id, (seq, _) in scan.last.items()},
    )


@dataclass(frozen=True)
class Tables:
    """The checked rows of the small tables, by rowid, and the file they are in."""

    where: str
    flows: dict[int, str]
    """``flows`` row -> its Flow id."""
    runs: dict[int, tuple[Any, ...]]
    """``runs`` row -> its ``flows`` row, run id and start time."""
    specs: dict[int, tuple[Any, ...]]
    """``specs`` row -> its body (as a 1-tuple)."""


def checked_tables(db: sqlite3.Connection, where: str) -> Tables:
    """The rows of the flows, runs and specs tables, each checked.

    Raises:
        StoreError: A row is damaged; the message names the file, the table and the row.
    """
    flows = _table(db, where, "flows", "SELECT id, flow_id FROM flows", _flow_row)
    names = {rowid: flow_id for rowid, (flow_id,) in flows.items()}
    runs = _table(
        db, where, "runs", "SELECT id, flow, run_id, t0 FROM runs", lambda r: _run_row(r, names)
    )
    specs = _table(db, where, "specs", "SELECT id, body FROM specs", _spec_row)
    return Tables(where, names, runs, specs)


def _table(
    db: sqlite3.Connection,
    where: str,
    table: str,
    query: str,
    check: Callable[[tuple[Any, ...]], str],
) -> dict[int, tuple[Any, ...]]:
    """Each row of a small table by rowid, after ``check`` (a problem text or ``""``)."""
    found: dict[int, tuple[Any, ...]] = {}
    rowid: Any = None
    try:
        for rowid, *values in db.execute(query):
            problem = check((rowid, *values))
            if problem:
                raise StoreError(f"{where}: {table} row {rowid}: {problem}; {_DAMAGED}")
            found[rowid] = tuple(values)
    except sqlite3.OperationalError as error:
        after = "its first row" if rowid is None else f"row {rowid}"
        raise StoreError(
            f"{where}: {table} table: the row after {after}: {error}; {_DAMAGED}"
        ) from None
    return found


def _flow_row(row: tuple[Any, ...]) -> str:
    return "" if isinstance(row[1], str) and row[1] else f"Flow id {row[1]!r} is not a name"


def _run_row(row: tuple[Any, ...], names: dict[int, str]) -> str:
    _, flow, run_id, t0 = row
    if flow not in names:
        return f"names Flow row {flow!r}, which the flows table does not hold"
    if not isinstance(run_id, str) or type(t0) is not int:
        return f"run id {run_id!r} and start time {t0!r} are not a text and an integer"
    return ""


def _spec_row(row: tuple[Any, ...]) -> str:
    # Its JSON is checked where a Flow start names it, so the error can name the Flow.
    return "" if isinstance(row[1], str) else f"spec of type {type(row[1]).__name__}, not text"


def _spec_problem(body: str) -> str:
    try:
        spec = load_json(body)
    except ValueError as error:
        return f"is not JSON: {error}"
    return "" if isinstance(spec, dict) else "is not a JSON object"


CheckedRow = tuple[tuple[Any, ...], str, int, Any]
"""An events row the check accepts, its Flow id, its ``time_ns`` and its body's JSON object
(None when the row has no body)."""


class EventScan:
    """Checks each events row against its run and the previous event of its Flow."""

    def __init__(self, tables: Tables) -> None:
        self.where = tables.where
        self.runs = {rowid: (tables.flows[f], t0) for rowid, (f, _, t0) in tables.runs.items()}
        self.run_rows = tables.runs
        self.specs = tables.specs
        self.last: dict[str, tuple[int, int]] = {}
        self.seen: set[int] = set()
        self.good_specs: set[int] = set()
        self.rowid = 0

    def rows(self, db: sqlite3.Connection) -> Iterator[CheckedRow]:
        """Every events row in order, each once checked, then that every run has rows.

        A reader may take each row as it comes (its body parsed once, for both): a damaged
        row raises StoreError naming the file, the Flow and the row when the pass reaches it.
        """
        cursor = db.execute(_EVENTS)
        try:
            yield from self._checked(cursor)
        except sqlite3.OperationalError as error:  # a text column that is not UTF-8
            raise self.unreadable(db, error) from None
        self.every_run_has_rows(self.run_rows)

    def _checked(self, rows: Iterable[tuple[Any, ...]]) -> Iterator[CheckedRow]:
        """Check each row; raise StoreError naming the first the reader would refuse."""
        runs, last, seen = self.runs, self.last, self.seen
        for row in rows:
            rowid, run, seq, offset, kind, ex, step, method, attempt, body = row
            self.rowid = rowid
            found = runs.get(run)
            if found is None:
                raise self.error(None, f"names run row {run!r}, which the runs table does not hold")
            flow_id, t0 = found
            if type(seq) is not int or type(offset) is not int:
                raise self.error(flow_id, f"seq {seq!r} and time {offset!r} are not integers")
            time_ns = t0 + offset
            previous = last.get(flow_id)
            # The usual row, told without a call: the next seq, no earlier than the last (>= 0).
            if (
                previous is None
                or seq != previous[0] + 1
                or not previous[1] <= time_ns <= INT64_MAX
            ):
                problem = order_problem(previous, seq, time_ns, 1, "the start of its Flow")
                if problem or not 0 <= time_ns <= INT64_MAX:
                    raise self.error(flow_id, problem or f"time_ns {time_ns} is out of range")
            last[flow_id] = (seq, time_ns)
            if run not in seen:
                seen.add(run)
            problem, payload = self._parsed(kind, ex, step, method, attempt, body)
            if problem:
                raise self.error(flow_id, problem)
            yield row, flow_id, time_ns, payload

    def _parsed(
        self, kind: Any, ex: Any, step: Any, method: Any, attempt: Any, body: Any
    ) -> tuple[str, Any]:
        """Why a row's columns or body are refused (``""`` if not), and its parsed body."""
        problem = _columns_problem(kind, ex, step, method, attempt)
        payload = None
        if not problem and body is not None:
            try:
                payload = load_json(body)
            except (TypeError, ValueError):
                payload = None
            # A Flow start names its spec row; any other object body needs nothing more.
            if type(payload) is not dict or kind == _START:
                problem = self._body_problem(kind, body)
        return problem, payload

    def _body_problem(self, kind: Any, body: Any) -> str:
        if not isinstance(body, str):
            return f"body of type {type(body).__name__}, not JSON text"
        try:
            payload = load_json(body)  # again: a damaged or a start row only, for its reason
        except ValueError as error:
            return f"body is not JSON: {error}"
        if not isinstance(payload, dict):
            return "body is not a JSON object"
        spec = payload.get("flow") if kind == _START else None
        if type(spec) is not int or spec in self.good_specs:
            return ""
        if spec not in self.specs:
            return f"the Flow start names specs row {spec}, which the specs table does not hold"
        problem = _spec_problem(self.specs[spec][0])
        if problem:
            return f"the Flow spec it names (specs row {spec}) {problem}"
        self.good_specs.add(spec)
        return ""

    def error(self, flow_id: str | None, problem: str) -> StoreError:
        """The StoreError of the current row."""
        flow = "" if flow_id is None else f"Flow {flow_id!r}, "
        return StoreError(f"{self.where}: {flow}events row {self.rowid}: {problem}; {_DAMAGED}")

    def unreadable(self, db: sqlite3.Connection, error: sqlite3.Error) -> StoreError:
        """The StoreError of the row after the last one read, whose text SQLite cannot decode."""
        found = db.execute(
            "SELECT id, run FROM events WHERE id > ? ORDER BY id LIMIT 1", (self.rowid,)
        ).fetchone()
        self.rowid = found[0] if found else self.rowid
        flow = self.runs.get(found[1]) if found else None
        reason = str(error).split(" with text ")[0]  # SQLite's message quotes the whole text
        if reason.startswith("Could not decode"):
            reason += " (not UTF-8)"
        return self.error(flow[0] if flow else None, reason)

    def every_run_has_rows(self, runs: dict[int, tuple[Any, ...]]) -> None:
        """Raise StoreError naming a run with no events rows (they were deleted)."""
        for rowid, (_, run_id, _) in runs.items():
            if rowid not in self.seen:
                flow_id = self.runs[rowid][0]
                raise StoreError(
                    f"{self.where}: Flow {flow_id!r}, runs row {rowid} (run {run_id}): it has no "
                    f"events rows; {_DAMAGED}"
                )


def _columns_problem(kind: Any, ex: Any, step: Any, method: Any, attempt: Any) -> str:
    """Why an event's kind, execution, Step type, method or attempt column is not one."""
    if not (kind in KINDS if type(kind) is int else isinstance(kind, str) and kind):
        return f"unknown event kind {kind!r}"
    if not (ex is None or isinstance(ex, str)) or not (step is None or isinstance(step, str)):
        return f"execution {ex!r} and Step type {step!r} are not texts"
    if not (method is None or method in METHODS or isinstance(method, str)):
        return f"unknown method {method!r}"
    if not (attempt is None or type(attempt) is int and 1 <= attempt <= INT64_MAX):
        return f"attempt {attempt!r} is not a count"
    return ""
