"""Where a run to compare comes from: a History, a SimulationRun, a history file, or a store.

``load_history`` turns each of them into a History: a ``SimulationRun`` (or anything with a
``history`` History), a path to a history file (``.jsonl``), a path to a SQLite store holding
one Flow, or a pair ``(store, flow_id)`` where the store is a path or a ``Store``.
"""

from __future__ import annotations

from os import PathLike
from pathlib import Path
from typing import Any

from dexviz.history import History

__all__ = ["RunSource", "is_sqlite", "load_history", "stored_flow_ids"]

RunSource = Any
"""History | SimulationRun | str | PathLike | tuple[store, flow_id] (see ``load_history``)."""

_SQLITE_MAGIC = b"SQLite format 3\x00"


def load_history(source: RunSource, flow_id: str | None = None) -> History:
    """The History ``source`` names.

    Args:
        source: A History; an object with a ``history`` History (a SimulationRun); a history
            file or a SQLite store path; a ``(store, flow_id)`` pair; or a Store.
        flow_id: The Flow to read from a store (needed when the store holds several).

    Raises:
        TypeError: ``source`` is none of those.
        ValueError: A store holds no such Flow, or several and no ``flow_id`` picks one.
        HistoryFormatError: A history file is not valid.
        OSError: A file cannot be read.
    """
    if isinstance(source, History):
        return source
    if isinstance(source, tuple) and len(source) == 2:
        return load_history(source[0], source[1])
    history = getattr(source, "history", None)
    if isinstance(history, History):
        return history
    if isinstance(source, str | PathLike):
        path = Path(source)
        if _is_sqlite(path):
            return _from_store_path(path, flow_id)
        return History.load(path)
    if callable(history) and callable(getattr(source, "flow_ids", None)):
        return _from_store(source, flow_id, repr(source))
    raise TypeError(
        f"cannot compare a {type(source).__name__}: pass a History, a SimulationRun, a history "
        "file, a SQLite store path or a (store, flow_id) pair"
    )


def _is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            return file.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except OSError:
        return False


def _from_store_path(path: Path, flow_id: str | None) -> History:
    from dexviz.engine import SQLiteStore

    store = SQLiteStore(path, readonly=True)
    try:
        return _from_store(store, flow_id, str(path))
    finally:
        store.close()


def _from_store(store: Any, flow_id: str | None, name: str) -> History:
    flow_ids = tuple(store.flow_ids())
    if flow_id is None:
        if len(flow_ids) != 1:
            listed = ", ".join(flow_ids[:20]) or "none"
            raise ValueError(f"{name} holds {len(flow_ids)} Flows; name one ({listed})")
        flow_id = flow_ids[0]
    if flow_id not in flow_ids:
        raise ValueError(f"{name} has no Flow {flow_id!r} (it holds: {', '.join(flow_ids[:20])})")
    history: History = store.history(flow_id)
    return history


def stored_flow_ids(path: Path) -> tuple[str, ...]:
    """The Flow ids a SQLite store holds, in its order."""
    from dexviz.engine import SQLiteStore

    store = SQLiteStore(path, readonly=True)
    try:
        return tuple(store.flow_ids())
    finally:
        store.close()


def is_sqlite(path: Path) -> bool:
    """Whether ``path`` is a SQLite database file (by its header)."""
    return _is_sqlite(path)
