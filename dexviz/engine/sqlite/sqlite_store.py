"""SQLiteStore: commits to a SQLite file, one transaction per commit, for durable histories.

Every commit of the engine (one method result, one timer, one client request) becomes one
SQLite transaction holding all of its events, so a history on disk never holds half a commit.
An Engine opened on a database that holds open runs resumes them (see
:mod:`dexviz.engine.recovery`). One writer per file: a second writer gets a clear error naming
the holder; readers (``readonly=True``) work while a writer runs.

Durability modes (``durability=``):

- ``"full"``: ``synchronous=FULL``: each commit is fsynced before the engine goes on. A commit
  survives a process crash and a power loss.
- ``"normal"``: ``synchronous=NORMAL``: each commit is in the OS once the engine goes on. It
  survives a process crash (kill -9); a power loss can lose the last commits (never half of one).
- ``"group"``: commits as ``"normal"``, and a background thread fsyncs the write-ahead log every
  2 ms or after 64 commits. Survives a process crash; a power loss can lose at most the commits
  of the last few milliseconds (their handlers run again on recovery). Nothing is acknowledged to
  a caller before the fsync that covers it (see :class:`dexviz.engine.sqlite.group_sync.GroupSync`).
"""

from __future__ import annotations

import copy
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from dexviz.engine.sqlite.group_sync import GroupSync
from dexviz.engine.sqlite.sqlite_check import checked_ids
from dexviz.engine.sqlite.sqlite_schema import (
    SCHEMA,
    SCHEMA_VERSION,
    StoreError,
    check_integrity,
    check_schema,
    decode,
    dumps,
    encode,
)
from dexviz.engine.sqlite.store_lock import WriterLock
from dexviz.history.event import Event
from dexviz.history.history import History
from dexviz.history.jsonl import load_json
from dexviz.history.kinds import EventKind

_DURABILITY = {"full": "FULL", "normal": "NORMAL", "group": "NORMAL"}
_SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")
_INSERT = "INSERT INTO events (run, seq, t, kind, ex, step, method, attempt, body) VALUES "
_SELECT = "SELECT id, run, seq, t, kind, ex, step, method, attempt, body FROM events "


class SQLiteStore:
    """A Store that writes each commit to SQLite (WAL) in one transaction.

    Args:
        path: the database file (created if missing), or ``":memory:"``.
        durability: ``"full"`` (default), ``"normal"`` or ``"group"``; see the module docs.
        readonly: open an existing database for reading only (no writer lock is taken).
        synchronous: the older spelling: SQLite's ``synchronous`` setting (``"FULL"``,
            ``"NORMAL"``); overrides ``durability`` when given.

    Raises:
        StoreError: the file is not a dexviz database of a version this dexviz reads, it is
            damaged (every row is checked on open: :mod:`dexviz.engine.sqlite.sqlite_check`), or
            another writer holds it.
    """

    def __init__(
        self,
        path: str | Path = ":memory:",
        *,
        durability: str = "full",
        readonly: bool = False,
        synchronous: str | None = None,
    ) -> None:
        if synchronous is not None and synchronous.upper() not in _SYNCHRONOUS:
            raise ValueError(
                f"synchronous must be one of {list(_SYNCHRONOUS)}, got {synchronous!r}"
            )
        if durability not in _DURABILITY:
            raise ValueError(f"durability must be one of {list(_DURABILITY)}, got {durability!r}")
        self.path = str(path)
        self.readonly = readonly
        self.durability = durability if synchronous is None else synchronous.lower()
        self.commits = 0
        self.failed: StoreError | None = None
        """The error of a commit SQLite refused; every later commit raises it (reopen to go on)."""
        self._lock = threading.Lock()
        self._writer: WriterLock | None = None
        self._sync: GroupSync | None = None
        self._flows: dict[str, int] = {}
        self._runs: dict[tuple[int, str], tuple[int, int]] = {}
        self._last_seq: dict[str, int] = {}
        self._spec_ids: dict[str, int] = {}
        self._specs: dict[int, Any] = {}
        self._db = self._open(synchronous.upper() if synchronous else _DURABILITY[durability])
        if durability == "group" and synchronous is None and not readonly and self._on_disk:
            self._sync = GroupSync(self.path + "-wal")

    @property
    def _on_disk(self) -> bool:
        return self.path != ":memory:" and not self.path.startswith("file::memory:")

    def _open(self, synchronous: str) -> sqlite3.Connection:
        where = self.path
        if self.readonly:
            db = connect_readonly(where)
            self._check(db, where, fresh=False)
            return db
        fresh = (
            not self._on_disk or not Path(self.path).exists() or not Path(self.path).stat().st_size
        )
        if self._on_disk:
            self._writer = WriterLock(self.path)
        try:
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._check(db, where, fresh)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA synchronous={synchronous}")
        except BaseException:
            self._release()
            raise
        return db

    def _check(self, db: sqlite3.Connection, where: str, fresh: bool) -> None:
        try:
            if fresh and not db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall():
                db.executescript(f"BEGIN; {SCHEMA} PRAGMA user_version={SCHEMA_VERSION}; COMMIT;")
                return
            db.execute("BEGIN")  # one snapshot: a writer may commit while a reader checks
            try:
                check_integrity(db, where)
                check_schema(db, where)
                ids = checked_ids(db, where)
            finally:
                if db.in_transaction:  # SQLite may have ended it on an error already
                    db.execute("COMMIT")
            self._flows, self._runs, self._spec_ids = ids.flows, ids.runs, ids.spec_ids
            self._last_seq = ids.last_seq
        except sqlite3.DatabaseError as error:
            db.close()
            raise StoreError(f"{where}: not a usable dexviz database ({error})") from None
        except StoreError:
            db.close()
            raise

    def __repr__(self) -> str:
        mode = "readonly" if self.readonly else self.durability
        return f"SQLiteStore({self.path!r}, {mode}, commits={self.commits})"

    # -- writing ------------------------------------------------------------------------------
    def commit(self, flow_id: str, events: Sequence[Event]) -> None:
        """Write ``events`` of ``flow_id`` in one transaction: all of them or none."""
        self.commit_many(((flow_id, events),))

    def commit_many(self, commits: Sequence[tuple[str, Sequence[Event]]]) -> None:
        """Write the events of several Flows (one engine commit) in one transaction."""
        if self.failed is not None:
            raise self.failed
        if self.readonly:
            raise StoreError(f"{self.path}: opened readonly or closed; it takes no commits")
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            added_flows: list[str] = []
            added_runs: list[tuple[int, str]] = []
            try:
                for flow_id, events in commits:
                    self._check_seqs(flow_id, events)
                    rows = self._rows(db, flow_id, events, added_flows, added_runs)
                    db.executemany(_INSERT + "(?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
                db.execute("COMMIT")
            except BaseException as error:
                self._undo(added_flows, added_runs)
                if isinstance(error, sqlite3.Error):
                    self.failed = _refused(self.path, error)
                    raise self.failed from None
                raise
            for flow_id, events in commits:
                if events:
                    self._last_seq[flow_id] = events[-1].seq
            self.commits += 1
        if self._sync is not None:
            self._sync.committed()

    def _undo(self, added_flows: list[str], added_runs: list[tuple[int, str]]) -> None:
        # A failed COMMIT (a full disk) has already rolled back: ROLLBACK would raise
        # "no transaction is active" and hide the cause.
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")
        for flow_id in added_flows:
            self._flows.pop(flow_id, None)
        for key in added_runs:
            self._runs.pop(key, None)

    def _check_seqs(self, flow_id: str, events: Sequence[Event]) -> None:
        last = self._last_seq.get(flow_id, 0)
        for event in events:
            if event.seq <= last:
                raise StoreError(
                    f"{self.path}: Flow {flow_id!r}: event seq {event.seq} does not follow seq "
                    f"{last}; the commit was refused (nothing written)"
                )
            last = event.seq

    def _rows(
        self,
        db: sqlite3.Connection,
        flow_id: str,
        events: Sequence[Event],
        added_flows: list[str],
        added_runs: list[tuple[int, str]],
    ) -> list[tuple[Any, ...]]:
        flow = self._flows.get(flow_id)
        if flow is None:
            flow = db.execute("INSERT INTO flows (flow_id) VALUES (?)", (flow_id,)).lastrowid
            assert flow is not None
            self._flows[flow_id] = flow
            added_flows.append(flow_id)
        rows: list[tuple[Any, ...]] = []
        run_id, run, t0 = "", 0, 0
        for event in events:
            if event.run_id != run_id:
                run_id = event.run_id
                found = self._runs.get((flow, run_id))
                if found is None:
                    rowid = db.execute(
                        "INSERT INTO runs (flow, run_id, t0) VALUES (?, ?, ?)",
                        (flow, run_id, event.time_ns),
                    ).lastrowid
                    assert rowid is not None
                    found = self._runs[(flow, run_id)] = (rowid, event.time_ns)
                    added_runs.append((flow, run_id))
                run, t0 = found
            if event.kind is EventKind.FLOW_STARTED_OR_CONTINUED:
                event = self._with_spec_id(db, event)
            rows.append(encode(event, run, t0))
        return rows

    def _with_spec_id(self, db: sqlite3.Connection, event: Event) -> Event:
        """The Flow spec of a start is stored once per distinct spec; the event names its id."""
        payload = dict(event.payload)
        spec = payload.get("flow")
        if not isinstance(spec, dict):
            return event
        body = dumps(spec)
        spec_id = self._spec_ids.get(body)
        if spec_id is None:
            rowid = db.execute("INSERT INTO specs (body) VALUES (?)", (body,)).lastrowid
            assert rowid is not None
            spec_id = self._spec_ids[body] = rowid
        payload["flow"] = spec_id
        return event._replace(payload=payload)

    def _spec(self, spec_id: Any, where: str) -> Any:
        found = self._specs.get(spec_id)
        if found is None:
            row = self._db.execute("SELECT body FROM specs WHERE id = ?", (spec_id,)).fetchone()
            if row is None:
                raise StoreError(f"{where}: a Flow start names spec {spec_id!r}, which is missing")
            found = self._specs[spec_id] = load_json(row[0])
        return copy.deepcopy(found)

    def wait_durable(self) -> None:
        """Return once every commit made so far is on disk (only ``"group"`` ever waits)."""
        if self._sync is not None:
            self._sync.wait()

    # -- reading ------------------------------------------------------------------------------
    def history(self, flow_id: str) -> History:
        """Every committed event of ``flow_id``, in order."""
        return History(self._events(flow_id))

    def _events(self, flow_id: str) -> Iterator[Event]:
        with self._lock:
            flow = self._flow_rowid(flow_id)
            if flow is None:
                return iter(())
            runs = {
                rowid: (run_id, t0)
                for rowid, run_id, t0 in self._db.execute(
                    "SELECT id, run_id, t0 FROM runs WHERE flow = ?", (flow,)
                )
            }
            marks = ",".join("?" * len(runs))
            rows = self._db.execute(
                _SELECT + f"WHERE run IN ({marks}) ORDER BY id", tuple(runs)
            ).fetchall()
            where = self.path
            return iter([self._decoded(r, flow_id, runs, where) for r in rows])

    def _decoded(
        self, row: tuple[Any, ...], flow_id: str, runs: dict[int, tuple[str, int]], where: str
    ) -> Event:
        event = decode((row[0], *row[2:]), flow_id, runs[row[1]], where)
        if event.kind is EventKind.FLOW_STARTED_OR_CONTINUED and isinstance(
            event.payload.get("flow"), int
        ):
            event.payload["flow"] = self._spec(event.payload["flow"], where)  # type: ignore[index]
        return event

    def _flow_rowid(self, flow_id: str) -> int | None:
        if not self.readonly:
            return self._flows.get(flow_id)
        found = self._db.execute("SELECT id FROM flows WHERE flow_id = ?", (flow_id,)).fetchone()
        return None if found is None else int(found[0])

    def flow_ids(self) -> tuple[str, ...]:
        """The Flow ids with committed events, in first-commit order."""
        with self._lock:
            rows = self._db.execute("SELECT flow_id FROM flows ORDER BY id").fetchall()
        return tuple(row[0] for row in rows)

    def close(self) -> None:
        """Stop writing: wait for the last fsync and give up the writer lock.

        The store can still be read (``history``, ``flow_ids``); it takes no more commits.
        """
        with self._lock:
            if self._sync is not None:
                self._sync.stop()
                self._sync = None
            self._release()
            self.readonly = True

    def abandon(self) -> None:
        """Drop the writer lock without closing anything, as the death of the process would.

        The connection is left as it is (no checkpoint), so the next writer recovers from the
        same files a crash would leave. For crash tests.
        """
        if self._sync is not None:
            self._sync.stop()
            self._sync = None
        _ABANDONED.append(self._db)
        self._release()

    def _release(self) -> None:
        if self._writer is not None:
            self._writer.release()
            self._writer = None


def connect_readonly(path: str) -> sqlite3.Connection:
    """A connection that only reads the existing database at ``path`` (not checked yet).

    Raises:
        StoreError: There is no such file, it is not a regular file, or it cannot be read.
    """
    if not Path(path).exists():
        raise StoreError(f"{path}: no such database")
    if not Path(path).is_file():  # a FIFO would block SQLite's open forever
        raise StoreError(f"{path}: not a regular file; a database is a regular file")
    uri = f"file:{Path(path).resolve()}?{_read_mode(path)}"
    return sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)


def _read_mode(path: str) -> str:
    """SQLite's URI mode for reading ``path``: ``immutable`` on read-only media.

    SQLite creates ``-shm`` beside a WAL database even to read it; where no file can be created
    (a read-only file system) an intact, checkpointed database is read as immutable.
    """
    try:
        with open(path, "rb"):
            pass
    except PermissionError:
        raise StoreError(f"{path}: Permission denied (the database cannot be read)") from None
    except OSError as error:
        raise StoreError(f"{path}: cannot read the database ({error.strerror})") from None
    if not hasattr(os, "statvfs") or not os.statvfs(path).f_flag & os.ST_RDONLY:
        return "mode=ro"
    wal = Path(path + "-wal")
    if wal.exists() and wal.stat().st_size:
        raise StoreError(
            f"{path}: on a read-only file system with commits not yet checkpointed into it "
            f"({wal.name}); open it once for writing where it can be written, then read it"
        )
    return "mode=ro&immutable=1"


def _refused(path: str, error: sqlite3.Error) -> StoreError:
    """The StoreError of a commit SQLite refused: nothing of it was written."""
    code = getattr(error, "sqlite_errorcode", 0) & 0xFF  # the primary code of an extended one
    if code == sqlite3.SQLITE_FULL:
        cause = "the disk is full"
    elif code in (sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM):
        cause = f"it could not be written ({error})"
    else:
        cause = f"SQLite refused it ({error})"
    return StoreError(
        f"{path}: a commit was refused because {cause}; nothing of it was written and the "
        "store takes no more commits: free the space, close this store and open the database "
        "again to resume from its last commit"
    )


_ABANDONED: list[sqlite3.Connection] = []
"""Connections of abandoned stores, kept open as a dead process would leave its files."""
