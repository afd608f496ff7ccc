"""``dexviz history runs.db --flow ID``: read one Flow's history out of a SQLite store.

The database is opened read-only, so it can be read while an engine writes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dexviz.cli.common import CliError, UsageError

SQLITE_MAGIC = b"SQLite format 3\x00"


def is_sqlite(path: Path) -> bool:
    """Whether ``path`` is a SQLite database file (by its header)."""
    try:
        with path.open("rb") as file:
            return file.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except PermissionError:
        raise CliError(f"{path}: Permission denied (the file cannot be read)") from None
    except OSError:
        return False


def stored_history(path: Path, flow_id: str | None) -> Any:
    """The history of ``flow_id`` (or of the only Flow) in the SQLite store at ``path``."""
    from dexviz.engine.sqlite.sqlite_schema import StoreError
    from dexviz.engine.sqlite.sqlite_store import SQLiteStore

    try:
        store = SQLiteStore(path, readonly=True)
    except StoreError as error:
        raise CliError(str(error)) from None
    try:
        flow_ids = store.flow_ids()
        if flow_id is None:
            if len(flow_ids) != 1:
                listed = ", ".join(flow_ids[:20]) or "none"
                raise UsageError(
                    f"{path} holds {len(flow_ids)} Flows; pick one with --flow ({listed})"
                )
            flow_id = flow_ids[0]
        if flow_id not in flow_ids:
            raise UsageError(
                f"{path} has no Flow {flow_id!r} (it holds: {', '.join(flow_ids[:20])})"
            )
        try:
            return store.history(flow_id)
        except StoreError as error:
            raise CliError(str(error)) from None
    finally:
        store.close()
