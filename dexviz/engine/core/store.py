"""Store: where commits go. One commit is one transaction of one Flow's events.

Every state change the engine makes is described by the events of the commit that makes it
(writes, publications, consumption, returns, decisions), so a store that keeps the events can
rebuild the state; the in-memory store keeps them for the History.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from dexviz.history.event import Event
from dexviz.history.history import History


class Store(Protocol):
    """The interface every store implements (memory now; SQLite for durability later)."""

    def commit(self, flow_id: str, events: Sequence[Event]) -> None:
        """Persist ``events`` of ``flow_id`` atomically: all of them or none."""

    def history(self, flow_id: str) -> History:
        """Return every committed event of ``flow_id`` in order."""

    def flow_ids(self) -> tuple[str, ...]:
        """Return the ids of every Flow with committed events, in first-commit order."""


class MemoryStore:
    """Keeps commits in memory; a commit is a single list extension, so it is all-or-nothing."""

    def __init__(self) -> None:
        self._events: dict[str, list[Event]] = {}
        self.commits = 0

    def commit(self, flow_id: str, events: Sequence[Event]) -> None:
        """Append ``events`` to the Flow's log."""
        log = self._events.get(flow_id)
        if log is None:
            log = self._events[flow_id] = []
        log.extend(events)
        self.commits += 1

    def history(self, flow_id: str) -> History:
        """Return the Flow's events as a History."""
        return History(self._events.get(flow_id, ()))

    def flow_ids(self) -> tuple[str, ...]:
        """Return the Flow ids in first-commit order."""
        return tuple(self._events)

    def __repr__(self) -> str:
        return f"MemoryStore(flows={len(self._events)}, commits={self.commits})"
