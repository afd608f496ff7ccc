"""The history layer: events, their kinds, and the History object (standard library only)."""

from typing import TYPE_CHECKING

from dexviz._lazy_exports import lazy_exports

if TYPE_CHECKING:  # at run time each name loads its module on first use (PEP 562)
    from dexviz.history.event import Event
    from dexviz.history.history import History, HistoryFormatError
    from dexviz.history.kinds import SEMANTIC_KINDS, EventKind

__all__ = ["SEMANTIC_KINDS", "Event", "EventKind", "History", "HistoryFormatError"]

_HOME = {
    "event": "Event",
    "history": "History HistoryFormatError",
    "kinds": "SEMANTIC_KINDS EventKind",
}
"""Each public module of the package and the names it defines, space-separated."""

__getattr__, __dir__ = lazy_exports(globals(), _HOME)
